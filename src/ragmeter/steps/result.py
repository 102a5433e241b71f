"""Conversion of steps records and aggregates into the shared ``Result`` (docs/steps.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter import status as st
from ragmeter.steps.aggregates import compute_aggregates, scalar_metrics, step_metrics
from ragmeter.steps.modes import V5, check_compat
from ragmeter.steps.protocol import BLANK_INPUT_ERROR

__all__ = ["to_result"]

_CORRECTNESS = ("answer_recall", "answer_precision", "answer_f1")
_JUDGED = frozenset(
    {
        *_CORRECTNESS,
        "answer_relevance",
        "answer_relevance_cost",
        *(
            f"retrieval_{k}_{m}"
            for k in ("answer", "context")
            for m in ("recall", "precision", "f1")
        ),
    }
)
_JUDGE_STATUS_PREFIXES = tuple(f"{s}:" for s in sorted(st.JUDGE_FAILURES))
_NOT_JUDGED = (BLANK_INPUT_ERROR, "Reference missing key", "Actual output missing key")


def judge_status(message: str) -> str:
    """The ``Result`` status of a judged key's ``*_error`` message.

    >>> judge_status("timeout: HTTP 429 after 6 attempts"), judge_status("Expected 2 values")
    ('timeout', 'parse_error')
    """
    for prefix in _JUDGE_STATUS_PREFIXES:
        if message.startswith(prefix):
            return prefix[:-1]
    if message.startswith(_NOT_JUDGED):
        return st.NO_CLAIMS
    return st.PARSE_ERROR


def _error_for(record: Mapping[str, Any], metric: str) -> str | None:
    if metric == "answer_relevance":
        return record.get("answer_relevance_error")
    if metric in _CORRECTNESS:
        return record.get("answer_correctness_error") or record.get("answer_eval_error")
    if metric in record and record[metric] is None:  # a custom output: find its evaluation
        errors = [k for k in record if k.endswith("_error") and record[k] is not None]
        own = [k for k in errors if metric.startswith(k[: -len("_error")])]
        pick = (own or errors or [None])[0]
        return str(record[pick]) if pick is not None else "no value"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _row(sid: str, metric: str, value: float | None, status: str, detail: str | None) -> dict:
    return {"id": sid, "metric": metric, "value": value, "status": status, "detail": detail}


def to_result(
    results: Sequence[Mapping[str, Any]],
    aggregates: Mapping[str, Any] | None = None,
    *,
    compat: str | None = None,
):
    """The ``Result`` of a steps evaluation (task ``steps``).

    One row per question and scalar metric (``steps_score``, ``answer_f1``, tokens…) and one
    per actual ``retrieval`` step and step metric (id ``<question_id>/<step id>``). Status
    ``ok`` for every aggregated value (error responses included, except in
    ``graphrag-eval-5`` where they are ``response_error``); a judged key that failed is null
    with the judge's status. Aggregates are the micro means under the metric names and the
    macro means as ``macro.<name>``; per-template means are the ``template_id`` strata.

    >>> r = to_result([{"template_id": "t", "question_id": "q1", "steps_score": 1.0},
    ...                {"template_id": "t", "question_id": "q2", "steps_score": 0.0}])
    >>> r.summary["steps_score"], r.aggregates["macro.steps_score"].value
    (0.5, 0.5)
    """
    import pyarrow as pa

    from ragmeter.result import SAMPLES_SCHEMA, Aggregate, Result

    mode = check_compat(compat)
    if aggregates is None:
        aggregates = compute_aggregates(results, compat=compat)
    micro = aggregates.get("micro", {})
    step_names = step_metrics(mode)
    metrics = list(scalar_metrics(mode))
    for key, value in micro.items():
        if (
            isinstance(value, Mapping)
            and "mean" in value
            and key not in metrics
            and key not in step_names
        ):
            metrics.append(key)  # custom evaluation outputs

    rows: list[dict[str, Any]] = []
    seen_ids: Counter[str] = Counter()
    for record in results:
        qid = str(record.get("question_id"))
        seen_ids[qid] += 1
        if seen_ids[qid] > 1:
            qid = f"{qid}#{seen_ids[qid]}"
        v5_error = mode == V5 and "error" in record
        for metric in metrics:
            value = record.get(metric)
            if v5_error:
                if metric in micro:
                    rows.append(_row(qid, metric, None, st.RESPONSE_ERROR, str(record["error"])))
                continue
            if _number(value):
                detail = str(record["error"]) if "error" in record else None
                rows.append(_row(qid, metric, float(value), st.OK, detail))
                continue
            message = _error_for(record, metric)
            if message is not None:
                rows.append(_row(qid, metric, None, judge_status(message), message))
        steps = record.get("actual_steps")
        for step in steps if isinstance(steps, list) else ():
            if not isinstance(step, Mapping) or step.get("name") != "retrieval":
                continue
            sid = f"{qid}/{step.get('id')}"
            for metric in step_names:
                value = step.get(metric)
                if _number(value):
                    rows.append(_row(sid, metric, float(value), st.OK, None))
                elif step.get(f"{metric}_error") is not None:
                    message = str(step[f"{metric}_error"])
                    rows.append(_row(sid, metric, None, judge_status(message), message))

    order = {m: n for n, m in enumerate([*metrics, *step_names])}
    rows.sort(key=lambda r: (order.get(r["metric"], len(order)), r["id"]))
    counts: dict[str, Counter[str]] = {}
    for r in rows:
        counts.setdefault(r["metric"], Counter())[r["status"]] += 1

    def status_counts(metric: str) -> dict[str, int]:
        c = counts.get(metric, Counter())
        return {s: c[s] for s in st.STATUSES if c[s]}

    aggs: dict[str, Aggregate] = {}
    for key in ("number_of_error_samples", "number_of_success_samples"):
        if key in micro:
            aggs[key] = Aggregate(micro[key], len(results))
    for metric in [*metrics, *step_names]:
        stats = micro.get(metric)
        if isinstance(stats, Mapping) and "mean" in stats:
            n = counts.get(metric, Counter())[st.OK]
            if n == 0:
                aggs[metric] = Aggregate(None, 0, status_counts(metric), reason="no scored values")
            else:
                aggs[metric] = Aggregate(stats["mean"], n, status_counts(metric))
    per_template = aggregates.get("per_template", {})
    for metric, stats in aggregates.get("macro", {}).items():
        templates = sum(
            1
            for block in per_template.values()
            if metric in block or metric in block.get("steps", {})
        )
        aggs[f"macro.{metric}"] = Aggregate(stats["mean"], templates)

    strata: dict[str, dict[str, dict[str, Aggregate]]] = {"template_id": {}}
    for tid, block in per_template.items():
        level: dict[str, Aggregate] = {}
        for metric, stats in [*block.items(), *block.get("steps", {}).items()]:
            if isinstance(stats, Mapping) and "mean" in stats and "sum" in stats:
                level[metric] = Aggregate(stats["mean"], 0)
        level["number_of_error_samples"] = Aggregate(block.get("number_of_error_samples", 0))
        level["number_of_success_samples"] = Aggregate(block.get("number_of_success_samples", 0))
        strata["template_id"][str(tid)] = level

    table = pa.Table.from_pylist(rows, schema=SAMPLES_SCHEMA)
    judged = sorted(
        {r["metric"] for r in rows if r["metric"] in _JUDGED or r["metric"] not in order}
        | {m for m in metrics if m not in scalar_metrics(mode)}
    )
    metadata = {
        "compat": mode,
        "questions": len(results),
        "judged_metrics": judged,  # LLM-judged keys present (a judge was used when non-empty)
        "step_counters": micro.get("steps", {}),
    }
    return Result("steps", table, aggs, strata=strata, metadata=metadata)
