"""The typed metric parameter (:class:`Param`) of the metrics registry (:mod:`ragmeter.registry`).

It lives in a module of its own because the measure declarations of ``ragmeter trec`` need it
at import: importing the whole registry for it (three more dataclasses, whose creation is most
of an import's cost) lengthened the command's start (docs/retrieval.md#speed). The registry
re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Param"]


@dataclass(frozen=True)
class Param:
    """A typed metric parameter (``k`` of ``P@k``, ``gain`` of nDCG, ``profile`` of em)."""

    name: str
    type: str
    default: Any = None
    doc: str = ""
