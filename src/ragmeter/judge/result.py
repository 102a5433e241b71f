"""The judge's :class:`~ragmeter.result.Result`: per-sample records and the summary.

The per-sample table has one row per sample × output metric (``answer_correctness``,
``answer_recall``, …) with the value, the status and a detail: the reason for a non-``ok``
row, and for the headline row of an ``ok`` sample a JSON object with the judge's explanation,
the companion keys, the spread over repeats and ``cache_keys``, the judge-cache entries of its
calls (not the run's accounting, so that a cached re-run gives an identical table; calls and
cost are in the records). A non-``ok`` headline row whose calls got replies has
``{"reason", "cache_keys"}``. Aggregates are means over
``ok`` samples (``--no-claims-as`` folds ``no_claims`` in); ``judge`` and ``cost`` are
metadata. :attr:`JudgeResult.records` are the ``--per-sample`` lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ragmeter import status as st
from ragmeter.io.jsonutil import dumps
from ragmeter.result import Aggregate, Result, ordered_mean

if TYPE_CHECKING:
    from ragmeter.judge.config import JudgeConfig
    from ragmeter.judge.metrics._common import Sample
    from ragmeter.judge.runtime import JudgeRuntime

__all__ = ["JudgeResult", "build_result", "headline"]


class Plan(Protocol):
    """What :func:`build_result` reads of a :class:`ragmeter.judge.engine.Plan` (a protocol, so
    the result never imports the engine, which builds results)."""

    @property
    def pipelines(self) -> tuple[str, ...]: ...

    @property
    def outputs(self) -> dict[str, tuple[str, ...]]: ...

    @property
    def requested(self) -> dict[str, str]: ...

    @property
    def metric_names(self) -> list[str]: ...


# per-run accounting stays in the records: the table is identical when a re-run hits the cache
_RUN_ONLY = frozenset(
    {
        "id",
        "metric",
        "value",
        "status",
        "calls",
        "cache_hits",
        "tokens_in",
        "tokens_out",
        "cost_usd",
    }
)


def headline(pipe: str, outputs: Sequence[str]) -> str:
    """The metric a pipeline's per-sample record is named after."""
    if pipe in ("retrieval_answer", "retrieval_context"):
        return f"{pipe}_f1"
    return outputs[0]


class JudgeResult(Result):
    """A :class:`Result` plus the per-sample records and the summary view."""

    records: list[dict[str, Any]]
    ledger_rows: list[dict[str, Any]]

    def summary_json(self) -> dict[str, Any]:
        """``{"metrics": …, "judge": …, "cost": …}`` as printed by ``ragmeter judge``."""
        metrics: dict[str, Any] = {}
        extra = self.metadata.get("metric_summaries", {})
        for name, agg in self.aggregates.items():
            counts = dict(agg.status_counts)
            metrics[name] = {
                "mean": agg.value,
                "n": sum(counts.values()),
                "n_ok": counts.get(st.OK, 0),
                "status_counts": counts,
                **extra.get(name, {}),
            }
            if agg.reason:
                metrics[name]["reason"] = agg.reason
        cost = dict(self.metadata.get("cost") or {})
        if self.metadata.get("cost_per_metric"):
            cost["per_metric"] = self.metadata["cost_per_metric"]
        out = {"metrics": metrics, "judge": self.metadata.get("judge"), "cost": cost}
        if self.metadata.get("no_claims_as") is not None:
            out["no_claims_as"] = self.metadata["no_claims_as"]
        if self.metadata.get("rubric_steps"):
            out["rubric_steps"] = self.metadata["rubric_steps"]
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def _no_judge_outcome(pipe: str, outputs: Sequence[str], reason: str) -> Any:
    from ragmeter.judge.metrics._common import Outcome, Part

    return Outcome({o: Part(st.NEEDS_LLM, reason) for o in outputs})


