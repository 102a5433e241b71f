"""Bootstrap confidence intervals of task aggregates, shared by file and live tasks.

Below the pipeline and :mod:`ragmeter.runner.live_tasks` (both add intervals), so neither
imports the other for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.result import Result
from ragmeter.runner.config import RunConfig

__all__ = ["add_cis", "aggregate_ci_settings", "own_stats"]


def aggregate_ci_settings(cfg: RunConfig) -> dict[str, Any] | None:
    """How aggregates get their 95% CI: a seeded bootstrap of the per-sample values.

    The method and resamples of ``compare.ci``/``compare.n_resamples`` when ``compare.ci`` is
    set, else a percentile bootstrap with 1,000 resamples (cheap enough for every metric).
    """
    import importlib.util

    if importlib.util.find_spec("ragmeter.stats") is None:
        return None
    compare = cfg.model.compare
    if compare is not None and compare.ci:
        return {"method": compare.ci, "n_resamples": compare.n_resamples, "seed": compare.seed}
    return {"method": "percentile", "n_resamples": 1000, "seed": compare.seed if compare else 42}


def own_stats(adapter: Any, metric: str, result: Result) -> Any:
    """(per-unit statistics, aggregate) of a corpus-level metric of one Result, or None."""
    suff = adapter.sufficient_stats(metric, result, result)
    return None if suff is None else (suff[0], suff[2])


def add_cis(result: Result, settings: Mapping[str, Any] | None, wanted: Sequence[str] = ()) -> None:
    """Add a bootstrap CI to each asked-for sample-level aggregate that is the mean of its rows."""
    if settings is None:
        return
    import dataclasses

    from ragmeter import stats
    from ragmeter.runner.strata import metric_level

    present = set(result.metrics)
    for name, agg in list(result.aggregates.items()):
        if name not in wanted or agg.value is None or agg.ci_low is not None:
            continue
        if name not in present:
            continue
        if metric_level(result.task, name, True) != "sample":
            continue
        values = result.values(name)
        if len(values) < 2:
            continue
        mean = sum(sorted(values.values())) / len(values)
        if abs(mean - float(agg.value)) > 1e-9 * max(1.0, abs(mean)):
            continue  # not the plain mean of its rows (e.g. folded statuses): no CI
        ci = stats.bootstrap_ci(
            values,
            method=settings["method"],
            n_resamples=settings["n_resamples"],
            seed=settings["seed"],
        )
        result.aggregates[name] = dataclasses.replace(agg, ci_low=ci.low, ci_high=ci.high)
