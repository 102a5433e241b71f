"""Gates (docs/runner.md, "Gates"): absolute thresholds and no-significant-regression rules.

A rule names a metric as ``task.metric``. An absolute rule compares the run's aggregate with
``min``/``max`` on the unrounded value. A no-regression rule fails when the run is significantly
worse than the baseline run (the paired test and correction of the ``compare`` block, at the
rule's alpha or ``compare.alpha``); "worse" follows the metric's direction in the registry, so
``grounded.under_refusal`` regresses when it goes up.

A rule whose metric has no value (its task was skipped or not configured, or every sample has a
non-``ok`` status) is SKIP with the reason and does not fail the run, unless gates are strict
(``gates.strict: true`` or ``--strict-gates``), which turns SKIP into FAIL.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.result import Aggregate
from ragmeter.warnings import renamed_attributes

__all__ = [
    "GATE_PROFILES",
    "GateOutcome",
    "GateReport",
    "evaluate_rules",
    "metric_value",
    "parse_rule",
]

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


def _heritage() -> tuple[tuple[str, float], ...]:
    # the heritage targets table (docs/extraction.md), without its unsourced "state of the art"
    return (
        ("ner.overall.strict.f1", 0.85),
        ("ner.overall.type.f1", 0.90),
        ("classification.accuracy", 0.80),
        ("classification.macro.f1", 0.75),
        ("linking.ranking.hits@1", 0.70),
        ("linking.ranking.mrr", 0.75),
        ("linking.nil.f1", 0.65),
        ("retrieval.nDCG@10", 0.60),
        ("retrieval.RR", 0.55),
        ("judge.faithfulness", 0.80),
        ("judge.answer_relevance", 0.75),
    )


def _grounded() -> tuple[tuple[str, float], ...]:
    # the defaults of `ragmeter grounded` (docs/answers.md), read from the scorer itself
    from ragmeter.answers.grounded import DEFAULT_GATES
    from ragmeter.answers.grounded_report import parse_gates

    return tuple((f"grounded.{g.key}", g.threshold) for g in parse_gates(DEFAULT_GATES))


def _kind(metric: str) -> str:
    """``min`` (a floor) or ``max`` (a ceiling): the metric's direction in the registry."""
    from ragmeter import registry

    try:
        direction = registry.resolve(metric).definition.direction
    except registry.UnknownMetricError:  # the engine is not in this build: the rule will SKIP
        direction = "higher"
    return "max" if direction == "lower" else "min"


class _Profiles(Mapping[str, tuple[tuple[str, str, float], ...]]):
    """Profiles built on first use: their kinds need the registry, their sources the engines."""

    def __init__(self, sources: Mapping[str, Callable[[], tuple[tuple[str, float], ...]]]):
        self._sources = dict(sources)
        self._built: dict[str, tuple[tuple[str, str, float], ...]] = {}

    def __getitem__(self, name: str) -> tuple[tuple[str, str, float], ...]:
        if name not in self._built:
            source = self._sources[name]
            self._built[name] = tuple((_kind(m), m, t) for m, t in source())
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


GATE_PROFILES: Mapping[str, tuple[tuple[str, str, float], ...]] = _Profiles(
    {"heritage": _heritage, "grounded": _grounded}
)
"""Built-in gate profiles: (kind, task.metric, threshold)."""


# "profile" also names the answer-normalisation and extraction hierarchy profiles
__getattr__ = renamed_attributes(__name__, {"PROFILES": "GATE_PROFILES"}, globals())


@dataclass(frozen=True)
class GateOutcome:
    """One rule applied to one run."""

    rule: str
    kind: str
    metric: str
    system: str
    verdict: str
    value: float | None = None
    threshold: float | None = None
    p_value: float | None = None
    baseline: str | None = None
    baseline_run_id: str | None = None
    reason: str | None = None
    source: str = "rules"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GateReport:
    outcomes: list[GateOutcome]
    strict: bool = False

    @property
    def passed(self) -> bool:
        return all(o.verdict != FAIL for o in self.outcomes)

    def status(self, system: str | None = None) -> str | None:
        """``pass``/``fail`` for one system (or all), ``None`` when no rule applies."""
        mine = [o for o in self.outcomes if system is None or o.system == system]
        if not mine:
            return None
        return "fail" if any(o.verdict == FAIL for o in mine) else "pass"

    def counts(self) -> dict[str, int]:
        out = {PASS: 0, FAIL: 0, SKIP: 0}
        for o in self.outcomes:
            out[o.verdict] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "strict": self.strict,
            "counts": self.counts(),
            "rules": [o.to_dict() for o in self.outcomes],
        }


def _fmt(x: float) -> str:
    return f"{x:g}"


def _skip(strict: bool) -> str:
    return FAIL if strict else SKIP


def _worse(direction: str, diff: float) -> bool:
    return diff > 0 if direction == "lower" else diff < 0


def metric_value(
    rule: Any,
    aggregates: Mapping[str, Mapping[str, Aggregate]],
    task_reasons: Mapping[str, str],
) -> tuple[Aggregate | None, str | None]:
    """The aggregate a rule reads, or why it has none (the reason of a SKIP).

    ``rule`` needs ``task``, ``canonical`` (``None``: the engine is not in this build) and
    ``metric`` (the name as written). Returns ``(aggregate, None)`` when there is a value, else
    ``(aggregate or None, reason)``. ``ragmeter.testing`` applies the same rule, so a pytest
    check and ``ragmeter gate`` never disagree about a missing value.
    """
    if rule.canonical is None:
        return None, f"the {rule.task} engine is not part of this build of ragmeter"
    if rule.task not in aggregates:
        return None, task_reasons.get(rule.task, f"task {rule.task} was not evaluated")
    agg = aggregates[rule.task].get(rule.canonical)
    if agg is None:
        return None, f"{rule.metric} was not computed"
    if agg.value is None:
        why = task_reasons.get(rule.task) or agg.reason or "undefined"
        return agg, f"{rule.metric} has no value ({why})"
    return agg, None


