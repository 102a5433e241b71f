"""Ranking of the judged rows (trec_eval's order: score descending, then docno descending) and the
:class:`Ranking` the measures read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.io.trec.column import BytesColumn
from ragmeter.retrieval.kernels.codes import take_rows
from ragmeter.retrieval.kernels.join import JoinedRun
from ragmeter.retrieval.kernels.qrels_index import QrelsIndex
from ragmeter.retrieval.kernels.segments import seg_position
from ragmeter.retrieval.kernels.sorting import stable_argsort


class Ranking:
    """The judged-subset view of one run against one qrels (the join above).

    Queries are the evaluated ones, numbered 0..E-1 in qid byte order. ``rows`` lists, for each
    retrieved document that has a qrels line, its query, rank (1-based, after ``-M``/``-J``) and
    grade, sorted by (query, rank). ``n`` is the number of documents retrieved per query.
    (A plain class: see :class:`~ragmeter.retrieval.kernels.join.JoinedRun`.)
    """

    def __init__(
        self,
        qids: list[str],
        qcodes: np.ndarray,
        missing: np.ndarray,
        n: np.ndarray,
        q: np.ndarray,
        rank: np.ndarray,
        grade: np.ndarray,
        starts: np.ndarray,
        qrel_grades: np.ndarray,
        qrel_starts: np.ndarray,
        judged_only: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.qids = qids
        self.qcodes = qcodes  # qrels query code of each evaluated query
        self.missing = missing  # bool: judged query absent from the run, scored 0 under -c
        self.n = n  # int64 documents retrieved per query
        self.q = q  # int64 query of each judged row
        self.rank = rank  # int64 rank of each judged row
        self.grade = grade  # int64 grade of each judged row (< 0: pooled but unjudged)
        self.starts = starts  # row offset of each query (+ end)
        self.qrel_grades = qrel_grades  # qrels grades of the evaluated queries, (query, grade desc)
        self.qrel_starts = qrel_starts  # offsets into qrel_grades (+ end)
        self.judged_only = judged_only
        self.extra: dict[str, Any] = {} if extra is None else extra

    @property
    def num_queries(self) -> int:
        return len(self.qids)


def _stable_argsort_codes(codes: np.ndarray) -> np.ndarray:
    """Stable argsort of non-negative integer codes: radix sorts on 16-bit digits."""
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64)
    top = int(codes.max())
    if top < 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    low = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    high = np.argsort((codes[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]


def _bisect_equal(
    score: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, first: bool
) -> np.ndarray:
    """Vectorised bisection inside each [lo, hi) where ``score == target`` is a contiguous run.

    ``first``: the first position of the run (searching [lo, hi) whose tail is tied);
    otherwise one past its last position (searching [lo, hi) whose head is tied).
    """
    lo = lo.copy()
    hi = hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        tied = np.zeros(lo.size, dtype=bool)
        tied[active] = score[mid[active]] == target[active]
        if first:
            # tied at mid: the run starts at or before mid
            go_left = active & tied
            go_right = active & ~tied
        else:
            go_left = active & ~tied
            go_right = active & tied
        hi[go_left] = mid[go_left]
        lo[go_right] = mid[go_right] + 1


def _tie_offsets(
    score: np.ndarray,
    pos: np.ndarray,
    block_start: np.ndarray,
    block_end: np.ndarray,
    docno: Any,
    row_of_pos: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Start of each row's tie group and the row's offset in it (docnos in descending order).

    ``pos`` are sorted positions of the judged rows; their query's rows occupy
    ``[block_start, block_end)`` with non-increasing scores.
    """
    n = score.size
    group_start = pos.copy()
    offset = np.zeros(pos.size, dtype=np.int64)
    if pos.size == 0:
        return group_start, offset
    s = score[pos]
    prev_tied = (pos > block_start) & (score[np.maximum(pos - 1, 0)] == s)
    next_tied = (pos + 1 < block_end) & (score[np.minimum(pos + 1, n - 1)] == s)
    tied = prev_tied | next_tied
    if not tied.any():
        return group_start, offset
    tpos, ts = pos[tied], s[tied]
    lo = _bisect_equal(score, block_start[tied], tpos, ts, first=True)
    hi = _bisect_equal(score, tpos + 1, block_end[tied], ts, first=False)
    groups, first_idx = np.unique(lo, return_index=True)
    ends = hi[first_idx]
    sizes = ends - groups
    total = int(sizes.sum())
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    members = np.repeat(groups, sizes) + within
    member_group = np.repeat(np.arange(groups.size, dtype=np.int64), sizes)
    member_rows = members if row_of_pos is None else row_of_pos[members]
    order = _group_docno_order(member_group, take_rows(docno, member_rows))
    sorted_group = member_group[order]
    gfirst = np.searchsorted(sorted_group, np.arange(groups.size))
    rank_in_group = np.empty(total, dtype=np.int64)
    rank_in_group[order] = np.arange(total, dtype=np.int64) - gfirst[sorted_group]
    member_index = np.searchsorted(members, tpos)  # groups are disjoint and ascending
    group_start[tied] = lo
    offset[tied] = rank_in_group[member_index]
    return group_start, offset


