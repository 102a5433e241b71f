"""What ``ragmeter.steps`` asks of an LLM judge (docs/steps.md).

The judge layer (``ragmeter.judge``) owns clients, caching, retries and prompts; its
``steps_judge(config)`` adapter implements :class:`StepsJudge`. Tests pass a stub. The steps
module only decides *when* to ask and *which keys* result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypedDict, runtime_checkable

__all__ = [
    "BLANK_INPUT_ERROR",
    "Claims",
    "JudgeCallError",
    "Judgement",
    "StepsJudge",
    "f1",
    "parse_claims",
]

BLANK_INPUT_ERROR = "The question of the reference or the actual answer is a blank string!"


class Judgement(TypedDict, total=False):
    """One judged value: ``value`` on success, else ``error``; ``reason`` and ``cost`` optional."""

    value: float | None
    error: str | None
    reason: str | None
    cost: float | None


class Claims(TypedDict, total=False):
    """Claim counts of answer correctness, or ``{"error": ...}``."""

    reference: int
    actual: int
    matching: int
    reason: str
    error: str


class JudgeCallError(Exception):
    """A judge call failed; the message (``"<status>: <detail>"``) becomes ``<name>_error``."""


@runtime_checkable
class StepsJudge(Protocol):
    """The judge interface the steps pipeline calls (implemented by ``ragmeter.judge``)."""

    supports_relevance: bool
    """False when the offline embedder (``ragmeter[semantic]``) is missing."""

    async def answer_relevance(self, question: str, answer: str) -> Judgement: ...

    async def answer_correctness(
        self, question: str, reference: str, answer: str
    ) -> Claims | str: ...

    async def context_recall(
        self, question: str, reference: str, contexts: list[str]
    ) -> Judgement: ...

    async def context_precision(
        self, question: str, reference: str, contexts: list[str]
    ) -> Judgement: ...

    async def complete(self, prompt: str) -> str:
        """Free text for custom evaluations; raises :class:`JudgeCallError` on failure."""
        ...


def f1(recall: float | None, precision: float | None) -> float | None:
    """Harmonic mean as upstream computes it: ``2 * (r * p) / (r + p)``.

    >>> f1(0.9, 0.6)
    0.7200000000000001
    >>> f1(0.0, 0.0), f1(None, 0.5)
    (0.0, None)
    """
    if recall is None or precision is None:
        return None
    recall, precision = float(recall), float(precision)
    if recall == 0.0 and precision == 0.0:
        return 0.0
    return 2 * (recall * precision) / (recall + precision)


def parse_claims(response: Claims | Mapping[str, Any] | str) -> tuple[dict[str, Any], str | None]:
    """Validate answer-correctness claim counts; returns ``(claims, error)``.

    ``response`` is a :class:`Claims` mapping or upstream's raw tab-separated text
    ``R<TAB>A<TAB>M<TAB>reason`` (extra fields ignored). ``claims`` holds whatever was parsed
    (the reason may survive an invalid count, as v5 reports it).

    >>> parse_claims("2\\t3\\t1\\treason\\textra")
    ({'reference': 2, 'actual': 3, 'matching': 1, 'reason': 'reason'}, None)
    >>> parse_claims("2\\t2\\treason")[1]
    'Expected 4 tab-separated values: 2\\t2\\treason'
    >>> parse_claims("1\\t2\\t-1\\tr")[1]
    'Invalid claims counts combination: 1\\t2\\t-1'
    """
    if isinstance(response, str):
        fields = response.split("\t")
        if len(fields) < 4:
            return {}, f"Expected 4 tab-separated values: {response}"
        fields = fields[:4]
        try:
            ref, act, match = (int(f) for f in fields[:3])
        except ValueError:
            return {"reason": fields[3]}, f"Claims counts should be ints: {fields}"
        claims: dict[str, Any] = {
            "reference": ref,
            "actual": act,
            "matching": match,
            "reason": fields[3],
        }
    else:
        if not isinstance(response, Mapping):
            return {}, f"Unexpected answer correctness result: {response!r}"
        if response.get("error"):
            return {}, str(response["error"])
        claims = dict(response)
        counts = [claims.get(k) for k in ("reference", "actual", "matching")]
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in counts):
            return {"reason": claims.get("reason")}, f"Claims counts should be ints: {counts}"
        ref, act, match = counts  # type: ignore[misc]
    if ref < 1 or act < 1 or match < 0 or match > ref or match > act:
        return (
            {"reason": claims.get("reason")},
            f"Invalid claims counts combination: {ref}\t{act}\t{match}",
        )
    return claims, None
