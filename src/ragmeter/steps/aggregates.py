"""Aggregates over evaluated questions: per template, micro and macro (docs/steps.md)."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ragmeter.steps.modes import DEFAULT, V5, check_compat

__all__ = [
    "RETAINED_METRICS",
    "compute_aggregates",
    "scalar_metrics",
    "stats_for_series",
    "step_metrics",
]

RETAINED_METRICS: Final = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")
"""Metrics whose statistics are always present (zeros when no sample has them)."""

_SCALARS: Final = (
    "answer_recall",
    "answer_precision",
    "answer_relevance",
    "answer_f1",
    "steps_score",
    *RETAINED_METRICS,
)
_V5_SCALARS: Final = (
    "answer_recall",
    "answer_precision",
    "answer_relevance",
    "answer_relevance_cost",
    "answer_f1",
    "steps_score",
    *RETAINED_METRICS,
)
_STEP_METRICS_V6: Final = (
    "retrieval_answer_precision",
    "retrieval_answer_recall",
    "retrieval_answer_f1",
    "retrieval_context_recall",
    "retrieval_context_precision",
    "retrieval_context_f1",
)
_STEP_METRICS_DEFAULT: Final = (
    *_STEP_METRICS_V6,
    "retrieval_ids_recall_at_k",
    "retrieval_ids_average_precision",
)
_STEP_METRICS_V5: Final = tuple(
    f"retrieval_{kind}_{m}{suffix}"
    for kind in ("answer", "context")
    for m in ("precision", "recall", "f1")
    for suffix in ("", "_cost")
)
_COUNTERS: Final = ("total", "once_per_sample", "errors", "empty_results")


def scalar_metrics(mode: str, custom: Sequence[str] = ()) -> tuple[str, ...]:
    """Per-question metrics aggregated in ``mode``, custom outputs last."""
    if mode == V5:
        return _V5_SCALARS
    return (*_SCALARS, *(c for c in custom if c not in _SCALARS))


def step_metrics(mode: str) -> tuple[str, ...]:
    """Metrics aggregated from actual ``retrieval`` steps in ``mode``."""
    if mode == V5:
        return _STEP_METRICS_V5
    return _STEP_METRICS_DEFAULT if mode == DEFAULT else _STEP_METRICS_V6


def stats_for_series(values: Iterable[int | float]) -> dict[str, int | float]:
    """``sum``, ``mean``, ``median``, ``min`` and ``max`` with Python's semantics.

    ``sum`` adds left to right from the integer 0; ``mean`` is :func:`statistics.mean` (exact
    rational arithmetic, one final rounding); an empty series gives integer zeros.

    >>> stats_for_series([1, 2])
    {'sum': 3, 'mean': 1.5, 'median': 1.5, 'min': 1, 'max': 2}
    >>> stats_for_series([])
    {'sum': 0, 'mean': 0, 'median': 0, 'min': 0, 'max': 0}
    >>> stats_for_series([0.8, 0.0, 0.9, 0.0])["mean"]
    0.42500000000000004
    """
    series = list(values)
    if not series:
        return {"sum": 0, "mean": 0, "median": 0, "min": 0, "max": 0}
    return {
        "sum": sum(series),
        "mean": statistics.mean(series),
        "median": statistics.median(series),
        "min": min(series),
        "max": max(series),
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _empty_bindings(output: Any) -> bool:
    if not isinstance(output, str):
        return False
    try:
        doc = json.loads(output)
    except (ValueError, RecursionError):
        return False
    if not isinstance(doc, dict):
        return False
    results = doc.get("results")
    return isinstance(results, dict) and "bindings" in results and not results["bindings"]


def _count_steps(sample: Mapping[str, Any], counters: dict[str, dict[str, int]]) -> None:
    seen: set[str] = set()
    steps = sample.get("actual_steps")
    for step in steps if isinstance(steps, list) else ():
        if not isinstance(step, Mapping):
            continue
        name = str(step.get("name"))
        counters["total"][name] = counters["total"].get(name, 0) + 1
        if name not in seen:
            seen.add(name)
            counters["once_per_sample"][name] = counters["once_per_sample"].get(name, 0) + 1
        if step.get("status") == "error":
            counters["errors"][name] = counters["errors"].get(name, 0) + 1
        elif _empty_bindings(step.get("output")):
            counters["empty_results"][name] = counters["empty_results"].get(name, 0) + 1


class _Template:
    __slots__ = ("counters", "errors", "scalars", "step_values", "successes")

    def __init__(self) -> None:
        self.errors = 0
        self.successes = 0
        self.scalars: dict[str, list] = {}
        self.step_values: dict[str, list] = {}
        self.counters: dict[str, dict[str, int]] = {c: {} for c in _COUNTERS}


def compute_aggregates(
    results: Sequence[Mapping[str, Any]],
    config_file_path: str | os.PathLike[str] | None = None,
    *,
    compat: str | None = None,
) -> dict[str, Any]:
    """Per-template, micro and macro statistics of evaluated questions.

    Parameters
    ----------
    results
        Output records of :func:`ragmeter.steps.run_evaluation`.
    config_file_path
        A graphrag-eval v6 config; only its custom-evaluation output names are used (they join
        the scalar metrics). Ignored in ``graphrag-eval-5`` mode.
    compat
        The mode of the run (error samples enter statistics except in ``graphrag-eval-5``).

    Returns
    -------
    dict
        ``{"per_template": {template_id: {...}}, "micro": {...}, "macro": {...}}``: sample
        counts, ``stats_for_series`` of every scalar metric (always for tokens and elapsed
        time), step counters and retrieval step metrics; ``macro`` holds the mean over
        templates of each per-template mean.

    Examples
    --------
    >>> agg = compute_aggregates([
    ...     {"template_id": "t", "question_id": "q1", "steps_score": 1.0},
    ...     {"template_id": "t", "question_id": "q2", "steps_score": 0.0, "error": "boom"}])
    >>> agg["micro"]["steps_score"]["mean"], agg["micro"]["number_of_error_samples"]
    (0.5, 1)
    """
    mode = check_compat(compat)
    custom: list[str] = []
    if config_file_path is not None and mode != V5:
        from ragmeter.steps.config import load_config

        custom = load_config(config_file_path).custom_output_names()
    scalars = scalar_metrics(mode, custom)
    step_names = step_metrics(mode)
    step_set = frozenset(step_names)

    templates: dict[Any, _Template] = {}
    pool_order: list[Any] = []  # the order upstream concatenates template series in
    for sample in results:
        if not isinstance(sample, Mapping) or "template_id" not in sample:
            raise _bad_record(sample)
        tid = sample["template_id"]
        t = templates.get(tid)
        if t is None:
            t = templates[tid] = _Template()
        if "error" in sample:
            t.errors += 1
            if mode == V5:
                continue
        else:
            t.successes += 1
        if tid not in pool_order:
            pool_order.append(tid)
        for metric in scalars:
            value = sample.get(metric)
            if _is_number(value):
                t.scalars.setdefault(metric, []).append(value)
        _count_steps(sample, t.counters)
        steps = sample.get("actual_steps")
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, Mapping) and step.get("name") == "retrieval":
                for metric in step_names:
                    value = step.get(metric)
                    if _is_number(value):
                        t.step_values.setdefault(metric, []).append(value)

    per_template: dict[Any, dict[str, Any]] = {}
    for tid, t in templates.items():
        block: dict[str, Any] = {
            "number_of_error_samples": t.errors,
            "number_of_success_samples": t.successes,
        }
        for metric in scalars:
            series = t.scalars.get(metric, [])
            if series or metric in RETAINED_METRICS:
                block[metric] = stats_for_series(series)
        steps_block: dict[str, Any] = {c: dict(v) for c, v in t.counters.items() if v}
        for metric in step_names:
            if metric in t.step_values:
                steps_block[metric] = stats_for_series(t.step_values[metric])
        if steps_block:
            block["steps"] = steps_block
        per_template[tid] = block

    ordered = [templates[tid] for tid in pool_order]
    micro: dict[str, Any] = {
        "number_of_error_samples": sum(t.errors for t in templates.values()),
        "number_of_success_samples": sum(t.successes for t in templates.values()),
    }
    for metric in scalars:
        series = [v for t in ordered for v in t.scalars.get(metric, [])]
        if series or metric in RETAINED_METRICS:
            micro[metric] = stats_for_series(series)
    for metric in step_names:
        series = [v for t in ordered for v in t.step_values.get(metric, [])]
        if series:
            micro[metric] = stats_for_series(series)
    if mode != V5:
        summed: dict[str, dict[str, int]] = {}
        for t in ordered:
            for counter, counts in t.counters.items():
                for name, n in counts.items():
                    bucket = summed.setdefault(counter, {})
                    bucket[name] = bucket.get(name, 0) + n
        if summed:
            micro["steps"] = {c: summed[c] for c in _COUNTERS if c in summed}

    macro: dict[str, Any] = {}
    for metric in scalars:
        means = [b[metric]["mean"] for b in per_template.values() if metric in b]
        if means or metric in RETAINED_METRICS:
            macro[metric] = {"mean": statistics.mean(means or [0])}
    step_means: dict[str, list] = {}
    for b in per_template.values():
        for metric, stats in b.get("steps", {}).items():
            if metric in step_set:
                step_means.setdefault(metric, []).append(stats["mean"])
    for metric in step_names:
        if metric in step_means:
            macro[metric] = {"mean": statistics.mean(step_means[metric])}
    return {"per_template": per_template, "micro": micro, "macro": macro}


def _bad_record(sample: Any) -> Exception:
    from ragmeter.errors import InputError

    if not isinstance(sample, Mapping):
        return InputError(
            f"a {type(sample).__name__} (expected an evaluation record, a mapping)",
            path="<results>",
        )
    qid = sample.get("question_id", "?")
    return InputError(
        "template_id: missing (expected the records run_evaluation returns)",
        path="<results>",
        location=f"question {qid}",
    )
