"""The numbers of one evaluation, before they become a :class:`RetrievalResult`.

A :class:`Report` holds what the engine computed (per-query values, the summary of each
measure, the metadata of the JSON output of docs/retrieval.md#command-line) in numpy and Python
values only. trec_eval's text layout is printed from it directly, so ``ragmeter trec`` never
builds the Arrow-backed result (and, for a small file, never imports Arrow);
:func:`ragmeter.retrieval.result.build_result` turns the same Report into the
:class:`RetrievalResult` of the Python API, the JSON and CSV outputs. Summaries are computed
here, once, for both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter import status as st

if TYPE_CHECKING:
    from ragmeter.io.trec.containers import Qrels
    from ragmeter.retrieval.kernels import Ranking
    from ragmeter.retrieval.names import Measure
    from ragmeter.retrieval.zscores import ZScores

__all__ = ["REFERENCE", "Report", "build_report"]

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


class Report:
    """What one evaluation computed (the fields :func:`build_result` and the text layout read).

    (A plain class: a dataclass costs ~1 ms of ``ragmeter trec``'s start to create.)
    """

    def __init__(
        self,
        measures: list[dict[str, Any]],
        summaries: dict[str, Any],
        columns: list[tuple[str, np.ndarray]],
        status: list[str],
        status_counts: dict[str, int],
        metadata: dict[str, Any],
        warnings: list[str] | None = None,
    ) -> None:
        self.measures = measures  # described measures, in output order
        self.summaries = summaries  # canonical name -> summary value
        self.columns = columns  # (canonical, float64 per query) of per-query measures
        self.status = status  # per evaluated query: ok or missing_zeroed
        self.status_counts = status_counts
        self.metadata = metadata  # {"retrieval": ...}
        self.warnings: list[str] = [] if warnings is None else warnings

    @property
    def qids(self) -> list[str]:
        return list(self.metadata["retrieval"]["qids"])

    @property
    def summary(self) -> dict[str, Any]:
        """Summary values by printed name, in output order (as RetrievalResult.summary)."""
        return {
            m["name"]: self.summaries[m["canonical"]]
            for m in self.measures
            if m["canonical"] in self.summaries and m.get("summary", True)
        }

    def query_columns(self) -> tuple[list[str], dict[str, list[Any]]]:
        """(qids, printed name -> per-query values) of the per-query measures."""
        values = dict(reversed(self.columns))  # the first column of a canonical name wins
        relstrings = self.metadata["retrieval"].get("relstring", {})
        out: dict[str, list[Any]] = {}
        for m in self.measures:
            if not m.get("per_query", True):
                continue
            if m["family"] == "relstring":
                out[m["name"]] = list(relstrings.get(m["name"], []))
            elif m.get("kind") == "count":
                out[m["name"]] = values[m["canonical"]].astype(np.int64).tolist()
            else:
                out[m["name"]] = values[m["canonical"]].tolist()
        return self.qids, out


def build_report(
    *,
    measures: Sequence[Measure],
    values: Mapping[Measure, Any],
    ranking: Ranking,
    run: Any,
    qrels: Qrels,
    judged_qids: Sequence[bytes],
    options: Mapping[str, Any],
    zscores: ZScores | None,
    warnings: list[str],
    run_qids: list[str] | None = None,
) -> Report:
    """Summarise the per-query values of every measure (the engine's last step).

    ``judged_qids``: the distinct qids of the qrels in byte order (the qrels index has them).
    """
    names = options.get("names", "as-requested")
    qids = ranking.qids
    count = len(qids)
    n_missing = int(ranking.missing.sum())
    status_counts = (
        {st.OK: count - n_missing}
        if n_missing == 0
        else {st.OK: count - n_missing, st.MISSING_ZEROED: n_missing}
    )
    status = [st.MISSING_ZEROED if miss else st.OK for miss in ranking.missing.tolist()]
    summaries: dict[str, Any] = {}
    columns: list[tuple[str, np.ndarray]] = []
    described: list[dict[str, Any]] = []
    relstrings: dict[str, list[str]] = {}
    zper: dict[str, list[float]] = {}
    zsum: dict[str, float] = {}
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
            summaries[canonical] = summary
        if m.per_query and m.family != "relstring":
            columns.append((canonical, np.asarray(v, dtype=np.float64)))
        if zscores is not None and m.family not in ("runid", "relstring"):
            zname = m.trec_name or printed
            raw = np.ones(count) if m.family == "num_q" else np.asarray(v, dtype=np.float64)
            z = zscores.convert_column(qids, zname, raw)
            if m.per_query:
                zper[printed] = z.tolist()
            zsum[printed] = _z_summary(kind, m.family, z, count)
    missing = [q for q, miss in zip(qids, ranking.missing.tolist(), strict=True) if miss]
    all_judged = [q.decode("utf-8") for q in judged_qids]
    judged_set = set(all_judged)
    if run_qids is None:
        run_qids = run.qid_values()
    evaluated_set = set(qids)
    skipped = [q for q in all_judged if q not in evaluated_set]
    meta_options = dict(options)
    meta_options["zscores"] = zscores.name if zscores is not None else None
    retrieval: dict[str, Any] = {
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
    return Report(
        measures=described,
        summaries=summaries,
        columns=columns,
        status=status,
        status_counts=status_counts,
        metadata={"retrieval": retrieval},
        warnings=list(warnings),
    )
