"""Comparisons against the baseline (``specs/runner.md`` §1 ``compare``; ``specs/stats.md`` §8).

Every system other than the baseline is compared with it on each compared metric: a paired test
on the per-sample values both runs scored (``stats.md`` §1, ``missing="intersect"``), with the
configured test, seed and resamples, the mean difference, Cohen's d_z, an optional bootstrap CI
of the difference, and the p-value corrected over the family (``per_metric``: all systems
compared with the baseline on one metric; ``all``: every system and metric).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["compared_metrics", "run_comparisons"]


def compared_metrics(cfg: Any, system_runs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(task, canonical) pairs to compare: ``compare.metrics``, else every metric asked for,
    plus every no-regression rule's metric."""
    pairs: list[tuple[str, str]] = []
    if cfg.compare_metrics is not None:
        pairs.extend((m.task, m.canonical) for m in cfg.compare_metrics)
    else:
        for task, metrics in cfg.metrics.items():
            pairs.extend((task, m.canonical) for m in metrics)
    for rule in cfg.rules:
        if rule.kind == "no_regression" and rule.canonical is not None:
            pairs.append((rule.task, rule.canonical))
    return list(dict.fromkeys(pairs))


def run_comparisons(
    cfg: Any, system_runs: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Comparison rows (one per non-baseline system and metric) and notes on what was left out."""
    if cfg.baseline is None:
        return [], []
    try:
        import ragmeter.stats  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ragmeter.stats"):
            return [], ["comparisons skipped: ragmeter.stats is not part of this build"]
        raise
    raise NotImplementedError("wired when the stats engine lands")  # pragma: no cover