def build_result(
    samples: Sequence[Sample],
    plan: Plan,
    results: Mapping[tuple[str, str], Any],
    *,
    config: JudgeConfig,
    runtime: JudgeRuntime | None,
    run_id: str,
    no_claims_as: float | None = None,
    skipped: str | None = None,
    warnings: Sequence[str] = (),
    rubric_steps: Mapping[str, Sequence[str]] | None = None,
    embedder: Mapping[str, Any] | None = None,
) -> JudgeResult:
    from ragmeter.judge.repeats import combine_repeats
    from ragmeter.judge.runtime import CallStats

    repeats = max(1, config.repeats)
    names = plan.metric_names
    ids = [s.id for s in samples]
    values: dict[str, list[float | None]] = {m: [] for m in names}
    statuses: dict[str, list[str]] = {m: [] for m in names}
    details: dict[str, list[str | None]] = {m: [] for m in names}
    spreads_by_metric: dict[str, list[float]] = {m: [] for m in names}
    records: list[dict[str, Any]] = []

    for sample in samples:
        for pipe in plan.pipelines:
            outputs = plan.outputs[pipe]
            rs = results.get((sample.id, pipe))
            if rs is None:
                reason = "no judge configured" if skipped else "not evaluated"
                outs = [_no_judge_outcome(pipe, outputs, reason)]
                stats = CallStats()
            else:
                outs = [rs.outcomes[r] for r in sorted(rs.outcomes)]
                stats = rs.stats
            parts, spreads, explanation, fields = combine_repeats(pipe, outs, repeats)
            head = headline(pipe, outputs)
            hp = parts[head]
            record: dict[str, Any] = {
                "id": sample.id,
                "metric": head,
                "value": hp.value,
                "status": hp.status,
                "detail": hp.detail,
            }
            for o in outputs:
                if o == head:
                    continue
                record[o] = parts[o].value
                if parts[o].status != st.OK:
                    record[f"{o}_status"] = parts[o].status
                    record[f"{o}_detail"] = parts[o].detail
            record.update(
                {
                    "repeats": repeats,
                    "spread": spreads.get(head) if repeats > 1 else None,
                    "calls": stats.calls,
                    "cache_hits": stats.cache_hits,
                    "tokens_in": stats.tokens_in,
                    "tokens_out": stats.tokens_out,
                    "cost_usd": None if stats.cost_usd is None else round(stats.cost_usd, 10),
                    "prompt_versions": list(stats.prompt_versions),
                    # repeats finish in any order; within one, calls are in pipeline order
                    "cache_keys": sorted(stats.cache_keys, key=lambda c: c["repeat"]),
                }
            )
            record.update(fields)
            record["explanation"] = explanation
            if sample.template_id is not None:
                record["template_id"] = sample.template_id
            records.append(record)
            for o in outputs:
                p = parts[o]
                values[o].append(p.value)
                statuses[o].append(p.status)
                if p.status != st.OK:
                    if o == head and record["cache_keys"]:
                        # a failed sample's replies are the ones worth reading
                        details[o].append(
                            dumps({"reason": p.detail, "cache_keys": record["cache_keys"]})
                        )
                    else:
                        details[o].append(p.detail)
                elif o == head:
                    details[o].append(
                        dumps({k: v for k, v in record.items() if k not in _RUN_ONLY})
                    )
                else:
                    details[o].append(p.detail)
                sp = spreads.get(o)
                if sp and sp.get("std") is not None:
                    spreads_by_metric[o].append(sp["std"])

    aggregates: dict[str, Aggregate] = {}
    order = sorted(range(len(ids)), key=ids.__getitem__)
    import numpy as np

    for m in names:
        vals, n_status = [], []
        for i in order:
            s = statuses[m][i]
            n_status.append(s)
            if s == st.OK:
                vals.append(values[m][i])
            elif s == st.NO_CLAIMS and no_claims_as is not None:
                vals.append(float(no_claims_as))
        counts = {s: n_status.count(s) for s in st.STATUSES if s in n_status}
        if vals:
            aggregates[m] = Aggregate(
                ordered_mean(np.array(vals, dtype=np.float64)), len(vals), counts
            )
        else:
            aggregates[m] = Aggregate(None, 0, counts, reason="no ok samples")

    metric_summaries = {
        m: {
            "mean_std": (sum(spreads_by_metric[m]) / len(spreads_by_metric[m]))
            if repeats > 1 and spreads_by_metric[m]
            else None,
            "max_std": max(spreads_by_metric[m]) if repeats > 1 and spreads_by_metric[m] else None,
        }
        for m in names
    }
    judge_meta = (
        runtime.metadata()
        if runtime is not None
        else {**config.public(), "configured": config.configured}
    )
    cost = (
        runtime.ledger.total.to_dict()
        if runtime is not None
        else {
            "calls_sent": 0,
            "cache_hits": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "usd": 0.0,
            "usd_unknown_calls": 0,
        }
    )
    if runtime is not None and runtime.price is not None and runtime.price.as_of:
        cost["prices_as_of"] = runtime.price.as_of
    metadata = {
        "judge": judge_meta,
        "cost": cost,
        # by name: the ledger meets the metrics in the order their calls finish
        "cost_per_metric": {k: v.to_dict() for k, v in sorted(runtime.ledger.per_metric.items())}
        if runtime is not None
        else {},
        "run_id": run_id,
        "repeats": repeats,
        "no_claims_as": no_claims_as,
        "skipped": skipped,
        "requested": dict(plan.requested),
        "metric_params": {
            "per_chunk": config.per_chunk,
            "entity_match": config.entity_match,
            "relevance_questions": config.relevance_questions,
            "independent": config.independent,
        },
        "rubric_steps": {k: list(v) for k, v in (rubric_steps or {}).items()},
        "metric_summaries": metric_summaries,
    }
    if embedder is not None:
        metadata["embedder"] = dict(embedder)
    base = Result.from_columns(
        "judge",
        ids,
        values,
        statuses=statuses,
        details=details,
        aggregates=aggregates,
        metadata=metadata,
        warnings=list(warnings),
    )
    res = JudgeResult(
        "judge", base.samples, base.aggregates, metadata=base.metadata, warnings=base.warnings
    )
    res.records = records
    res.ledger_rows = runtime.ledger.rows if runtime is not None else []
    return res
