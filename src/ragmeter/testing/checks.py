"""Checks: one expectation applied to one value, and the verdict of a helper call.

A helper checks every expectation, then ends once: it fails listing every miss, or skips when
the only problem is a missing value, or passes. Missing values follow the gate rule of
``ragmeter gate``: SKIP with the reason, FAIL in strict mode (``--ragmeter-strict``,
``ragmeter_strict``, the config's ``gates.strict``) or when ``RAGMETER_REQUIRE`` names the
requirement the value lacks (``llm`` for the judge, ``semantic`` for embeddings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.testing import _context

__all__ = ["FAIL", "PASS", "SKIP", "Outcome", "conclude", "missing_reason", "statuses_text"]

PASS, FAIL, SKIP = "pass", "FAIL", "SKIP"

# a missing value of these tasks lacks this requirement (RAGMETER_REQUIRE turns it into a failure)
REQUIREMENT = {"judge": "llm", "semantic": "semantic"}
_SCORED = ("ok", "missing_zeroed")


@dataclass
class Outcome:
    """How a helper call ends: ``failure`` (message) or ``skip`` (reason) or neither."""

    failure: str | None = None
    skip: str | None = None


def statuses_text(counts: Mapping[str, int] | None) -> str:
    """``ok 200`` or ``ok 118 needs_llm 2``."""
    return " ".join(f"{k} {v}" for k, v in (counts or {}).items())


def missing_reason(metric: str, gate_reason: str, agg: Any = None, note: str | None = None) -> str:
    """Why ``metric`` has no value, with the sample statuses when the runner kept them.

    >>> missing_reason("judge.faithfulness", "task judge skipped: LLM metrics skipped",
    ...     None, None)
    'judge.faithfulness has no value (task judge skipped: LLM metrics skipped)'
    """
    counts = dict(getattr(agg, "status_counts", None) or {})
    total = sum(counts.values())
    parts = [f"{s}: {c} of {total} samples" for s, c in counts.items() if s not in _SCORED]
    if parts:
        hint = note.split(": ", 1)[1] if note and ": " in note else note
        if hint:
            parts.append(hint.rstrip("."))
        return f"{metric} has no value ({'; '.join(parts)})"
    if gate_reason.startswith(metric):
        return gate_reason
    return f"{metric} has no value ({gate_reason})"


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def check_table(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """The aligned table under a failure's first line."""
    rows = [("system", "metric", "value", "expected", "verdict", "n", "statuses")]
    for c in checks:
        rows.append(
            (
                str(c["system"]),
                str(c["metric"]),
                str(c["shown"]),
                str(c["expected"]),
                str(c["verdict"]),
                "" if c.get("n") is None else str(c["n"]),
                statuses_text(c.get("status_counts")),
            )
        )
    return _table(rows)


def _harden(checks: list[dict[str, Any]], strict: bool) -> None:
    """Missing values that strict mode or RAGMETER_REQUIRE turn into failures."""
    required = _context.required()
    for c in checks:
        if c["verdict"] != SKIP:
            continue
        need = c.get("requirement")
        if strict:
            c["verdict"] = FAIL
            c["reason"] = f"{c['reason']} (strict: a missing value fails)"
        elif need and need in required:
            c["verdict"] = FAIL
            c["reason"] = f"{c['reason']} (RAGMETER_REQUIRE={need})"


def conclude(
    checks: list[dict[str, Any]],
    *,
    label: str,
    strict: bool,
    results_dir: str | None,
    headline: Any = None,
    table: Any = check_table,
) -> Outcome:
    """Record every check on the running test, then say how the helper call ends."""
    _harden(checks, strict)
    for c in checks:
        _context.record({k: v for k, v in c.items() if k != "requirement"})
    failed = [c for c in checks if c["verdict"] == FAIL]
    missing = [c for c in checks if c["verdict"] == SKIP]
    if failed:
        first = (
            headline(failed, checks)
            if headline is not None
            else (
                f"{len(failed)} of {len(checks)} checks failed for {label}: "
                + "; ".join(
                    c["reason"]
                    if c.get("value") is None
                    else f"{c['metric']} = {c['shown']} (expected {c['expected']})"
                    for c in failed
                )
            )
        )
        lines = [first, *table(checks)]
        if results_dir:
            lines.append(f"results: {results_dir.rstrip('/')}/")
        return Outcome(failure="\n".join(lines))
    if missing:
        return Outcome(skip="ragmeter: " + "; ".join(c["reason"] for c in missing))
    return Outcome()
