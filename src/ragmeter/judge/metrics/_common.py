"""Shared pieces of the metric pipelines: inputs, outcomes, options, small formulas."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.judge.config import RubricDef
from ragmeter.records.judge import Sample  # below io, which builds it

__all__ = ["Options", "Outcome", "Part", "Sample", "blank", "f1_score", "single"]


@dataclass
class Part:
    """One output of a pipeline: status, detail and value (``None`` unless scored)."""

    status: str
    detail: str | None = None
    value: float | None = None


@dataclass
class Outcome:
    """What a pipeline gives for one sample and repeat."""

    parts: dict[str, Part]
    explanation: Any = None
    fields: dict[str, Any] = field(default_factory=dict)  # extra record keys (claim counts…)

    @property
    def status(self) -> str:
        """The first non-``ok`` status of the parts, in output order (docs/judge.md)."""
        for p in self.parts.values():
            if p.status != st.OK:
                return p.status
        return st.OK


def single(
    name: str,
    status: str,
    detail: str | None = None,
    value: float | None = None,
    explanation: Any = None,
    **fields: Any,
) -> Outcome:
    return Outcome(
        {name: Part(status, detail, value if status == st.OK else None)}, explanation, fields
    )


@dataclass
class Options:
    """Per-run metric options (from the judge configuration and the command line)."""

    relevance_questions: int = 3
    independent: bool = False
    per_chunk: bool = False
    entity_match: str = "normalized"
    rubrics: dict[str, RubricDef] = field(default_factory=dict)
    rubric_steps: dict[str, tuple[str, ...]] = field(default_factory=dict)
    embedder: Any = None
    embedder_error: str | None = None
    embed_lock: Any = None  # created inside the running loop


def blank(text: str | None) -> bool:
    """True for ``None`` or whitespace-only text."""
    return text is None or not str(text).strip()


def f1_score(recall: float, precision: float) -> float:
    """Harmonic mean, 0.0 when both are 0, computed as ``2 * (r * p) / (r + p)``.

    >>> f1_score(0.75, 0.8333333333333334)
    0.7894736842105262
    >>> f1_score(0.0, 0.0)
    0.0
    >>> f1_score(0.9, 0.6)
    0.7200000000000001
    """
    if recall + precision == 0:
        return 0.0
    return 2 * (recall * precision) / (recall + precision)


def batches(n: int, size: int) -> list[range]:
    """Consecutive ranges of at most ``size`` covering ``range(n)``.

    >>> [list(r) for r in batches(5, 2)]
    [[0, 1], [2, 3], [4]]
    """
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


def texts(items: Sequence[Any] | None) -> tuple[str, ...]:
    return tuple(str(t) for t in items) if items else ()
