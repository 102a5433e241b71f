"""The shared vocabulary of per-sample statuses (docs/conventions.md, "Statuses").

A spec adds a status only by adding it here. Rows whose status is in :data:`SCORED` carry a value
that enters means; every other row carries ``None`` and is counted, never averaged.
"""

from __future__ import annotations

from typing import Final

OK: Final = "ok"
MISSING_ZEROED: Final = "missing_zeroed"
NO_GOLD: Final = "no_gold"
NO_CLAIMS: Final = "no_claims"
PARSE_ERROR: Final = "parse_error"
TIMEOUT: Final = "timeout"
REFUSED: Final = "refused"
BUDGET_EXCEEDED: Final = "budget_exceeded"
NEEDS_LLM: Final = "needs_llm"
RESPONSE_ERROR: Final = "response_error"
SYSTEM_ERROR: Final = "system_error"

STATUSES: Final = (
    OK,
    MISSING_ZEROED,
    NO_GOLD,
    NO_CLAIMS,
    PARSE_ERROR,
    TIMEOUT,
    REFUSED,
    BUDGET_EXCEEDED,
    NEEDS_LLM,
    RESPONSE_ERROR,
    SYSTEM_ERROR,
)
"""Every status, in the order reports list them."""

SCORED: Final = frozenset({OK, MISSING_ZEROED})
"""Statuses whose value is defined and enters means."""

JUDGE_FAILURES: Final = frozenset({PARSE_ERROR, TIMEOUT, REFUSED, BUDGET_EXCEEDED, NEEDS_LLM})
"""Statuses meaning the LLM judge could not score the sample (docs/judge.md)."""

# ``system_error``: a live system under test (ragmeter.systems) raised, timed out or returned
# the wrong shape for this sample; the detail holds the reason, and a re-run calls it again.


def check(status: str) -> str:
    """Return ``status`` if it belongs to the vocabulary, else raise ``ValueError``.

    >>> check("ok")
    'ok'
    >>> check("nan")
    Traceback (most recent call last):
    ValueError: unknown status 'nan' (expected one of ok, missing_zeroed, no_gold, ...)
    """
    if status not in STATUSES:
        raise ValueError(
            f"unknown status {status!r} (expected one of {', '.join(STATUSES[:3])}, ...)"
        )
    return status
