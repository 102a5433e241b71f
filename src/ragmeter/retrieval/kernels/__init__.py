"""Join, ranking and segment reductions: everything between parsed columns and measures.

The engine never ranks the whole run. Every measure of docs/retrieval.md#measures depends only on
(a) the rank and grade of each retrieved document that appears in the qrels, (b) the number n of
documents retrieved per query and (c) the qrels of each query (docs/retrieval.md#decisions, "Only
judged rows are ranked"). So the run is joined with the qrels first (an exact hash lookup of the
docnos), and only the judged rows get a rank: the number of rows of their query with a higher score,
plus the tied rows whose docno is larger in byte order (trec_eval's tie-break). A run written the
usual way (grouped by query, scores non-increasing) needs no sort at all.

Kernels are partition-exact (docs/architecture.md#principles): a per-query value depends only on
that query's rows. Float sums run left to right inside a query's segment, in rank order, exactly as
trec_eval adds them (:func:`seg_cumsum`), never as differences of a prefix sum across queries.

Modules: :mod:`.segments` (per-query reductions), :mod:`.codes` (integer codes of id columns),
:mod:`.qrels_index`, :mod:`.join`, :mod:`.duplicates` and :mod:`.ranking`. Names load on first
use, so that a measure importing a segment reduction does not load the Arrow-side modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as mypy sees them; at run time they load on first use
    from ragmeter.retrieval.kernels.codes import _docno_codes as _docno_codes
    from ragmeter.retrieval.kernels.codes import _qid_codes as _qid_codes
    from ragmeter.retrieval.kernels.codes import take_rows as take_rows
    from ragmeter.retrieval.kernels.duplicates import DuplicateCheck as DuplicateCheck
    from ragmeter.retrieval.kernels.duplicates import dedupe_rows as dedupe_rows
    from ragmeter.retrieval.kernels.duplicates import duplicate_error as duplicate_error
    from ragmeter.retrieval.kernels.duplicates import find_duplicates as find_duplicates
    from ragmeter.retrieval.kernels.join import JoinedRun as JoinedRun
    from ragmeter.retrieval.kernels.join import _join_codes as _join_codes
    from ragmeter.retrieval.kernels.join import join_run as join_run
    from ragmeter.retrieval.kernels.qrels_index import QrelsIndex as QrelsIndex
    from ragmeter.retrieval.kernels.qrels_index import build_qrels_index as build_qrels_index
    from ragmeter.retrieval.kernels.ranking import Ranking as Ranking
    from ragmeter.retrieval.kernels.ranking import RankPiece as RankPiece
    from ragmeter.retrieval.kernels.ranking import assemble as assemble
    from ragmeter.retrieval.kernels.ranking import rank as rank
    from ragmeter.retrieval.kernels.ranking import rank_piece as rank_piece
    from ragmeter.retrieval.kernels.segments import seg_count_le as seg_count_le
    from ragmeter.retrieval.kernels.segments import seg_cumsum as seg_cumsum
    from ragmeter.retrieval.kernels.segments import seg_index as seg_index
    from ragmeter.retrieval.kernels.segments import seg_position as seg_position
    from ragmeter.retrieval.kernels.segments import seg_suffix_max as seg_suffix_max
    from ragmeter.retrieval.kernels.segments import seg_totals as seg_totals

_MODULES = {
    "segments": (
        "seg_count_le",
        "seg_cumsum",
        "seg_index",
        "seg_position",
        "seg_suffix_max",
        "seg_totals",
    ),
    "codes": ("_docno_codes", "_qid_codes", "take_rows"),
    "qrels_index": ("QrelsIndex", "build_qrels_index"),
    "join": ("JoinedRun", "_join_codes", "join_run"),
    "duplicates": ("DuplicateCheck", "dedupe_rows", "duplicate_error", "find_duplicates"),
    "ranking": ("RankPiece", "Ranking", "assemble", "rank", "rank_piece"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "JoinedRun",
    "QrelsIndex",
    "RankPiece",
    "Ranking",
    "assemble",
    "build_qrels_index",
    "join_run",
    "rank",
    "rank_piece",
    "seg_cumsum",
    "seg_suffix_max",
]


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(
            f"module 'ragmeter.retrieval.kernels' has no attribute {name!r}"
        ) from None
    value = getattr(importlib.import_module(f"ragmeter.retrieval.kernels.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
