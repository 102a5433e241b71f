"""Source breakdown for hybrid and GraphRAG retrieval
(docs/retrieval.md#source-breakdown-hybrid-and-graphrag-retrieval).

When each retrieved document says which retriever produced it (the TREC tag, a ``source``
column, or a JSONL ``--source-field``), report for each source s and cutoff k:

* ``share@k``: the fraction of the filled top-k slots, summed over queries, that came from s
  (slots a short ranking leaves empty are not counted);
* ``top1``: the fraction of queries whose rank-1 document came from s;
* ``rel_share@k`` (with qrels): the fraction of the relevant documents in the top k that came
  from s.

Rankings follow trec_eval's (score descending, docno descending). With qrels, only the queries in
both files are counted, as in :func:`~ragmeter.retrieval.evaluate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.errors import InputError
from ragmeter.io.trec import Origin, Run, to_numpy

__all__ = ["breakdown_csv", "breakdown_dict", "runs_by_source", "source_breakdown"]


def _ranked(run: Any, source: str) -> tuple[pa.Table, np.ndarray]:
    import os

    from ragmeter.io.trec import _plain, as_run, read_run

    # a TREC file's source is its tag column, as for `ragmeter trec --by-source`
    is_path = isinstance(run, (str, os.PathLike))
    r = read_run(run, with_source=True) if is_path else as_run(run, source=source)
    if r.source is None:
        raise InputError(
            "the run has no source (give a 'source' column, --source-field for JSONL, or use the "
            "TREC tag as the source)",
            location="run",
        )
    table = pa.table(
        {
            "qid": _plain(r.qid).cast(pa.binary()),
            "docno": r.docno.cast(pa.binary()),
            "score": pa.array(r.score),
            "source": _plain(r.source).cast(pa.string()),
        }
    )
    table = table.sort_by([("qid", "ascending"), ("score", "descending"), ("docno", "descending")])
    q = table.column("qid").combine_chunks()
    change = pc.not_equal(q.slice(1), q.slice(0, len(q) - 1)).to_numpy(zero_copy_only=False)
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    lens = np.diff(np.append(starts, len(q)))
    rank = np.arange(len(q)) - np.repeat(starts, lens) + 1
    return table, rank


def source_breakdown(
    run: Any,
    qrels: Any = None,
    *,
    ks: Sequence[int] = (1, 5, 10),
    source: str = "source",
    relevance_level: int = 1,
) -> pa.Table:
    """One row per source: ``source``, ``queries``, ``top1``, ``share@k``… and ``rel_share@k``….

    >>> import pyarrow as pa
    >>> run = pa.table({"qid": ["q1", "q1", "q2", "q2"], "docno": ["a", "b", "c", "d"],
    ...                 "score": [2.0, 1.0, 2.0, 1.0],
    ...                 "source": ["bm25", "dense", "dense", "bm25"]})
    >>> source_breakdown(run, ks=[1, 2]).to_pylist()  # doctest: +NORMALIZE_WHITESPACE
    [{'source': 'bm25', 'queries': 2, 'top1': 0.5, 'share@1': 0.5, 'share@2': 0.5},
     {'source': 'dense', 'queries': 2, 'top1': 0.5, 'share@1': 0.5, 'share@2': 0.5}]
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"ks must be integers ≥ 1, not {ks!r}")
    table, rank = _ranked(run, source)
    grade = None
    if qrels is not None:
        from ragmeter.io.trec import Origin, Run, as_qrels
        from ragmeter.retrieval.kernels import build_qrels_index, join_run

        index = build_qrels_index(as_qrels(qrels))
        joined = join_run(
            Run(
                pa.chunked_array([table.column("qid").combine_chunks()]),
                pa.chunked_array([table.column("docno").combine_chunks()]),
                to_numpy(table.column("score")),
                "",
                Origin("run"),
            ),
            index,
        )
        keep = joined.qcode >= 0
        grade = np.full(len(rank), -1, dtype=np.int64)
        grade[joined.judged_rows] = joined.judged_grades
        table = table.filter(pa.array(keep))
        rank, grade = rank[keep], grade[keep]
    srcs = table.column("source").to_numpy(zero_copy_only=False)
    qids = table.column("qid").to_numpy(zero_copy_only=False)
    names = sorted(set(srcs.tolist()))
    nq = len(set(qids.tolist()))
    rows = []
    for s in names:
        mine = srcs == s
        row: dict[str, Any] = {"source": s, "queries": nq}
        row["top1"] = float(np.count_nonzero(mine & (rank == 1))) / nq if nq else 0.0
        for k in ks:
            filled = rank <= k
            total = int(np.count_nonzero(filled))
            row[f"share@{k}"] = int(np.count_nonzero(filled & mine)) / total if total else 0.0
        if grade is not None:
            rel = grade >= relevance_level
            for k in ks:
                in_k = (rank <= k) & rel
                total = int(np.count_nonzero(in_k))
                row[f"rel_share@{k}"] = (
                    int(np.count_nonzero(in_k & mine)) / total if total else None
                )
        rows.append(row)
    return pa.Table.from_pylist(rows)


def runs_by_source(run: Any, *, source: str = "source") -> dict[str, Any]:
    """Split a run into one run per source (each then evaluates with ``evaluate``)."""
    from ragmeter.io.trec import _plain, as_run

    r = as_run(run, source=source)
    if r.source is None:
        raise InputError("the run has no source column", location="run")
    src = _plain(r.source).cast(pa.string())
    out = {}
    for name in sorted(set(src.to_pylist())):
        mask = pc.equal(src, name)
        rows = np.flatnonzero(
            mask.to_numpy(zero_copy_only=False)
            if isinstance(mask, pa.Array)
            else np.concatenate([c.to_numpy(zero_copy_only=False) for c in mask.chunks])
        )
        idx = pa.array(rows)
        out[name] = Run(
            _plain(r.qid).take(idx),
            r.docno.take(idx),
            r.score[rows],
            name,
            Origin(f"run[{name}]", labels=lambda i, rows=rows: r.origin.where(int(rows[i]))),
        )
    return out


def breakdown_dict(run: Any, qrels: Any, *, ks: Sequence[int]) -> dict[str, dict[str, Any]]:
    table = source_breakdown(run, qrels, ks=ks)
    return {row.pop("source"): row for row in table.to_pylist()}


def breakdown_csv(run: Any, qrels: Any, *, ks: Sequence[int]) -> str:
    """Rows ``runid,all,<metric>[source=<name>],value`` appended to the CSV output."""
    import csv
    import io

    from ragmeter.io.trec import as_run

    runid = as_run(run).runid
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for name, row in breakdown_dict(run, qrels, ks=ks).items():
        for metric, value in row.items():
            if metric == "queries" or value is None:
                continue
            w.writerow([runid, "all", f"{metric}[source={name}]", repr(float(value))])
    return buf.getvalue()