def evaluate_rules(
    rules: Sequence[Any],
    *,
    system: str,
    aggregates: Mapping[str, Mapping[str, Aggregate]],
    task_reasons: Mapping[str, str],
    comparisons: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    baseline_system: str | None = None,
    baseline_run_id: str | None = None,
    alpha: float = 0.05,
    strict: bool = False,
) -> list[GateOutcome]:
    """Apply ``rules`` (:class:`ragmeter.runner.config.GateRule`) to one system's run.

    ``aggregates`` are the run's overall values by task and canonical metric; ``task_reasons``
    says why a task has no values (skipped, not configured); ``comparisons`` maps
    ``(task, canonical)`` to the run-vs-baseline comparison (``mean_diff``, ``p_adjusted``,
    ``p_value``, ``degenerate``, ``reason``).
    """
    out: list[GateOutcome] = []
    for rule in rules:
        if rule.systems is not None and system not in rule.systems:
            continue
        if rule.kind == "no_regression" and rule.baseline == system:
            continue  # the baseline cannot regress against itself
        common = {
            "rule": rule.text,
            "kind": rule.kind,
            "metric": rule.metric,
            "system": system,
            "source": rule.source,
        }

        def skip(reason: str, common: dict[str, Any] = common, rule: Any = rule) -> GateOutcome:
            return GateOutcome(
                **common,
                verdict=_skip(strict),
                threshold=rule.threshold,
                baseline=rule.baseline,
                reason=reason + (" (strict gates: SKIP counts as FAIL)" if strict else ""),
            )

        if rule.canonical is None or rule.task not in aggregates:
            out.append(skip(str(metric_value(rule, aggregates, task_reasons)[1])))
            continue
        if rule.kind in ("min", "max"):
            agg, missing = metric_value(rule, aggregates, task_reasons)
            if missing is not None or agg is None:
                out.append(skip(str(missing)))
                continue
            value = float(agg.value)  # type: ignore[arg-type]
            ok = value >= rule.threshold if rule.kind == "min" else value <= rule.threshold
            rel = ">=" if rule.kind == "min" else "<="
            out.append(
                GateOutcome(
                    **common,
                    verdict=PASS if ok else FAIL,
                    value=value,
                    threshold=rule.threshold,
                    reason=None if ok else f"{value:.6g} is not {rel} {_fmt(rule.threshold)}",
                )
            )
            continue
        comp = (comparisons or {}).get((rule.task, rule.canonical))
        if comp is None:
            out.append(skip(f"no comparison of {rule.metric} with {rule.baseline}"))
            continue
        if comp.get("p_value") is None and not comp.get("degenerate"):
            out.append(skip(comp.get("reason") or f"{rule.metric} could not be tested"))
            continue
        level = rule.alpha if rule.alpha is not None else alpha
        p = comp.get("p_adjusted", comp.get("p_value"))
        p = 1.0 if p is None else float(p)
        diff = float(comp.get("mean_diff") or 0.0)
        regressed = _worse(rule.direction, diff) and p <= level * (1 + 1e-9)
        out.append(
            GateOutcome(
                **common,
                verdict=FAIL if regressed else PASS,
                value=diff,
                threshold=level,
                p_value=p,
                baseline=rule.baseline,
                baseline_run_id=baseline_run_id or comp.get("baseline_run_id"),
                reason=(
                    f"significantly worse than {rule.baseline}: difference {diff:+.4g}, "
                    f"p = {p:.4g} <= {level:g}"
                )
                if regressed
                else None,
            )
        )
    return out


_RULE = re.compile(r"^\s*(?P<metric>[^<>=\s]+)\s*(?P<op>>=|<=)\s*(?P<value>\S+)\s*$")


def parse_rule(text: str) -> dict[str, Any]:
    """A ``--rule`` argument as a config rule.

    >>> parse_rule("retrieval.nDCG@10>=0.6")
    {'metric': 'retrieval.nDCG@10', 'min': 0.6}
    >>> parse_rule("grounded.under_refusal <= 0.05")
    {'metric': 'grounded.under_refusal', 'max': 0.05}
    >>> parse_rule("no_regression:retrieval.nDCG@10,answers.f1")
    {'no_regression': {'metrics': ['retrieval.nDCG@10', 'answers.f1']}}
    """
    stripped = text.strip()
    if stripped.startswith("no_regression:"):
        metrics = [m.strip() for m in stripped.split(":", 1)[1].split(",") if m.strip()]
        if not metrics:
            raise UsageError(f"rule {text!r} names no metric", command="gate")
        return {"no_regression": {"metrics": metrics}}
    m = _RULE.match(stripped)
    if not m:
        raise UsageError(
            f"cannot read rule {text!r} (expected TASK.METRIC>=X, TASK.METRIC<=X or "
            "no_regression:TASK.METRIC[,...])",
            command="gate",
        )
    try:
        value = float(m["value"])
    except ValueError:
        raise UsageError(
            f"threshold {m['value']!r} of rule {text!r} is not a number", command="gate"
        ) from None
    if not math.isfinite(value):
        # nan compares false with everything and inf (or 1e309) can never be met: a typo, not
        # a gate, so it is bad input (exit 2) rather than a failed gate (exit 1)
        raise UsageError(
            f"threshold {m['value']!r} of rule {text!r} is not a finite number (expected e.g. 0.6)",
            command="gate",
        )
    return {"metric": m["metric"], ("min" if m["op"] == ">=" else "max"): value}
