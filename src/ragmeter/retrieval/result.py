"""The result of a retrieval evaluation: a :class:`ragmeter.Result` with retrieval views.

The long per-sample table (``id`` = qid, ``metric`` = canonical name, ``status`` ``ok`` or
``missing_zeroed``) and the aggregates keyed by canonical name are the foundation's contract, so
the store, gates and ``ragmeter compare`` read a retrieval result like any other. The views of
docs/retrieval.md#python-api (``summary`` and ``per_query`` under printed names, ``to_trec``,
``to_json``, ``to_csv``) are derived from it and from ``metadata["retrieval"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ragmeter._version import __version__
from ragmeter.io.arrowutil import from_numpy, repeat_string, strings, to_numpy
from ragmeter.io.jsonutil import dumps
from ragmeter.result import SAMPLES_SCHEMA, Aggregate, Result
from ragmeter.retrieval.report import REFERENCE, Report
from ragmeter.views import require_pandas

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["RetrievalResult", "build_result"]


def build_result(report: Report) -> RetrievalResult:
    """The :class:`RetrievalResult` of a :class:`Report`: its long per-sample table (one row per
    query and per-query measure) and its aggregates keyed by canonical name."""
    qids = report.qids
    count = len(qids)
    ids_col: list[pa.Array] = []
    metric_col: list[pa.Array] = []
    value_col: list[pa.Array] = []
    status_col: list[pa.Array] = []
    qid_arr = strings(qids)
    status_arr = strings(report.status)
    for canonical, arr in report.columns:
        ids_col.append(qid_arr)
        metric_col.append(repeat_string(canonical, count))
        value_col.append(from_numpy(arr))
        status_col.append(status_arr)
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
    aggregates = {
        canonical: Aggregate(value, count, dict(report.status_counts))
        for canonical, value in report.summaries.items()
    }
    return RetrievalResult(
        "retrieval",
        samples,
        aggregates,
        metadata=report.metadata,
        warnings=report.warnings,
    )


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

    def query_columns(self) -> tuple[list[str], dict[str, list[Any]]]:
        """(qids, printed name -> per-query values) of the per-query measures."""
        table = self.per_query
        names = [c for c in table.column_names if c != "qid"]
        return table.column("qid").to_pylist(), {c: table.column(c).to_pylist() for c in names}

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
