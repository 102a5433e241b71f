"""The checks behind ``assert_metrics``, ``assert_gates`` and ``assert_no_regression``.

No evaluation logic lives here: values come from the runner's Results, a missing value is
judged by :func:`ragmeter.runner.gates.metric_value` (the gate rule), gates and no-regression
verdicts by :func:`ragmeter.runner.gates.evaluate_rules`, and the paired test by the runner's
comparison code, so a test and ``ragmeter gate`` agree on every rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter import registry
from ragmeter.errors import UsageError
from ragmeter.result import Result
from ragmeter.runner.gates import metric_value
from ragmeter.testing.checks import (
    FAIL,
    PASS,
    REQUIREMENT,
    SKIP,
    Outcome,
    conclude,
    missing_reason,
)
from ragmeter.testing.runset import RunSet, SystemResult
from ragmeter.testing.thresholds import format_value, parse_threshold

__all__ = ["gates_outcome", "metrics_outcome"]

_VERDICT = {"PASS": PASS, "FAIL": FAIL, "SKIP": SKIP}


def as_system(result: Any, system: str | None) -> SystemResult:
    """A SystemResult from what a test holds: a SystemResult, RunSet, EvaluationResult or Result."""
    if isinstance(result, SystemResult):
        if system is not None and system != result.name:
            raise UsageError(f"system={system!r} does not match the result of {result.name!r}")
        return result
    if isinstance(result, RunSet):
        return result.system(system)
    if isinstance(result, Result):
        name = system or str(result.metadata.get("system") or result.task)
        return SystemResult(name, None, {result.task: result}, {result.task: result.aggregates}, {})
    if hasattr(result, "systems") and hasattr(result, "gates") and hasattr(result, "config"):
        saved = getattr(result, "saved", {}) or {}
        return RunSet(
            result, results_dir=saved.get("results_dir"), store=saved.get("store")
        ).system(system)
    raise UsageError(
        f"cannot check a {type(result).__name__} (expected a ragmeter Result, a system's result "
        "from ragmeter_run / ragmeter_result, or an evaluation)"
    )


def _resolve(name: Any, default_task: str | None) -> registry.ResolvedMetric:
    if not isinstance(name, str):
        raise UsageError(f"metric name {name!r} is not a string (expected task.metric)")
    if "." not in name and default_task is not None:
        return registry.resolve(name, task=default_task)
    from ragmeter.runner.tasks import task_names

    task = name.partition(".")[0]
    if default_task is not None and task not in task_names():
        return registry.resolve(name, task=default_task)
    return registry.resolve(name)


@dataclass(frozen=True)
class _Lookup:
    task: str
    canonical: str
    metric: str


def metrics_outcome(
    result: Any,
    expected: Mapping[str, Any],
    *,
    system: str | None = None,
    stratum: Mapping[str, Any] | None = None,
    use: str = "value",
    strict: bool | None = None,
) -> Outcome:
    """Check every expectation of ``expected`` against one system's aggregates."""
    if not isinstance(expected, Mapping) or not expected:
        raise UsageError(
            "expected must be a non-empty dict of task.metric -> threshold, "
            "e.g. {'retrieval.nDCG@10': '>=0.42'}"
        )
    if use not in ("value", "ci"):
        raise UsageError(f"use={use!r} is not known (expected 'value' or 'ci')")
    subject = as_system(result, system)
    single = next(iter(subject.results)) if len(subject.results) == 1 else None
    plain = isinstance(result, Result)
    aggregates, reasons = (
        subject.strata_aggregates(stratum) if stratum else (subject.aggregates, subject.reasons)
    )
    checks: list[dict[str, Any]] = []
    for name, spec in expected.items():
        hit = _resolve(name, single if plain else None)
        threshold = parse_threshold(str(name), spec)
        kept = subject.results.get(hit.task)  # a skipped task (judge) keeps its statuses
        computed = aggregates.get(hit.task) or (kept.aggregates if kept is not None else None)
        if computed is not None and hit.canonical not in computed:
            known = list(computed)
            close = registry.suggest(hit.canonical, known, n=3)
            raise UsageError(
                f"{name} is not computed for {subject.name} (computed {hit.task} metrics: "
                f"{', '.join(known)}; add it to tasks.{hit.task} in the config)"
                + (
                    f"; did you mean {', '.join(repr(f'{hit.task}.{c}') for c in close)}?"
                    if close
                    else ""
                )
            )
        agg, why = metric_value(_Lookup(hit.task, hit.canonical, str(name)), aggregates, reasons)
        if agg is None and computed is not None and not stratum:
            agg = computed.get(hit.canonical)
        check: dict[str, Any] = {
            "system": subject.name,
            "metric": str(name),
            "expected": threshold.text,
            "value": None,
            "n": getattr(agg, "n", None),
            "status_counts": dict(getattr(agg, "status_counts", None) or {}),
            "run_id": subject.run_id,
            **(subject.runset.check_fields() if subject.runset is not None else {}),
            "config": subject.runset.config_path if subject.runset else None,
            "results_dir": subject.results_dir,
            "requirement": REQUIREMENT.get(hit.task),
        }
        if why is not None or agg is None:
            note = subject.runset.task_note(subject.name, hit.task) if subject.runset else None
            check.update(
                verdict=SKIP, shown="-", reason=missing_reason(str(name), str(why), agg, note)
            )
            checks.append(check)
            continue
        value = agg.value
        if not isinstance(value, (int, float)):
            raise UsageError(f"{name} is not a number ({value!r}); it cannot be compared")
        value = float(value)
        if use == "ci":
            if agg.ci_low is None or agg.ci_high is None:
                raise UsageError(
                    f"use='ci': {name} of {subject.name} has no confidence interval (the runner "
                    "adds a 95% bootstrap CI to sample-level metrics when ragmeter.stats is "
                    "installed; set compare.ci in the config to choose the method, or use "
                    "use='value')"
                )
            if threshold.op in ("approx", "=="):
                raise UsageError(f"use='ci' cannot check {name} against {threshold.text}")
            ok = threshold.check_interval(agg.ci_low, agg.ci_high)
            floor, ceiling = threshold.sides
            shown_value = agg.ci_low if floor and not ceiling else agg.ci_high
            if floor and ceiling:
                shown = f"[{format_value(agg.ci_low)}, {format_value(agg.ci_high)}]"
            else:
                shown = f"{'lower' if floor else 'upper'} {format_value(shown_value, threshold)}"
        else:
            ok = threshold.check(value)
            shown = format_value(value, threshold)
        check.update(
            value=value,
            shown=shown,
            verdict=PASS if ok else FAIL,
            reason=None if ok else f"{name} = {shown} (expected {threshold.text})",
        )
        if use == "ci":
            check["ci"] = [agg.ci_low, agg.ci_high]
        checks.append(check)
    label = subject.name + (
        f" ({', '.join(f'{k}={v}' for k, v in stratum.items())})" if stratum else ""
    )
    strict_now = _strict(strict, subject)
    return conclude(checks, label=label, strict=strict_now, results_dir=subject.results_dir)


