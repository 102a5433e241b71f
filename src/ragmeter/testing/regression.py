"""``assert_no_regression``: the paired test of ``ragmeter compare`` and the no-regression rule
of ``ragmeter gate``, on two systems' per-sample values.

A metric regresses when the current system is worse than the baseline (in the metric's
direction: ``grounded.under_refusal`` regresses when it goes up) and the p-value, corrected over
the listed metrics, is at most ``alpha``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.result import Result
from ragmeter.runner.gates import evaluate_rules
from ragmeter.testing.assertions import _resolve, _strict, as_system
from ragmeter.testing.checks import FAIL, PASS, REQUIREMENT, SKIP, Outcome, _table, conclude
from ragmeter.testing.runset import SystemResult

__all__ = ["no_regression_outcome"]

_VERDICT = {"PASS": PASS, "FAIL": FAIL, "SKIP": SKIP}


def _baseline(current: SystemResult, baseline: Any) -> SystemResult:
    if isinstance(baseline, str) and baseline.startswith("run:"):
        return _stored(current, baseline[4:])
    if isinstance(baseline, os.PathLike) or (
        isinstance(baseline, str)
        and (current.runset is None or baseline not in current.runset.systems)
        and os.path.isdir(baseline)
    ):
        return _from_folder(current, Path(baseline))
    if isinstance(baseline, str):
        if current.runset is None:
            raise UsageError(
                f"baseline {baseline!r} names a system, but {current.name}'s result does not "
                "come from an evaluated config (pass the baseline's result, a results folder or "
                "'run:<id>')"
            )
        return current.runset.system(baseline)
    if isinstance(baseline, (SystemResult, Result)):
        return as_system(baseline, None)
    raise UsageError(
        f"cannot use a {type(baseline).__name__} as baseline (expected a result, a system name "
        "of the same config or 'run:<id>' of a stored run)"
    )


def _stored(current: SystemResult, run_id: str) -> SystemResult:
    """A stored run of the session's store (``--ragmeter-store``) as a baseline."""
    from ragmeter.runner.stored_gates import _ok_aggregates, _reasons, stored_result
    from ragmeter.store import Store

    url = current.runset.store if current.runset is not None else None
    if url is None:
        raise UsageError(
            f"baseline 'run:{run_id}' needs a results store (pass --ragmeter-store URL or set "
            "ragmeter_store)"
        )
    store = Store(url)
    try:
        try:
            store.get_run(run_id, full=False)
        except Exception as exc:  # the store's own "no such run" message
            raise UsageError(f"baseline 'run:{run_id}': {exc}") from None
        aggs = _ok_aggregates(store, run_id)
        results = {task: stored_result(store, run_id, task) for task in aggs}
        return SystemResult(run_id, run_id, results, aggs, _reasons(store, run_id))
    finally:
        store.close()


def _from_folder(current: SystemResult, folder: Path) -> SystemResult:
    """A system of a saved evaluation (``results/<evaluation-id>/``, as ``ragmeter run`` and the
    plugin write it): the system with the current one's name, or the folder's only system."""
    import json

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ragmeter.result import Aggregate

    summary_path, samples_path = folder / "summary.json", folder / "samples.parquet"
    if not summary_path.is_file() or not samples_path.is_file():
        raise UsageError(
            f"{folder}: not a results folder (expected summary.json and samples.parquet, as "
            "ragmeter run writes them under results/<evaluation-id>/)"
        )
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    systems = {s["name"]: s for s in summary.get("systems", [])}
    if current.name in systems:
        name = current.name
    elif len(systems) == 1:
        name = next(iter(systems))
    else:
        raise UsageError(
            f"{folder}: no system named {current.name!r} (expected one of {', '.join(systems)}; "
            "pass that system's result instead)"
        )
    table = pq.read_table(samples_path)
    table = table.filter(pc.equal(table["system"], name))
    results: dict[str, Result] = {}
    aggregates: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for task, block in summary.get("tasks", {}).items():
        entry = block.get("systems", {}).get(name)
        if entry is None:
            continue
        if entry.get("aggregates") is None:
            reasons[task] = f"task {task} skipped: {entry.get('reason') or 'no result'}"
            continue
        aggs = {m: Aggregate(**d) for m, d in entry["aggregates"].items()}
        rows = table.filter(pc.equal(table["task"], task))
        results[task] = Result(
            task, rows.select(["id", "metric", "value", "status", "detail"]), aggs
        )
        if entry.get("status") == "ok":
            aggregates[task] = aggs
        else:
            reasons[task] = f"task {task} skipped: {entry.get('reason') or 'no result'}"
    run_id = str(systems[name].get("run_id") or f"{folder.name}-{name}")
    return SystemResult(run_id, run_id, results, aggregates, reasons, results_dir=str(folder))


def _rule(name: str, hit: Any, baseline: str, alpha: float) -> Any:
    from ragmeter.runner.config import GateRule

    return GateRule(
        "no_regression",
        name,
        hit.task,
        hit.canonical,
        baseline=baseline,
        alpha=alpha,
        direction=hit.definition.direction,
        level=hit.definition.level,
    )


def _fmt(x: Any, spec: str = ".4f") -> str:
    return "-" if x is None else format(x, spec)


