"""The named choices of the annotation loaders and of :func:`ragmeter.records.validate`.

Each list has one home here: the loaders and the validator check values against these tuples
and ``ragmeter ner`` offers exactly them. They live in this import-light module because the
loaders (:mod:`ragmeter.io.brat`, :mod:`ragmeter.io.annotations`) load numpy, and the command
line reads its choices every time it starts. Each ``Literal`` is the type; its tuple is derived
from it, so the two cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

__all__ = [
    "DISCONTINUOUS",
    "DUPLICATES",
    "OFFSET_UNITS",
    "ON_OFFSET_MISMATCH",
    "Discontinuous",
    "Duplicates",
    "OffsetUnit",
    "OnMismatch",
    "expected",
]

OnMismatch = Literal["error", "skip", "relocate"]
"""A span whose surface does not match the text: raise, drop it, or search for the surface."""
ON_OFFSET_MISMATCH: tuple[OnMismatch, ...] = get_args(OnMismatch)

OffsetUnit = Literal["codepoint", "utf16", "utf8"]
"""The unit of character offsets in BRAT and heritage JSON files."""
OFFSET_UNITS: tuple[OffsetUnit, ...] = get_args(OffsetUnit)

Discontinuous = Literal["span", "fragments", "error"]
"""A discontinuous BRAT span: one span with fragments, one span per fragment, or an error."""
DISCONTINUOUS: tuple[Discontinuous, ...] = get_args(Discontinuous)

Duplicates = Literal["dedupe", "keep", "error"]
"""Two identical spans in a document: keep one, keep both, or raise."""
DUPLICATES: tuple[Duplicates, ...] = get_args(Duplicates)


def expected(allowed: Sequence[str], *, quote: bool = True) -> str:
    """The allowed values as the error messages list them.

    >>> expected(("a", "b", "c")), expected(("a", "b"), quote=False)
    ("'a', 'b' or 'c'", 'a or b')
    """
    shown = [f"'{v}'" if quote else v for v in allowed]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
