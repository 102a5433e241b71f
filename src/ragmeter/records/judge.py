"""The judged sample: what the judge readers in ``ragmeter.io`` build and the judge scores.

It lives below both so ``ragmeter.io`` never imports ``ragmeter.judge``;
``ragmeter.judge.metrics._common.Sample`` is this same class. Input keys: docs/judge.md.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Sample"]


@dataclass(frozen=True)
class Sample:
    """One judged sample (the input keys of docs/judge.md)."""

    id: str
    question: str | None = None
    answer: str | None = None
    reference: str | None = None
    contexts: tuple[str, ...] | None = None
    context_ids: tuple[str | None, ...] | None = None
    reference_contexts: tuple[str, ...] | None = None
    template_id: str | None = None
    line: int | None = None