def _group_docno_order(group: np.ndarray, docs: Any) -> np.ndarray:
    """Stable order of tied rows by (group ascending, docno descending in byte order)."""
    if isinstance(docs, BytesColumn):
        values, g = docs.values, group.tolist()
        # Python's sort is stable also with reverse=True (equal docnos keep their order), as
        # Arrow's sort_indices is; then a stable sort by group
        order = sorted(range(len(values)), key=values.__getitem__, reverse=True)
        order.sort(key=g.__getitem__)
        return np.array(order, dtype=np.int64)
    import pyarrow as pa
    from pyarrow._compute import SortOptions

    from ragmeter.io.arrowutil import call, from_numpy, to_numpy

    table = pa.table({"g": from_numpy(group), "d": docs})
    options = SortOptions([("g", "ascending"), ("d", "descending")])
    return to_numpy(call("sort_indices", table, options=options))


class RankPiece:
    """The ranked judged rows of one batch of whole queries (before they are assembled)."""

    def __init__(
        self,
        counts: np.ndarray,
        jq: np.ndarray,
        jrank: np.ndarray,
        jgrade: np.ndarray,
        tied_pairs: int = 0,
        all_tied: list[str] | None = None,
    ) -> None:
        self.counts = counts  # documents per qrels query in this piece (before -M), int64
        self.jq = jq  # qrels query code of each judged row
        self.jrank = jrank  # rank after ties and -M
        self.jgrade = jgrade
        self.tied_pairs = tied_pairs
        self.all_tied: list[str] = [] if all_tied is None else all_tied


