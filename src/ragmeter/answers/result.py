"""The result of an answers evaluation: a :class:`~ragmeter.Result` with UltraRAG-shaped views.

``per_sample`` holds one column per metric in input order (``None`` where a sample was not
scored), ``avg`` the means over ``ok`` samples, ``meta`` the options, counts and warnings;
``to_ultrarag_dict()`` and ``rows()`` are the command's stdout object and ``--per-sample``
lines. The long table and aggregates of the base class key everything by canonical metric name
in sorted-id order. The means, though, are summed in input (file) order with Python's ``sum``,
as UltraRAG's ``compute_metrics``, FlashRAG's metrics and the SQuAD v2 script do, so that every
profile's averages are bit-identical to its reference (docs/answers.md, "Averages").
"""

from __future__ import annotations

import gc
import json
import unicodedata
from collections import Counter
from collections.abc import Sequence
from itertools import compress
from typing import Any

from ragmeter import status as st
from ragmeter._version import __version__
from ragmeter.answers.columns import ScoreColumns
from ragmeter.answers.options import Options
from ragmeter.answers.registry import task_of
from ragmeter.result import Aggregate, Result

__all__ = ["AnswersResult", "build_result"]

_META_KEYS = (
    "version",
    "profile",
    "tokenizer",
    "stem",
    "agg",
    "empty_gold",
    "n_rows",
    "n_scored",
    "status_counts",
    "warnings",
)


