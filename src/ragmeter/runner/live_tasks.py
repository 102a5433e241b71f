"""Tasks of live systems in the runner: which tasks a live system has, and evaluating a task
when some of its units' calls failed (those units become ``system_error`` rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragmeter import status as st
from ragmeter.datasets.views import Unit
from ragmeter.result import Aggregate
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.strata import stratify, unit_strata
from ragmeter.runner.tasks import TaskContext
from ragmeter.store.records import SampleRecord
from ragmeter.systems.protocol import task_method
from ragmeter.systems.runner import add_system_errors
from ragmeter.systems.session import SystemCalls

__all__ = [
    "failed_units",
    "has_task",
    "live_skip_reason",
    "nothing_written",
    "with_system_errors",
]


def has_task(task: str, adapter: Any, system: Any, outputs: Mapping[str, Any], calls: Any) -> bool:
    """Whether a system is evaluated on ``task``: output files from the config for it, or a
    live method that serves it (even when every call failed)."""
    files = {k for k, v in system.outputs.model_dump().items() if v is not None}
    if any(k in files for k in adapter.outputs):
        return adapter.has_outputs(outputs)
    if calls is None:
        return False
    method = task_method(task)
    return method is not None and (method in calls.results or bool(calls.errors.get(method)))


def live_skip_reason(task: str, name: str, live: Any) -> str | None:
    """Why a live system is not evaluated on ``task``: it lacks the method (``None`` for a
    system that is not live, or a task no method serves)."""
    method = task_method(task)
    if live is None or method is None or method in live.methods:
        return None
    return f"{name} has no {method} method (docs/systems.md) and no outputs for {task}"


def nothing_written(
    task: str,
    units: Sequence[Unit],
    outputs: Mapping[str, Any],
    kinds: Sequence[str],
    failed: Mapping[str, str] | None,
) -> str | None:
    """The reason a live system's task is skipped when its calls gave nothing to write (every
    ``retrieve`` returned no document: an empty TREC file is not a run), unless every unit
    failed (then each is a ``system_error`` row)."""
    if any(k in outputs for k in kinds):
        return None
    if failed is not None and len(failed) == len(units):
        return None
    method = task_method(task) or "the method"
    return f"returned nothing to evaluate {task} on ({method} gave an empty result for every unit)"


def failed_units(
    task: str,
    units: Sequence[Unit],
    calls: SystemCalls | None,
    files: set[str],
    kinds: Sequence[str],
) -> dict[str, str] | None:
    """Unit id → reason for the units of ``task`` whose call failed (``None``: none failed, or
    the task reads a file the config named)."""
    if calls is None or any(k in files for k in kinds):
        return None
    errors = calls.errors_for_task(task)
    failed = {u.id: errors[u.id] for u in units if u.id in errors}
    return failed or None


def with_system_errors(
    adapter: Any,
    ctx: TaskContext,
    outputs: Mapping[str, OutputFile],
    failed: Mapping[str, str],
    factors: Sequence[str],
    ci_settings: Any,
    canonical: Sequence[str],
) -> tuple[Any, list[SampleRecord]]:
    """The task's Result over the units whose calls succeeded, plus a ``system_error`` row per
    failed unit and metric; and the sample records. Never cached: a re-run retries the calls."""
    from ragmeter.runner.intervals import add_cis, own_stats

    ok = [u for u in ctx.units if u.id not in failed]
    result = None
    records: list[SampleRecord] = []
    if ok and all(k in outputs for k in adapter.outputs if k in ("run", "answers", "entities")):
        sub = TaskContext(
            ctx.task,
            ctx.gold.subset({u.sample.id for u in ok}),
            ok,
            ctx.options,
            ctx.metrics,
            ctx.system,
            judge=ctx.judge,
            base_dir=ctx.base_dir,
            progress=ctx.progress,
        )
        result = adapter.evaluate(sub, outputs)
        add_cis(result, ci_settings, canonical)
        if factors:
            result.strata = {
                **result.strata,
                **stratify(
                    result,
                    ok,
                    list(factors),
                    unit_of=adapter.unit_of,
                    corpus_stats=lambda m, a=adapter, r=result: own_stats(a, m, r),
                    evaluate_subset=lambda us, a=adapter, c=sub, o=outputs: a.evaluate_subset(
                        c, o, us
                    ),
                    wanted=list(canonical),
                ),
            }
        records = adapter.records(sub, outputs)
    ctx.progress(len(failed))
    by_id = {u.id: u for u in ctx.units}
    records.extend(
        SampleRecord(
            uid,
            by_id[uid].sample.id,
            dict(by_id[uid].sample.strata),
            {"input": {}, "gold": {}, "output": {"system_error": reason}},
        )
        for uid, reason in sorted(failed.items())
    )
    final = add_system_errors(result, ctx.task, failed, canonical)
    if factors:
        _count_in_strata(final, [by_id[u] for u in sorted(failed)], factors, canonical)
    return final, records


def _count_in_strata(
    result: Any, failed: Sequence[Unit], factors: Sequence[str], canonical: Sequence[str]
) -> None:
    """Add the failed units to the ``system_error`` count of their stratum's aggregates (a
    stratum where every unit failed gets undefined aggregates that say so)."""
    order = {s: i for i, s in enumerate(st.STATUSES)}
    for factor in factors:
        levels = result.strata.setdefault(factor, {})
        names = list(dict.fromkeys(m for aggs in levels.values() for m in aggs)) or list(canonical)
        for unit in failed:
            level = unit_strata(unit, [factor])[factor]
            aggs = levels.setdefault(level, {})
            for name in names:
                agg = aggs.get(name) or Aggregate(None, 0, {}, reason="no scored samples")
                counts = dict(agg.status_counts)
                counts[st.SYSTEM_ERROR] = counts.get(st.SYSTEM_ERROR, 0) + 1
                counts = dict(sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))
                aggs[name] = replace(agg, status_counts=counts)