def rank_piece(
    joined: JoinedRun,
    index: QrelsIndex,
    *,
    max_docs: int | None = None,
    ties: str = "docno",
    drop_rows: np.ndarray | None = None,
) -> RankPiece:
    """Rank the judged rows of a joined run (trec_eval's ranking); every query is whole here."""
    run = joined.run
    score = run.score
    jrows = joined.judged_rows
    jgrades = joined.judged_grades
    nq_all = index.num_queries
    remap = joined.remap
    nrun = len(joined.run_qids)
    # queries are keyed by their run code (no run-sized remapped copy); rows of queries without
    # judgments (and rows dropped by --dedupe) take no part
    qk = joined.run_qcode
    excluded = remap < 0
    if drop_rows is not None and drop_rows.size:
        keep_mask = np.ones(score.size, dtype=bool)
        keep_mask[drop_rows] = False
        keep_j = keep_mask[jrows]
        jrows, jgrades = jrows[keep_j], jgrades[keep_j]
        rows_sel = np.flatnonzero(keep_mask & ~excluded[qk])
    elif excluded.any():
        rows_sel = np.flatnonzero(~excluded[qk])
    else:
        rows_sel = None
    qc = qk if rows_sel is None else qk[rows_sel]
    sc = score if rows_sel is None else score[rows_sel]
    counts_run = np.bincount(qc, minlength=nrun).astype(np.int64)
    jpos = jrows if rows_sel is None else np.searchsorted(rows_sel, jrows)
    # is the run grouped by query with non-increasing scores? (how runs are written)
    row_of_pos: np.ndarray | None = rows_sel
    m = qc.size
    ordered = True
    change = None
    first = np.zeros(min(m, 1), dtype=np.int64)
    if m > 1:
        change = qc[1:] != qc[:-1]
        first = np.concatenate(([0], np.flatnonzero(change) + 1))
        block_q = qc[first]
        # one block per query present (np.unique would import numpy.ma: ~15 ms at start)
        ordered = block_q.size == np.count_nonzero(counts_run) and bool(
            np.all(np.logical_or(sc[1:] <= sc[:-1], change))
        )
    if ordered:
        pos = jpos
        q_of, s_of = qc, sc
        starts_q = np.zeros(nrun, dtype=np.int64)
        if m:
            starts_q[qc[first]] = first
    else:
        change = None
        # sort by (query, score descending): a float argsort, then a stable radix sort of the
        # query codes. With --ties docno the float sort need not be stable (the docnos of tied
        # rows decide later); with --ties file it keeps file order inside ties.
        order = np.argsort(-sc, kind="stable" if ties == "file" else None)
        order = order[_stable_argsort_codes(qc[order])]
        inv = np.empty(m, dtype=np.int64)
        inv[order] = np.arange(m, dtype=np.int64)
        pos = inv[jpos]
        del inv
        q_of, s_of = qc[order], sc[order]
        row_of_pos = order if rows_sel is None else rows_sel[order]
        starts_q = np.concatenate(([0], np.cumsum(counts_run)[:-1]))
    stats = _tie_stats(q_of, s_of, starts_q, counts_run, joined.run_qids, change) if m else {}
    del change
    counts = np.zeros(nq_all, dtype=np.int64)
    judged_run = np.flatnonzero(remap >= 0)
    counts[remap[judged_run]] = counts_run[judged_run]
    jq_run = q_of[pos].astype(np.int64)
    if ties == "docno":
        bstart = starts_q[jq_run]
        gstart, offset = _tie_offsets(
            s_of, pos, bstart, bstart + counts_run[jq_run], run.docno, row_of_pos
        )
        jrank = gstart - bstart + 1 + offset
    else:
        jrank = pos - starts_q[jq_run] + 1
    jq = remap[jq_run].astype(np.int64)
    if max_docs is not None:
        keep = jrank <= max_docs
        jq, jrank, jgrades = jq[keep], jrank[keep], jgrades[keep]
    return RankPiece(
        counts=counts,
        jq=jq,
        jrank=jrank.astype(np.int64),
        jgrade=jgrades.astype(np.int64),
        tied_pairs=int(stats.get("tied_pairs", 0)),
        all_tied=list(stats.get("all_tied", [])),
    )


def _by_query_rank(jq: np.ndarray, jrank: np.ndarray) -> np.ndarray:
    """``np.lexsort((jrank, jq))``: one stable sort of ``jq * (top rank + 1) + jrank`` when
    that fits in 62 bits (the same order, several times faster)."""
    if not jq.size or int(jq.min()) < 0 or int(jrank.min()) < 0:
        return np.lexsort((jrank, jq))
    span = int(jrank.max()) + 1
    if int(jq.max()).bit_length() + span.bit_length() > 62:
        return np.lexsort((jrank, jq))
    return stable_argsort(jq.astype(np.int64) * span + jrank)


