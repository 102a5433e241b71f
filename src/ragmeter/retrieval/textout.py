"""trec_eval's text layout and UltraRAG's result dictionary (docs/retrieval.md#command-line).

Real values print as ``%-22s\\t%s\\t%6.4f`` (name, qid, value), counts as ``%-22s\\t%s\\t%d``,
``relstring`` quoted, and under ``-Z`` every converted row as ``Z%-22s\\t%s\\t%6.4f``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

__all__ = ["format_trec", "format_ultrarag"]


class Formattable(Protocol):
    """What trec_eval's layout reads of a result: a :class:`RetrievalResult`, or the
    :class:`~ragmeter.retrieval.report.Report` it is built from (``ragmeter trec`` prints the
    Report directly, without the Arrow-backed result)."""

    @property
    def measures(self) -> list[dict[str, Any]]: ...
    @property
    def metadata(self) -> dict[str, Any]: ...
    @property
    def summary(self) -> dict[str, Any]: ...
    def query_columns(self) -> tuple[list[str], dict[str, list[Any]]]: ...


class UltraRAGFormattable(Protocol):
    """What UltraRAG's dictionary reads of a :class:`RetrievalResult`."""

    @property
    def measures(self) -> list[dict[str, Any]]: ...
    @property
    def aggregates(self) -> Mapping[str, Any]: ...
    def values(self, metric: str) -> Any: ...


def _real(name: str, qid: str, value: float, digits: int, z: bool = False) -> str:
    return f"{'Z' if z else ''}{name:<22}\t{qid}\t{value:6.{digits}f}\n"


def _count(name: str, qid: str, value: int) -> str:
    return f"{name:<22}\t{qid}\t{int(value)}\n"


def format_trec(res: Formattable, *, queries: bool, summary: bool, digits: int = 4) -> str:
    measures = res.measures
    zs = res.metadata.get("retrieval", {}).get("zscores")
    parts: list[str] = []
    if queries:
        qids, columns = res.query_columns()
        cols: list[tuple[dict[str, Any], list[Any]]] = []
        for m in measures:
            if not m.get("per_query", True):
                continue
            if zs is not None and m["family"] != "relstring":
                cols.append((m, zs["per_query"][m["name"]]))
            else:
                cols.append((m, columns[m["name"]]))
        for i, q in enumerate(qids):
            for m, vals in cols:
                v = vals[i]
                name = m["name"]
                if m["family"] == "relstring":
                    parts.append(f"{name:<22}\t{q}\t'{v}'\n")
                elif zs is not None:
                    parts.append(_real(name, q, v, digits, z=True))
                elif m.get("kind") == "count":
                    parts.append(_count(name, q, v))
                else:
                    parts.append(_real(name, q, v, digits))
    if summary:
        values = res.summary
        for m in measures:
            name = m["name"]
            if name not in values or not m.get("summary", True):
                continue
            if m["family"] == "runid":
                parts.append(f"{'runid':<22}\tall\t{values[name]}\n")
            elif zs is not None:
                parts.append(_real(name, "all", zs["summary"][name], digits, z=True))
            elif m.get("kind") == "count":
                parts.append(_count(name, "all", values[name]))
            else:
                parts.append(_real(name, "all", values[name], digits))
    return "".join(parts)


_ULTRARAG = {"map": "map", "recip_rank": "mrr"}
_ULTRARAG_CUT = {"ndcg_cut": "ndcg", "P": "P", "recall": "recall"}


def format_ultrarag(res: UltraRAGFormattable, *, order: Sequence[str] | None = None) -> str:
    """map, mrr, then ndcg@k, P@k, recall@k for each cutoff (UltraRAG's key order).

    With ``order``, each mean is UltraRAG's ``sum(per-query values) / n`` over the queries in
    that order (pytrec_eval returns them in the run's order of first appearance).
    """
    import json

    from ragmeter.errors import UsageError

    # every measure must have a key before any value is read (runid, say, has no per-query value)
    for m in res.measures:
        fam = m["family"]
        if fam in _ULTRARAG and not m["params"]:
            continue
        if fam in _ULTRARAG_CUT and set(m["params"]) == {"cutoff"}:
            continue
        raise UsageError(
            f"measure '{m['name']}' has no UltraRAG key (--format ultrarag takes map, recip_rank, "
            "ndcg_cut, P and recall; -m ultrarag names UltraRAG's set)",
            command="trec",
        )
    values = {
        m["canonical"]: res.aggregates[m["canonical"]].value
        for m in res.measures
        if m["canonical"] in res.aggregates
    }
    if order is not None:
        for name in values:
            per_query = res.values(name)
            if per_query:
                ordered = [per_query[q] for q in order if q in per_query]
                values[name] = sum(ordered) / len(ordered)
    out: dict[str, float] = {}
    cuts: dict[int, dict[str, float]] = {}
    for fam, key in _ULTRARAG.items():
        for m in res.measures:
            if m["family"] == fam:
                out[key] = values[m["canonical"]]
    for m in res.measures:
        if m["family"] in _ULTRARAG_CUT:
            k = int(m["params"]["cutoff"])
            cuts.setdefault(k, {})[f"{_ULTRARAG_CUT[m['family']]}@{k}"] = values[m["canonical"]]
    for k in sorted(cuts):
        for prefix in ("ndcg", "P", "recall"):
            key = f"{prefix}@{k}"
            if key in cuts[k]:
                out[key] = cuts[k][key]
    return json.dumps(out, indent=4) + "\n"
