"""``ragmeter gate``: gate rules evaluated on runs already in the store.

Rules come from ``--rule``/``--profile`` or, by default, from the ``gates`` block of the config the
run was made with. A no-regression rule compares with ``--baseline RUN`` or, by default, with the
run of the rule's baseline system in the same evaluation; when that pair was already compared at
run time the stored comparison is used (so ``ragmeter gate`` agrees with ``ragmeter run``),
otherwise the paired test is computed from the stored per-sample values with the run's
``compare`` settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.io.yamlmap import format_path
from ragmeter.result import Aggregate, Result
from ragmeter.runner.config import CompareConfig, build_rules, parse_gates
from ragmeter.runner.gates import GateReport, evaluate_rules, parse_rule
from ragmeter.store import Store

__all__ = ["gate_stored"]


class _Scope:
    def __init__(self, systems: Sequence[str], baseline: str | None) -> None:
        self.system_names = list(systems)
        self.baseline = baseline

    def error(self, path: Sequence[str | int], message: str) -> UsageError:
        where = format_path(path)
        return UsageError(f"{where}: {message}" if where else message, command="gate")


def _reasons(store: Store, run_id: str) -> dict[str, str]:
    from ragmeter.runner.tasks import task_names

    reasons = {}
    tasks = {t["task"]: t for t in store.tasks(run_id)}
    for task in task_names():
        t = tasks.get(task)
        if t is None:
            reasons[task] = f"task {task} was not configured in run {run_id}"
        elif t["status"] != "ok":
            why = t["reason"] or "no result"
            if len(why) > 60 and ": " in why:
                why = why.split(": ", 1)[0]
            reasons[task] = f"task {task} skipped: {why}"
    return reasons


def _ok_aggregates(store: Store, run_id: str) -> dict[str, dict[str, Aggregate]]:
    ok = {t["task"] for t in store.tasks(run_id) if t["status"] == "ok"}
    return {task: aggs for task, aggs in store.aggregates(run_id).items() if task in ok}


def gate_stored(
    store: Store,
    refs: Sequence[str],
    *,
    baseline: str | None = None,
    rules: Sequence[str] = (),
    profiles: Sequence[str] = (),
    strict: bool | None = None,
) -> GateReport:
    """Apply gate rules to stored runs (``refs`` as :meth:`Store.resolve` accepts)."""
    run_ids: list[str] = []
    for ref in refs:
        run_ids.extend(r for r in store.resolve(ref) if r not in run_ids)
    baseline_id = store.resolve_one(baseline) if baseline else None
    outcomes = []
    strict_any = False
    for run_id in run_ids:
        run = store.get_run(run_id)
        config: Mapping[str, Any] = run.get("config") or {}
        siblings = {
            r["system"]: r["id"]
            for r in store.list_runs(evaluation=run["evaluation_id"], limit=None)
        }
        compare = CompareConfig.model_validate(config.get("compare") or {})
        default_baseline = compare.baseline
        systems = sorted(set(siblings) | {run["system"]})
        if baseline_id is not None:
            b = store.get_run(baseline_id)
            siblings[b["system"]] = baseline_id
            systems = sorted(set(systems) | {b["system"]})
            default_baseline = b["system"]
        scope = _Scope(systems, default_baseline)
        if rules or profiles:
            block: dict[str, Any] = {"rules": [parse_rule(r) for r in rules]}
            if profiles:
                block["profile"] = list(profiles)
            if baseline_id is not None:
                for r in block["rules"]:
                    if "no_regression" in r:
                        r["no_regression"]["baseline"] = default_baseline
        else:
            block = dict(config.get("gates") or {})
            if not block:
                continue
        gates_model = parse_gates(block, scope)
        built = build_rules(scope, gates_model)
        is_strict = gates_model.strict if strict is None else strict
        strict_any = strict_any or is_strict
        aggregates = _ok_aggregates(store, run_id)
        reasons = _reasons(store, run_id)
        stored = {
            (c["baseline_run_id"], c["task"], c["metric"]): c for c in store.comparisons(run_id)
        }
        for rule in built:
            if rules and rule.source == "rules":
                _check_computed(rule, aggregates, run_id)
            comps: dict[tuple[str, str], Mapping[str, Any]] = {}
            base_run = None
            if rule.kind == "no_regression" and rule.baseline != run["system"]:
                base_run = baseline_id or siblings.get(rule.baseline)
                if base_run is None:
                    raise UsageError(
                        f"run {run_id} has no run of baseline system '{rule.baseline}' in its "
                        "evaluation (give one with --baseline RUN)",
                        command="gate",
                    )
                hit = stored.get((base_run, rule.task, rule.canonical))
                if hit is None and rule.canonical is not None and rule.task in aggregates:
                    hit = _fresh_comparison(store, run_id, base_run, rule, compare)
                if hit is not None:
                    comps[(rule.task, rule.canonical)] = hit
            outcomes.extend(
                evaluate_rules(
                    [rule],
                    system=run["system"],
                    aggregates=aggregates,
                    task_reasons=reasons,
                    comparisons=comps,
                    baseline_system=rule.baseline,
                    baseline_run_id=base_run,
                    alpha=compare.alpha,
                    strict=is_strict,
                )
            )
    return GateReport(outcomes, strict=strict_any)


def _check_computed(
    rule: Any, aggregates: Mapping[str, Mapping[str, Aggregate]], run_id: str
) -> None:
    """A ``--rule`` on a metric its (evaluated) task never computed is a mistake in the rule,
    not a gate that passes or fails: exit 2 with the metrics the task has. A task that was
    skipped or not configured stays SKIP, as in the run's own gates."""
    if rule.canonical is None or rule.task not in aggregates:
        return
    held = aggregates[rule.task]
    if rule.canonical in held:
        return
    names = sorted(held, key=lambda m: (m.startswith("IPrec@"), m))  # the 11 points last
    shown = ", ".join(f"{rule.task}.{m}" for m in names[:8]) + (", ..." if len(names) > 8 else "")
    raise UsageError(
        f"run {run_id} did not compute {rule.metric} (its {rule.task} task has {shown})",
        command="gate",
    )


def stored_result(store: Store, run_id: str, task: str) -> Result:
    """A task's Result rebuilt from the store (per-sample values, aggregates, metadata)."""
    table = store.sample_table(run_id, task=task).drop(["task"])
    meta = next((t["metadata"] for t in store.tasks(run_id) if t["task"] == task), {})
    return Result(task, table, store.aggregates(run_id).get(task, {}), metadata=meta)


def _fresh_comparison(
    store: Store, run_id: str, base_run: str, rule: Any, compare: CompareConfig
) -> dict[str, Any] | None:
    """Compare two stored runs on one metric (the rule's own family of one test)."""
    from ragmeter.runner.compare import compare_results, correct
    from ragmeter.runner.tasks import get_adapter

    run = stored_result(store, run_id, rule.task)
    base = stored_result(store, base_run, rule.task)
    row = compare_results(rule.task, rule.canonical, run, base, compare, get_adapter(rule.task))
    row.update(system=None, baseline=base_run, baseline_run_id=base_run)
    return correct([row], compare)[0]
