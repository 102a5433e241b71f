"""The result of a retrieval evaluation: a :class:`ragmeter.Result` with retrieval views.

The long per-sample table (``id`` = qid, ``metric`` = canonical name, ``status`` ``ok`` or
``missing_zeroed``) and the aggregates keyed by canonical name are the foundation's contract, so
the store, gates and ``ragmeter compare`` read a retrieval result like any other. The views of
docs/retrieval.md#python-api (``summary`` and ``per_query`` under printed names, ``to_trec``,
``to_json``, ``to_csv``) are derived from it and from ``metadata["retrieval"]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragmeter import status as st
from ragmeter._version import __version__
from ragmeter.io.arrowutil import call, from_numpy, repeat_string, strings, to_numpy
from ragmeter.io.jsonutil import dumps
from ragmeter.result import SAMPLES_SCHEMA, Aggregate, Result
from ragmeter.views import require_pandas

if TYPE_CHECKING:
    import pandas as pd

    from ragmeter.io.trec import Qrels, Run
    from ragmeter.retrieval.kernels import Ranking
    from ragmeter.retrieval.names import Measure
    from ragmeter.retrieval.zscores import ZScores

__all__ = ["RetrievalResult", "build_result"]

REFERENCE = "trec_eval 10.0"


def _seq_sum(values: np.ndarray) -> float:
    """Σ added left to right in qid order (trec_eval's accumulation)."""
    if values.size == 0:
        return 0.0
    return float(np.cumsum(values.astype(np.float64))[-1])


def _summarise(kind: str, family: str, values: Any, count: int, runid: str) -> Any:
    if family == "runid":
        return runid
    if family == "num_q":
        return count
    if family == "relstring":
        return None
    if kind == "count":
        return int(np.sum(values, dtype=np.int64))
    if kind == "gm":
        return math.exp(_seq_sum(values) / count)
    return _seq_sum(values) / count


def _z_summary(kind: str, family: str, z: np.ndarray, count: int) -> float:
    if family == "num_q":
        return float(count)
    if kind == "count":
        return _seq_sum(z)
    if kind == "gm":
        return math.exp(_seq_sum(z) / count)
    return _seq_sum(z) / count


def build_result(
    *,
    measures: Sequence[Measure],
    values: Mapping[Measure, Any],
    ranking: Ranking,
    run: Run,
    qrels: Qrels,
    options: Mapping[str, Any],
    zscores: ZScores | None,
    warnings: list[str],
    run_qids: list[str] | None = None,
) -> RetrievalResult:
    """Assemble the Result from per-query values (the engine's last step)."""
    names = options.get("names", "as-requested")
    qids = ranking.qids
    count = len(qids)
    status = np.where(ranking.missing, st.MISSING_ZEROED, st.OK)
    n_missing = int(ranking.missing.sum())
    status_counts = (
        {st.OK: count - n_missing}
        if n_missing == 0
        else {st.OK: count - n_missing, st.MISSING_ZEROED: n_missing}
    )
    ids_col: list[pa.Array] = []
    metric_col: list[pa.Array] = []
    value_col: list[pa.Array] = []
    status_col: list[pa.Array] = []
    aggregates: dict[str, Aggregate] = {}
    described: list[dict[str, Any]] = []
    relstrings: dict[str, list[str]] = {}
    zper: dict[str, list[float]] = {}
    zsum: dict[str, float] = {}
    qid_arr = strings(qids)
    status_arr = strings(status.tolist())
    for m in measures:
        kind = m.fam.kind
        v = values[m]
        printed = m.printed(names)
        canonical = m.canonical
        desc = m.describe()
        desc["name"] = printed
        desc["kind"] = "count" if kind == "count" else m.value_type
        desc["summary"] = m.summary_row
        desc["per_query"] = m.per_query
        described.append(desc)
        summary = _summarise(kind, m.family, v, count, run.runid)
        if m.family == "relstring":
            relstrings[printed] = list(v)
        elif summary is not None:
            aggregates[canonical] = Aggregate(summary, count, dict(status_counts))
        if m.per_query and m.family != "relstring":
            arr = np.asarray(v, dtype=np.float64)
            ids_col.append(qid_arr)
            metric_col.append(repeat_string(canonical, count))
            value_col.append(from_numpy(arr))
            status_col.append(status_arr)
        if zscores is not None and m.family not in ("runid", "relstring"):
            zname = m.trec_name or printed
            raw = np.ones(count) if m.family == "num_q" else np.asarray(v, dtype=np.float64)
            z = zscores.convert_column(qids, zname, raw)
            if m.per_query:
                zper[printed] = z.tolist()
            zsum[printed] = _z_summary(kind, m.family, z, count)
    if ids_col:
        samples = pa.table(
            {
                "id": pa.concat_arrays(ids_col),
                "metric": pa.concat_arrays(metric_col),
                "value": pa.concat_arrays(value_col),
                "status": pa.concat_arrays(status_col),
                "detail": pa.nulls(sum(len(a) for a in ids_col), pa.string()),
            },
            schema=SAMPLES_SCHEMA,
        )
    else:
        samples = None
    missing = [q for q, miss in zip(qids, ranking.missing.tolist(), strict=True) if miss]
    all_judged = [q.decode("utf-8") for q in _all_judged(qrels)]
    judged_set = set(all_judged)
    if run_qids is None:
        run_qids = run.qid_values()
    evaluated_set = set(qids)
    skipped = [q for q in all_judged if q not in evaluated_set]
    meta_options = dict(options)
    meta_options["zscores"] = zscores.name if zscores is not None else None
    retrieval = {
        "command": "trec",
        "reference": REFERENCE,
        "names": names,
        "runid": run.runid,
        "inputs": {
            "qrels": {
                "path": qrels.name,
                "sha256": qrels.sha256,
                "topics": len(all_judged),
                "lines": len(qrels),
            },
            "run": {
                "path": run.name,
                "sha256": run.sha256,
                "runid": run.runid,
                "queries": len(run_qids),
                "lines": len(run),
            },
        },
        "options": meta_options,
        "measures": described,
        "qids": qids,
        "queries": {
            "evaluated": count,
            "missing_skipped": skipped,
            "missing_zeroed": missing,
            "unjudged_ignored": [q for q in run_qids if q not in judged_set],
        },
        "ties": {"adjacent_tied_pairs": int(ranking.extra.get("tied_pairs", 0))},
        "relstring": relstrings,
    }
    if zscores is not None:
        retrieval["zscores"] = {"file": zscores.name, "per_query": zper, "summary": zsum}
    return RetrievalResult(
        "retrieval",
        samples,
        aggregates,
        metadata={"retrieval": retrieval},
        warnings=warnings,
    )


def _all_judged(qrels: Qrels) -> list[bytes]:
    from ragmeter.io.trec import _plain

    uniq = call("unique", _plain(qrels.qid))
    return sorted(uniq.to_pylist())


class RetrievalResult(Result):
    """A :class:`ragmeter.Result` with the views of docs/retrieval.md#python-api.

    ``summary`` and ``per_query`` use the printed measure names (``map``, ``P_5``,
    ``nDCG@10``); ``aggregates``, ``values()`` and the long ``samples`` table use canonical names
    (``AP``, ``P@5``, ``nDCG@10``), and ``values()`` accepts any spelling.
    """

    # -- measure bookkeeping -----------------------------------------------------------------------
    @property
    def _r(self) -> dict[str, Any]:
        return self.metadata.get("retrieval", {})

    @property
    def measures(self) -> list[dict[str, Any]]:
        """The measures evaluated, in output order (name, trec, ir, canonical, params, …)."""
        return list(self._r.get("measures", []))

    @property
    def qids(self) -> list[str]:
        """The evaluated queries, in qid byte order."""
        return list(self._r.get("qids", []))

    @property
    def runid(self) -> str:
        return str(self._r.get("runid", ""))

    def _canonical(self, name: str) -> str:
        for m in self.measures:
            if name in (m["canonical"], m["name"], m.get("trec"), m.get("ir")):
                return m["canonical"]
        from ragmeter.retrieval.names import resolve_one

        try:
            m = resolve_one(name)
        except Exception:
            m = None
        return m.canonical if m is not None else name

    # -- views -------------------------------------------------------------------------------------
    @property
    def summary(self) -> dict[str, Any]:
        """Summary values by printed name, in output order (``runid`` and ``num_q`` included)."""
        out: dict[str, Any] = {}
        for m in self.measures:
            agg = self.aggregates.get(m["canonical"])
            if agg is not None and m.get("summary", True):
                out[m["name"]] = agg.value
        return out

    @property
    def per_query(self) -> pa.Table:
        """One row per evaluated query: ``qid`` then one column per measure (printed names)."""
        cached = self.__dict__.get("_per_query")
        if cached is not None:
            return cached
        import pyarrow.compute as pc

        qids = self.qids
        cols: dict[str, pa.Array] = {"qid": strings(qids)}
        metric = self.samples.column("metric")
        names = [m["canonical"] for m in self.measures]
        which = to_numpy(pc.index_in(metric, value_set=strings(names)), fill=-1)
        for m in self.measures:
            if not m.get("per_query", True):
                continue
            if m["family"] == "relstring":
                cols[m["name"]] = strings(self._r.get("relstring", {}).get(m["name"], []))
                continue
            rows = self.samples.filter(from_numpy(which == names.index(m["canonical"])))
            vals = rows.column("value")
            if m.get("kind") == "count":
                vals = vals.cast(pa.int64())
            cols[m["name"]] = vals.combine_chunks() if isinstance(vals, pa.ChunkedArray) else vals
        table = pa.table(cols)
        self.__dict__["_per_query"] = table
        return table

    def values(self, metric: str) -> dict[str, float]:
        """qid → value of one measure, under any spelling (``nDCG@10``, ``ndcg_cut_10``)."""
        return super().values(self._canonical(metric))

    def statuses(self, metric: str) -> dict[str, str]:
        return super().statuses(self._canonical(metric))

    def to_pandas(self, *, long: bool = False) -> pd.DataFrame:
        """``per_query`` as a DataFrame (``long=True``: the long per-sample table)."""
        if long:
            return super().to_pandas()
        require_pandas("to_pandas()")
        return self.per_query.to_pandas()

    # -- outputs -----------------------------------------------------------------------------------
    def to_trec(self, *, queries: bool = False, summary: bool = True, digits: int = 4) -> str:
        """trec_eval's text layout (byte-identical to trec_eval 10.0 for ``digits=4``)."""
        from ragmeter.retrieval.textout import format_trec

        return format_trec(self, queries=queries, summary=summary, digits=digits)

    def to_document(self, *, per_query: bool | None = None) -> dict[str, Any]:
        """The ``ragmeter trec --json`` document (a serialised Result: ``from_dict`` reads it)."""
        r = self._r
        with_q = (
            bool(r.get("options", {}).get("per_query", True)) if per_query is None else per_query
        )
        summary = self.summary
        doc: dict[str, Any] = {
            "ragmeter": {"version": __version__, "command": "trec", "reference": REFERENCE},
            "inputs": r.get("inputs", {}),
            "options": r.get("options", {}),
            "measures": [
                {k: m[k] for k in ("name", "trec", "ir", "canonical", "params", "reference")}
                for m in self.measures
            ],
            "summary": summary,
        }
        if with_q:
            table = self.per_query
            cols = [c for c in table.column_names if c != "qid"]
            data = {c: table.column(c).to_pylist() for c in cols}
            doc["per_query"] = {
                q: {c: data[c][i] for c in cols}
                for i, q in enumerate(table.column("qid").to_pylist())
            }
        doc["queries"] = r.get("queries", {})
        doc["ties"] = r.get("ties", {})
        if "zscores" in r:
            doc["zscores"] = r["zscores"]
        doc["warnings"] = list(self.warnings)
        doc.update({k: v for k, v in self.to_dict(samples=with_q).items() if k != "warnings"})
        return doc

    def to_json(self, *, indent: int | None = None, samples: bool | None = None) -> str:  # type: ignore[override]
        """The ``ragmeter trec --json`` document (full-precision floats, integer counts)."""
        return dumps(self.to_document(per_query=samples), indent=indent)

    def to_csv(self, *, queries: bool | None = None) -> str:
        """``runid,qid,measure,value`` rows: per query (when kept), then the summary (``all``)."""
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["runid", "qid", "measure", "value"])
        runid = self.runid
        with_q = (
            bool(self._r.get("options", {}).get("per_query", True)) if queries is None else queries
        )
        if with_q:
            table = self.per_query
            cols = [c for c in table.column_names if c != "qid"]
            data = {c: table.column(c).to_pylist() for c in cols}
            for i, q in enumerate(table.column("qid").to_pylist()):
                for c in cols:
                    w.writerow([runid, q, c, _csv_value(data[c][i])])
        for name, value in self.summary.items():
            if name == "runid":
                continue
            w.writerow([runid, "all", name, _csv_value(value)])
        return buf.getvalue()

    def to_ultrarag(self, *, order: Sequence[str] | None = None) -> str:
        """The dictionary UltraRAG's ``evaluate_trec`` saves (JSON, indent 4).

        ``order``: qids in the order UltraRAG sums them (first appearance in the run file); the
        means are then ``sum(values in that order) / n`` as UltraRAG computes them, which needs
        the per-query values. Without it, the summary means (qid byte order).
        """
        from ragmeter.retrieval.textout import format_ultrarag

        return format_ultrarag(self, order=order)


def _csv_value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)