def no_regression_outcome(
    current: Any,
    baseline: Any,
    metrics: Sequence[str],
    *,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int = 42,
    missing: str = "error",
    n_resamples: int = 9999,
    ci: str | None = None,
    strict: bool | None = None,
) -> Outcome:
    """Test every metric of ``metrics`` (current vs baseline), then one verdict."""
    from pydantic import ValidationError

    from ragmeter.runner.compare import compare_results, correct
    from ragmeter.runner.config import CompareConfig
    from ragmeter.runner.tasks import get_adapter

    if isinstance(metrics, str) or not metrics:
        raise UsageError("metrics must be a non-empty list of task.metric names")
    if missing not in ("error", "intersect"):
        raise UsageError(f"missing={missing!r} is not known (expected 'error' or 'intersect')")
    cur = as_system(current, None)
    base = _baseline(cur, baseline)
    if base.name == cur.name:
        raise UsageError(f"the baseline is {cur.name} itself (expected another system or run)")
    try:
        settings = CompareConfig(
            baseline=None,
            test=test,
            correction=correction,
            alpha=alpha,
            seed=seed,
            n_resamples=n_resamples,
            ci=ci,
            family="all",
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise UsageError(f"{err['loc'][0]}={err['input']!r}: {err['msg']}") from None
    rows: list[dict[str, Any]] = []
    hits = []
    for name in metrics:
        hit = _resolve(name, None)
        hits.append(hit)
        a, b = cur.results.get(hit.task), base.results.get(hit.task)
        if a is None or b is None or hit.task not in cur.aggregates:
            rows.append({"baseline": base.name, "p_value": None, "skip": True})
            continue
        if missing == "error" and hit.canonical in a.metrics and hit.canonical in b.metrics:
            only = set(a.values(hit.canonical)) ^ set(b.values(hit.canonical))
            if only:
                raise UsageError(
                    f"{name}: {len(only)} samples are scored by only one of {cur.name} and "
                    f"{base.name}, e.g. {sorted(only)[0]!r} (pass missing='intersect' to test "
                    "the samples both scored)"
                )
        row = compare_results(hit.task, hit.canonical, a, b, settings, get_adapter(hit.task))
        rows.append({**row, "baseline": base.name})
    correct(rows, settings)
    checks: list[dict[str, Any]] = []
    for name, hit, row in zip(metrics, hits, rows, strict=True):
        rule = _rule(name, hit, base.name, alpha)
        comps = {} if row.get("skip") else {(hit.task, hit.canonical): row}
        (o,) = evaluate_rules(
            [rule],
            system=cur.name,
            aggregates=cur.aggregates if hit.task in base.aggregates else {},
            task_reasons={
                **base.reasons,
                **cur.reasons,
                hit.task: cur.reasons.get(hit.task)
                or base.reasons.get(hit.task)
                or f"task {hit.task} has no result for {base.name}",
            },
            comparisons=comps,
            baseline_system=base.name,
            alpha=alpha,
        )
        checks.append(
            {
                "system": cur.name,
                "metric": name,
                "expected": f"no regression vs {base.name}",
                "value": row.get("mean_diff"),
                "shown": _fmt(row.get("mean_diff"), "+.4f"),
                "verdict": _VERDICT[o.verdict],
                "n": row.get("n"),
                "status_counts": {},
                "reason": o.reason
                if o.verdict != "SKIP"
                else f"{name}: no test against {base.name} ({o.reason})",
                "mean": row.get("mean"),
                "baseline_mean": row.get("baseline_mean"),
                "ci": [row.get("ci_low"), row.get("ci_high")],
                "p_value": row.get("p_value"),
                "p_adjusted": row.get("p_adjusted"),
                "test": row.get("test", test),
                "seed": seed,
                "run_id": cur.run_id,
                **(cur.runset.check_fields() if cur.runset is not None else {}),
                "config": cur.runset.config_path if cur.runset else None,
                "results_dir": cur.results_dir,
                "requirement": REQUIREMENT.get(hit.task),
            }
        )

    def headline(failed: list[dict[str, Any]], all_checks: list[dict[str, Any]]) -> str:
        return (
            f"{len(failed)} of {len(all_checks)} metrics regressed for {cur.name} vs "
            f"{base.name}: "
            + "; ".join(
                f"{c['metric']} {_fmt(c['mean'])} vs {_fmt(c['baseline_mean'])} "
                f"(difference {c['shown']}, p = {_fmt(c['p_value'], '.4g')}, "
                f"{correction} {_fmt(c['p_adjusted'], '.4g')} <= {alpha:g})"
                if c.get("mean") is not None
                else str(c["reason"])
                for c in failed
            )
        )

    def table(all_checks: list[dict[str, Any]]) -> list[str]:
        rows_out = [
            ("metric", "mean", "baseline", "difference", "95% CI", "p", "p adj.", "verdict")
        ]
        for c in all_checks:
            lo, hi = c["ci"]
            rows_out.append(
                (
                    c["metric"],
                    _fmt(c["mean"]),
                    _fmt(c["baseline_mean"]),
                    c["shown"],
                    "-" if lo is None else f"[{lo:+.4f}, {hi:+.4f}]",
                    _fmt(c["p_value"], ".4g"),
                    _fmt(c["p_adjusted"], ".4g"),
                    c["verdict"],
                )
            )
        ns = sorted({c["n"] for c in all_checks if c["n"] is not None})
        return [
            *_table(rows_out),
            f"test: {test}, {correction} correction over {len(all_checks)} metrics, "
            f"alpha {alpha:g}, n = {', '.join(map(str, ns)) or '-'}, seed {seed}",
        ]

    return conclude(
        checks,
        label=cur.name,
        strict=_strict(strict, cur),
        results_dir=cur.results_dir,
        headline=headline,
        table=table,
    )