class AnswersResult(Result):
    """:class:`~ragmeter.Result` of :func:`ragmeter.answers.evaluate`, with its views."""

    per_sample: dict[str, list[Any]]
    requested: tuple[str, ...]

    @property
    def avg(self) -> dict[str, float | None]:
        """Mean of each metric over ``ok`` samples (``None`` when no sample was scored)."""
        return {m: self.aggregates[m].value for m in self.per_sample_metrics}

    @property
    def meta(self) -> dict[str, Any]:
        return self.metadata

    @property
    def per_sample_metrics(self) -> tuple[str, ...]:
        return tuple(self.metadata["outputs"])

    def to_ultrarag_dict(self, *, summary_only: bool = False) -> dict[str, Any]:
        """UltraRAG's ``compute_metrics`` shape: every list, then every ``avg_<metric>``, then
        ragmeter's metadata under ``ragmeter``."""
        out: dict[str, Any] = {}
        if not summary_only:
            for m in self.requested:
                out[m] = list(self.per_sample[m])
        for m in self.requested:
            out[f"avg_{m}"] = self.aggregates[m].value
        out["ragmeter"] = {k: self.metadata[k] for k in _META_KEYS if k in self.metadata} | {
            k: self.metadata[k]
            for k in ("gold_regex", "lsum_split", "unicode_version", "embedder")
            if k in self.metadata
        }
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One dict per input row: id, status, every metric value, ``flags`` (``--per-sample``)."""
        cols = self.per_sample
        outputs = self.per_sample_metrics
        extra = [k for k in ("str_em_hit",) if k in cols]
        rows = []
        for i, sid in enumerate(cols["id"]):
            row: dict[str, Any] = {"id": sid, "status": cols["status"][i]}
            for m in outputs:
                row[m] = cols[m][i]
            for k in extra:
                row[k] = cols[k][i]
            row["flags"] = list(cols["flags"][i])
            rows.append(row)
        return rows

    def for_task(self, task: str) -> Result:
        """Only the metrics of ``task`` (``answers`` or ``semantic``), as a plain Result."""
        import pyarrow as pa
        import pyarrow.compute as pc

        wanted = [m for m in self.metrics if task_of(m) == task]
        if not wanted:
            raise KeyError(f"no {task} metrics in this result")
        mask = pc.is_in(self.samples.column("metric"), value_set=pa.array(wanted))
        meta = dict(self.metadata)
        meta["task"] = task
        return Result(
            task,
            self.samples.filter(mask),
            {m: self.aggregates[m] for m in wanted},
            metadata=meta,
            warnings=self.warnings,
        )


def _warning_lines(n: int, counts: dict[str, int], no_gold: int) -> list[str]:
    lines = []
    if counts.get("rouge_nonascii"):
        lines.append(
            f"warning: {counts['rouge_nonascii']} of {n} samples contain letters or digits outside "
            "a-z/0-9 that the rouge-score tokenizer drops (e.g. 'café' -> 'caf'; CJK scores 0). "
            "Use --tokenizer unicode."
        )
    if counts.get("rouge_upstream_error"):
        lines.append(
            f"warning: {counts['rouge_upstream_error']} of {n} samples make pltrdy rouge raise "
            "(a text that is empty or only full stops); FlashRAG drops ROUGE for the whole "
            "dataset there, ragmeter scores that gold 0.0 (flag rouge_upstream_error)"
        )
    if counts.get("empty_golds_dropped"):
        lines.append(
            f"warning: {counts['empty_golds_dropped']} gold answers normalise to '' and were "
            f"dropped (--empty-gold drop); {no_gold} samples have no gold left (status no_gold)"
        )
    if counts.get("missing_predictions"):
        lines.append(
            f"warning: {counts['missing_predictions']} of {n} samples have no prediction "
            "(null or missing); scored as ''"
        )
    if counts.get("empty_text"):
        lines.append(
            f"warning: {counts['empty_text']} of {n} samples have an empty prediction, gold or "
            "question for semantic similarity; that similarity is 0.0 (flag empty_text)"
        )
    if counts.get("groups_dropped"):
        lines.append(
            f"warning: {counts['groups_dropped']} str-em-alce answer groups have no alias left "
            "after normalisation and were dropped"
        )
    return lines


def build_result(
    opts: Options,
    ids: Sequence[str | int],
    scores: Sequence[Any] | ScoreColumns,
    *,
    embedder: dict[str, Any] | None = None,
) -> AnswersResult:
    """Assemble an :class:`AnswersResult` from per-sample :class:`SampleScore` objects, or from
    their :class:`~ragmeter.answers.columns.ScoreColumns` (what Dask workers send)."""
    enabled = gc.isenabled()
    # a million new lists (flags, columns) would set off full collections that walk every
    # object alive, about 2 s per 1M answers; nothing built here is cyclic
    gc.disable()
    try:
        outputs = opts.outputs()
        if isinstance(scores, ScoreColumns):
            cols = scores
        else:
            hits = "str-em-alce" in opts.metrics
            cols = ScoreColumns.from_scores(scores, outputs, str_em_hit=hits)
        return _build(opts, ids, cols, outputs, embedder)
    finally:
        if enabled:
            gc.enable()


def _build(
    opts: Options,
    ids: Sequence[str | int],
    cols: ScoreColumns,
    outputs: Sequence[str],
    embedder: dict[str, Any] | None,
) -> AnswersResult:
    n = len(cols)
    flags = cols.flag_lists()
    per_sample: dict[str, list[Any]] = {"id": list(ids), "status": cols.status, "flags": flags}
    for m in outputs:
        per_sample[m] = cols.values[m]
    if cols.str_em_hit is not None:
        per_sample["str_em_hit"] = cols.str_em_hit

    counts: dict[str, int] = {}
    flag_counts = Counter(f for fl in cols.flags.values() for f in set(fl))
    for flag, key in (
        ("rouge_nonascii", "rouge_nonascii"),
        ("rouge_upstream_error", "rouge_upstream_error"),
        ("missing_prediction", "missing_predictions"),
        ("empty_text", "empty_text"),
    ):
        if flag_counts.get(flag):
            counts[key] = flag_counts[flag]
    if cols.empty_golds_dropped:
        counts["empty_golds_dropped"] = cols.empty_golds_dropped
    if cols.groups_dropped:
        counts["groups_dropped"] = cols.groups_dropped

    status_counts = Counter(per_sample["status"])
    status_counts_sorted = {k: status_counts[k] for k in st.STATUSES if status_counts.get(k)}
    no_gold = status_counts.get(st.NO_GOLD, 0)
    meta: dict[str, Any] = {
        "version": __version__,
        "profile": opts.profile,
        "tokenizer": opts.tokenizer,
        "stem": opts.stem,
        "agg": {m: opts.agg[m] for m in opts.metrics if m in opts.agg},
        "empty_gold": opts.empty_gold,
        "n_rows": n,
        "n_scored": status_counts.get(st.OK, 0),
        "status_counts": status_counts_sorted,
        "warnings": counts,
        "metrics": list(opts.metrics),
        "outputs": list(outputs),
    }
    if opts.gold_regex:
        meta["gold_regex"] = True
    if "rouge-lsum" in opts.metrics:
        meta["lsum_split"] = opts.lsum_split
    if opts.tokenizer == "unicode":
        meta["unicode_version"] = unicodedata.unidata_version
    if embedder is not None:
        meta["embedder"] = embedder
    tasks = {task_of(m) for m in opts.metrics}
    task = "answers" if "answers" in tasks else "semantic"
    if len(tasks) > 1:
        meta["metric_tasks"] = {m: task_of(m) for m in outputs}

    str_ids = [str(i) for i in ids]
    details: list[str | None] = [None] * n
    for i, fl in cols.flags.items():
        details[i] = json.dumps({"flags": fl}, ensure_ascii=False)
    metric_statuses = cols.statuses
    result = AnswersResult.from_columns(
        task,
        str_ids,
        {m: per_sample[m] for m in outputs},
        statuses=metric_statuses,
        aggregates={m: file_order_mean(per_sample[m], metric_statuses[m]) for m in outputs},
        details=dict.fromkeys(outputs, details) if cols.flags else None,
        metadata=meta,
        warnings=_warning_lines(n, counts, no_gold),
    )
    result.per_sample = per_sample
    result.requested = tuple(opts.metrics)
    return result


def file_order_mean(values: Sequence[float | None], statuses: Sequence[str]) -> Aggregate:
    """Mean of the scored values in input order, summed with Python's ``sum``.

    UltraRAG (``sum(scores) / len(scores)``), FlashRAG (``sum(metric_score_list) / len(...)``)
    and the SQuAD v2 script (``sum(exact_scores.values()) / total``) all add in file order with
    the built-in ``sum``; the last bits of a mean depend on that order.

    >>> file_order_mean([0.1, None, 0.2, 0.3], ["ok", "no_gold", "ok", "ok"]).value
    0.20000000000000004
    """
    counts = Counter(statuses)
    status_counts = {k: counts[k] for k in st.STATUSES if counts.get(k)}
    if len(values) != len(statuses):
        raise ValueError(f"{len(values)} values for {len(statuses)} statuses")
    # compress() walks a million samples at C speed; the sum itself stays Python's, in order
    kept = list(compress(values, map(st.SCORED.__contains__, statuses)))
    if None in kept:
        kept = [v for v in kept if v is not None]
    scored = list(map(float, kept))
    if not scored:
        return Aggregate(None, 0, status_counts, reason="no scored samples")
    return Aggregate(sum(scored) / len(scored), len(scored), status_counts)