def _strict(strict: bool | None, subject: SystemResult | RunSet | None) -> bool:
    from ragmeter.testing import _context

    if strict is not None:
        return strict
    return _context.session_strict() or bool(subject is not None and subject.strict)


def _runset(run: Any) -> RunSet:
    if isinstance(run, RunSet):
        return run
    if isinstance(run, SystemResult) and run.runset is not None:
        return run.runset
    if hasattr(run, "gates") and hasattr(run, "config") and hasattr(run, "systems"):
        saved = getattr(run, "saved", {}) or {}
        return RunSet(run, results_dir=saved.get("results_dir"), store=saved.get("store"))
    raise UsageError(
        f"cannot gate a {type(run).__name__} (expected ragmeter_run, a RunSet or an evaluation)"
    )


def _expected_text(o: Any) -> str:
    if o.kind == "min":
        return f">={o.threshold:g}"
    if o.kind == "max":
        return f"<={o.threshold:g}"
    return f"no regression vs {o.baseline}"


def gate_check(o: Any, runset: RunSet) -> dict[str, Any]:
    """One gate outcome as a check record."""
    metric = o.metric if o.kind != "no_regression" else f"no_regression[{o.baseline}]:{o.metric}"
    task = o.metric.partition(".")[0]
    shown = "-"
    if o.value is not None:
        shown = f"{o.value:+.4g}" if o.kind == "no_regression" else format_value(o.value)
    if o.verdict == "SKIP" or (o.value is None and o.verdict == "FAIL"):
        reason = o.reason or "no value"
        if not reason.startswith(o.metric) and o.kind != "no_regression":
            reason = f"{o.metric} has no value ({reason})"
    else:
        reason = o.reason
    return {
        "system": o.system,
        "metric": metric,
        "expected": _expected_text(o),
        "value": o.value,
        "shown": shown,
        "verdict": _VERDICT[o.verdict],
        "n": None,
        "status_counts": {},
        "p_value": o.p_value,
        "reason": reason,
        "rule": o.rule,
        "run_id": runset.run_ids.get(o.system),
        **runset.check_fields(),
        "config": runset.config_path,
        "results_dir": runset.results_dir,
        "requirement": REQUIREMENT.get(task),
    }


def gate_outcomes(runset: RunSet, strict: bool) -> list[Any]:
    """The config's gate outcomes, recomputed when the strictness differs from the run's."""
    if strict == runset.gates.strict:
        return list(runset.gates.outcomes)
    return list(runset.evaluation.gate(strict=strict).outcomes)


def gates_outcome(run: Any, *, system: str | None = None, strict: bool | None = None) -> Outcome:
    """Every gate rule of the config, for every system or one."""
    runset = _runset(run)
    if system is not None:
        runset.system(system)  # a usage error for an unknown name
    strict_now = _strict(strict, runset)
    outcomes = [o for o in gate_outcomes(runset, strict_now) if system in (None, o.system)]
    if not outcomes:
        raise UsageError(
            f"{runset.config_path or 'the config'} has no gate rules"
            + (f" for {system}" if system else "")
            + " (expected a gates block with rules or a profile)"
        )
    checks = [gate_check(o, runset) for o in outcomes]

    def headline(failed: list[dict[str, Any]], all_checks: list[dict[str, Any]]) -> str:
        return f"{len(failed)} of {len(all_checks)} gate rules failed: " + "; ".join(
            f"{c['system']}: {c['rule']} ({c['reason']})" for c in failed
        )

    return conclude(
        checks,
        label=system or "every system",
        strict=strict_now,
        results_dir=runset.results_dir,
        headline=headline,
    )