def assemble(
    index: QrelsIndex,
    pieces: Sequence[RankPiece],
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
) -> Ranking:
    """Join the pieces into one Ranking over the evaluated queries, in qid byte order."""
    nq_all = index.num_queries
    counts = np.zeros(nq_all, dtype=np.int64)
    for p in pieces:
        if p.counts.size:
            counts += p.counts
    jq = np.concatenate([p.jq for p in pieces]) if pieces else np.zeros(0, np.int64)
    jrank = np.concatenate([p.jrank for p in pieces]) if pieces else np.zeros(0, np.int64)
    jgrades = np.concatenate([p.jgrade for p in pieces]) if pieces else np.zeros(0, np.int64)
    n_all = counts if max_docs is None else np.minimum(counts, max_docs)
    # evaluated queries: judged queries in the run (all judged queries with -c)
    present = counts > 0
    evaluated = np.arange(nq_all) if complete else np.flatnonzero(present)
    missing = ~present[evaluated]
    qmap = np.full(nq_all, -1, dtype=np.int64)
    qmap[evaluated] = np.arange(evaluated.size)
    order_j = _by_query_rank(jq, jrank)
    jq, jrank, jgrades = qmap[jq[order_j]], jrank[order_j], jgrades[order_j]
    n = n_all[evaluated].astype(np.int64)
    if judged_only:
        # -J: drop unpooled and pooled-unjudged documents after ranking, renumber the rest
        keep = jgrades >= 0
        jq, jgrades = jq[keep], jgrades[keep]
        starts = np.searchsorted(jq, np.arange(evaluated.size + 1))
        jrank = seg_position(starts) + 1
        n = np.diff(starts).astype(np.int64)
    starts = np.searchsorted(jq, np.arange(evaluated.size + 1)).astype(np.int64)
    # qrels of the evaluated queries, by (query, grade descending)
    qs = index.q_starts
    lens = (qs[1:] - qs[:-1])[evaluated]
    qstarts = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    take = np.repeat(qs[:-1][evaluated], lens) + (
        np.arange(int(qstarts[-1])) - np.repeat(qstarts[:-1], lens)
    )
    qrel_grades = index.by_grade[take.astype(np.int64)] if take.size else np.zeros(0, np.int64)
    qids = [index.qids[i].decode("utf-8") for i in evaluated.tolist()]
    return Ranking(
        qids=qids,
        qcodes=evaluated,
        missing=missing,
        n=n,
        q=jq.astype(np.int64),
        rank=jrank.astype(np.int64),
        grade=jgrades.astype(np.int64),
        starts=starts,
        qrel_grades=qrel_grades.astype(np.int64),
        qrel_starts=qstarts,
        judged_only=judged_only,
        extra={
            "tied_pairs": sum(p.tied_pairs for p in pieces),
            "all_tied": sorted(q for p in pieces for q in p.all_tied),
        },
    )


def rank(
    joined: JoinedRun,
    index: QrelsIndex,
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
    complete: bool = False,
    ties: str = "docno",
    drop_rows: np.ndarray | None = None,
) -> Ranking:
    """Rank the judged rows of a joined run (trec_eval's order); collect what the measures need."""
    piece = rank_piece(joined, index, max_docs=max_docs, ties=ties, drop_rows=drop_rows)
    return assemble(index, [piece], max_docs=max_docs, judged_only=judged_only, complete=complete)


def _tie_stats(
    q_of: np.ndarray,
    s_of: np.ndarray,
    starts_q: np.ndarray,
    counts: np.ndarray,
    qids: Sequence[bytes],
    change: np.ndarray | None = None,
) -> dict[str, Any]:
    """Adjacent tied pairs, and the queries whose scores are all equal (ranked by docno alone)."""
    same = s_of[1:] == s_of[:-1]
    same &= ~change if change is not None else q_of[1:] == q_of[:-1]
    present = np.flatnonzero(counts > 0)
    bstart = starts_q[present]
    order = np.argsort(bstart)
    present, bstart = present[order], bstart[order]
    lo = np.minimum.reduceat(s_of, bstart)
    hi = np.maximum.reduceat(s_of, bstart)
    tied = present[(lo == hi) & (counts[present] > 1)]
    return {
        "tied_pairs": int(np.count_nonzero(same)),
        "all_tied": sorted(qids[i].decode("utf-8") for i in tied.tolist()),
    }
