"""``ragmeter systems check CONFIG``: does my adapter work?

Imports every live system of the config, lists its methods and the tasks they enable, calls
each method once on the first gold unit that has its input (no cache: a real call), and reports
what came back or the one-line reason it failed.
"""

from __future__ import annotations

from typing import Any

from ragmeter.datasets.gold import load_gold
from ragmeter.systems.cache import CallCache
from ragmeter.systems.calls import ErrorBudget, run_method
from ragmeter.systems.protocol import METHOD_TASKS, METHODS
from ragmeter.systems.session import answer_contexts, plan_inputs

__all__ = ["check_systems"]


def check_systems(cfg: Any) -> dict[str, Any]:
    """``{system: {"call", "methods": {method: {"tasks", "unit", "args", "result"|"error"}}}}``."""
    from ragmeter.io.files import shown_path as _shown
    from ragmeter.systems.corpus import read_corpus
    from ragmeter.systems.runner import load_systems

    ds = cfg.model.dataset
    gold = load_gold(
        _shown(cfg.resolve_path(ds.path)), fmt=ds.format, on_offset_mismatch=ds.on_offset_mismatch
    )
    corpus = read_corpus(_shown(cfg.resolve_path(ds.corpus))) if ds.corpus else None
    every_task = [t for ts in METHOD_TASKS.values() for t in ts]
    live = load_systems(cfg, [])
    report: dict[str, Any] = {}
    with CallCache(None) as cache:  # in memory: a check always calls
        for name, ls in live.items():
            inputs, unusable = plan_inputs(ls, gold, every_task)
            methods: dict[str, Any] = {}
            retrieved: dict[str, Any] = {}
            for method in METHODS:
                if method not in ls.methods:
                    continue
                entry: dict[str, Any] = {"tasks": list(METHOD_TASKS[method])}
                todo = inputs.get(method, {})
                if not todo:
                    why = next(iter(unusable.get(method, {}).values()), None)
                    entry["error"] = why or "the gold set has no unit for this method"
                    methods[method] = entry
                    continue
                unit, args = next(iter(todo.items()))
                if method == "answer":
                    args = {**args, "contexts": answer_contexts(retrieved.get(unit, []), corpus)}
                    if unit not in retrieved and "retrieve" in ls.methods:
                        results, _, _ = run_method(
                            ls, "retrieve", {unit: inputs["retrieve"][unit]}, cache, ErrorBudget(1)
                        )
                        args["contexts"] = answer_contexts(results.get(unit, []), corpus)
                results, errors, stats = run_method(ls, method, {unit: args}, cache, ErrorBudget(1))
                entry.update(unit=unit, args=args, seconds=round(stats.seconds, 3))
                if unit in results:
                    entry["result"] = results[unit]
                    if method == "retrieve":
                        retrieved[unit] = results[unit]
                else:
                    entry["error"] = errors[unit]
                methods[method] = entry
            report[name] = {**ls.describe(), "tasks": ls.tasks, "methods": methods}
    return report
