"""Gates and the report of the grounded-QA scorer (:mod:`ragmeter.answers.grounded`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.errors import UsageError
from ragmeter.views import ReportViews

__all__ = ["Gate", "GroundedReport", "GroundedWarning", "parse_gates"]

# gate name → output key; a gate is a floor or a ceiling by the metric's direction in the
# registry (under_refusal and over_refusal are "lower")
_GATES = {
    "precision": "precision",
    "chr": "chr",
    "under": "under_refusal",
    "over": "over_refusal",
    "recall": "recall@k",
}


def _at_least(key: str) -> bool:
    """Whether the gate on output ``key`` passes at or above its threshold (else at or below)."""
    from ragmeter import registry

    return registry.resolve(key, task="grounded").definition.direction != "lower"


_OUTPUT_KEYS = ("precision", "chr", "under_refusal", "over_refusal", "recall@k")


@dataclass(frozen=True)
class GroundedWarning:
    """A diagnostic that did not stop scoring: its kind, the qids concerned and a message."""

    kind: str
    qids: tuple[str, ...]
    message: str

    def line(self) -> str:
        return f"warning: {self.kind}: {self.message}"


@dataclass(frozen=True)
class Gate:
    name: str
    key: str
    threshold: float
    text: str
    at_least: bool

    def check(self, value: float) -> bool:
        return value >= self.threshold if self.at_least else value <= self.threshold


def parse_gates(gates: str | Mapping[str, Any] | None) -> list[Gate]:
    """Gates from ``"precision=0.80,chr=0.75,under=0.05,over=0.10"`` (names and values stripped).

    >>> [(g.name, g.threshold, g.text) for g in parse_gates(" precision = 0.8 ,recall=0.5")]
    [('precision', 0.8, '0.8'), ('recall', 0.5, '0.5')]
    """
    if gates is None:
        return []
    if isinstance(gates, Mapping):
        items = [(str(k), str(v)) for k, v in gates.items()]
    else:
        items = []
        for piece in str(gates).split(","):
            if not piece.strip():
                continue
            name, eq, value = piece.partition("=")
            if not eq:
                raise UsageError(
                    f"gate '{piece.strip()}' has no '=' (expected e.g. precision=0.80)"
                )
            items.append((name, value))
    out: list[Gate] = []
    seen: set[str] = set()
    for name, value in items:
        name, value = name.strip(), value.strip()
        if name not in _GATES:
            raise UsageError(
                f"unknown gate '{name}' (expected precision, chr, under, over or recall)"
            )
        if name in seen:
            raise UsageError(f"gate '{name}' is given twice")
        seen.add(name)
        try:
            threshold = float(value)
        except ValueError:
            threshold = float("nan")
        if not (threshold == threshold and abs(threshold) != float("inf")):
            raise UsageError(f"gate {name}={value!r} is not a number (expected e.g. {name}=0.80)")
        key = _GATES[name]
        out.append(Gate(name, key, threshold, value, _at_least(key)))
    return out


@dataclass
class GroundedReport(ReportViews):
    """The scorer's output (``output``: the CLI's keys in order, rounded), with explanations.

    ``exact`` holds the unrounded scores the gates were checked on, ``items`` one ``--details``
    record per gold item, ``warnings`` the quirks found (kind, qids, message).
    """

    output: dict[str, Any]
    exact: dict[str, float]
    passed: bool
    items: list[dict[str, Any]]
    warnings: list[GroundedWarning]
    gates: list[Gate]
    k: int
    refusal_token: str
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        """stdout: ``json.dumps(output, indent=2)``, as the reference scorer prints it."""
        return json.dumps(self.output, indent=2)

    def failed_gates(self) -> list[tuple[Gate, float]]:
        return [(g, self.exact[g.key]) for g in self.gates if not g.check(self.exact[g.key])]

    def to_result(self):
        """A :class:`~ragmeter.Result` (task ``grounded``).

        Per gold item, one row for each score whose denominator holds it (precision and chr:
        shipped answers; under_refusal: unanswerable items; over_refusal and recall@k: answerable
        items), valued 1.0 or 0.0, status ``ok``, with the item's ``--details`` record as
        ``detail``; aggregates are the unrounded scores with ``n`` = the denominator.
        """
        import pyarrow as pa

        from ragmeter.result import SAMPLES_SCHEMA, Aggregate, Result

        member = {
            "precision": lambda it: it["answered"],
            "chr": lambda it: it["answered"],
            "under_refusal": lambda it: not it["answerable"],
            "over_refusal": lambda it: it["answerable"],
            "recall@k": lambda it: it["answerable"],
        }
        value = {
            "precision": lambda it: "precision_tp" in it["counted_as"],
            "chr": lambda it: "chr_hit" in it["counted_as"],
            "under_refusal": lambda it: "under_refusal" in it["counted_as"],
            "over_refusal": lambda it: "over_refusal" in it["counted_as"],
            "recall@k": lambda it: bool(it["recall_hit"]),
        }
        items = sorted(self.items, key=lambda it: it["qid"])
        cols: dict[str, list[Any]] = {name: [] for name in SAMPLES_SCHEMA.names}
        aggregates = {}
        for key in _OUTPUT_KEYS:
            rows = [it for it in items if member[key](it)]
            for it in rows:
                cols["id"].append(it["qid"])
                cols["metric"].append(key)
                cols["value"].append(1.0 if value[key](it) else 0.0)
                cols["status"].append(st.OK)
                cols["detail"].append(json.dumps(it, ensure_ascii=False))
            reason = None
            if not rows:
                reason = (
                    "no answers shipped: the reference scorer defines it as 1.0"
                    if key in ("precision", "chr")
                    else "empty denominator: the reference scorer defines it as 0.0"
                )
            aggregates[key] = Aggregate(
                self.exact[key], len(rows), {st.OK: len(rows)} if rows else {}, reason=reason
            )
        table = pa.Table.from_pydict(cols, schema=SAMPLES_SCHEMA)
        metadata = {
            "k": self.k,
            "refusal_token": self.refusal_token,
            "gates": {g.name: g.text for g in self.gates},
            "pass": self.passed,
            "counts": dict(self.counts),
            "grounded_warnings": [
                {"kind": w.kind, "qids": list(w.qids), "message": w.message} for w in self.warnings
            ],
        }
        return Result(
            "grounded",
            table,
            aggregates,
            metadata=metadata,
            warnings=[w.line() for w in self.warnings],
        )
