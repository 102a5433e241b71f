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
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import call, from_numpy, to_numpy
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.trec import Qrels, Run

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

_MIX = np.uint64(0x9E3779B97F4A7C15)
_QMIX = np.uint64(0xC2B2AE3D27D4EB4F)


# --------------------------------------------------------------------------------------------
# Segment reductions


def _step_plan(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment starts sorted by length (longest first) and, per step j, how many are longer."""
    order = np.argsort(-lens, kind="stable")
    s_starts = starts[order]
    s_lens = lens[order]
    maxlen = int(s_lens[0]) if s_lens.size else 0
    # active[j] = number of segments with length > j
    active = np.searchsorted(-s_lens, -np.arange(maxlen), side="left")
    return s_starts, active


def seg_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums within segments, added left to right (bit-identical to a C loop).

    ``starts`` has one entry per segment plus the end (``len(values)``).

    >>> seg_cumsum(np.array([0.1, 0.2, 0.3, 1.0, 2.0]), np.array([0, 3, 5])).tolist()
    [0.1, 0.30000000000000004, 0.6000000000000001, 1.0, 3.0]
    """
    out = np.array(values, dtype=np.float64, copy=True)
    lens = np.diff(starts)
    if out.size == 0:
        return out
    s_starts, active = _step_plan(starts[:-1], lens)
    for j in range(1, active.size):
        idx = s_starts[: active[j]] + j
        out[idx] = out[idx - 1] + out[idx]
    return out


def seg_suffix_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Maximum of ``values[i:end]`` within each segment (interpolated precision)."""
    out = np.array(values, dtype=np.float64, copy=True)
    lens = np.diff(starts)
    if out.size == 0:
        return out
    ends = starts[1:]
    order = np.argsort(-lens, kind="stable")
    s_ends = ends[order]
    s_lens = lens[order]
    active = np.searchsorted(-s_lens, -np.arange(int(s_lens[0])), side="left")
    for j in range(1, active.size):
        idx = s_ends[: active[j]] - 1 - j
        out[idx] = np.maximum(out[idx], out[idx + 1])
    return out


def seg_totals(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Left-to-right sum of each segment (0.0 for an empty one)."""
    cum = seg_cumsum(values, starts)
    lens = np.diff(starts)
    out = np.zeros(lens.size, dtype=np.float64)
    nz = lens > 0
    out[nz] = cum[starts[1:][nz] - 1]
    return out


def seg_index(starts: np.ndarray) -> np.ndarray:
    """The segment of each row (``starts`` includes the end)."""
    lens = np.diff(starts)
    return np.repeat(np.arange(lens.size, dtype=np.int64), lens)


def seg_position(starts: np.ndarray) -> np.ndarray:
    """0-based position of each row inside its segment."""
    total = int(starts[-1])
    lens = np.diff(starts)
    return np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], lens)


_SHIFT = 1 << 40


def seg_count_le(
    keys_sorted: np.ndarray,
    seg: np.ndarray,
    starts: np.ndarray,
    limit: np.ndarray,
    target_seg: np.ndarray | None = None,
) -> np.ndarray:
    """How many rows of a segment have key ≤ limit (keys sorted within segments).

    By default one limit per segment; with ``target_seg``, one (segment, limit) pair per entry.
    """
    # ranks are < 2**40 and segments < 2**23: one int64 key orders (segment, rank)
    comb = seg.astype(np.int64) * _SHIFT + keys_sorted
    tseg = (
        np.arange(limit.size, dtype=np.int64) if target_seg is None else target_seg.astype(np.int64)
    )
    targets = tseg * _SHIFT + np.clip(limit, -1, _SHIFT - 1)
    return np.searchsorted(comb, targets, side="right") - starts[tseg]


# --------------------------------------------------------------------------------------------
# Qrels index


@dataclass(frozen=True, eq=False)
class QrelsIndex:
    """The qrels side, prepared once (an :class:`~ragmeter.retrieval.Evaluator` keeps it).

    Queries are numbered in qid byte order. Lines are sorted by (query, docno index), so that a
    run row's (query, docno) key is found with one ``searchsorted``.
    """

    qids: list[bytes]  # judged qids in byte order
    doc_values: pa.Array  # distinct judged docnos (binary), the join's value set
    keys: np.ndarray  # sorted int64 key per qrels line: query * ndocs + docno index
    grades: np.ndarray  # int64 grade per key
    q_starts: np.ndarray  # line offset of each query in the sorted lines (+ end)
    by_grade: np.ndarray  # grades sorted by (query, grade descending)
    qrels: Qrels
    dedupe_dropped: int = 0
    # packed 8-byte codes of the judged docnos that fit (sorted), their doc_values index, and a
    # bit table of hashed (query, docno code) pairs that rules out almost every run row in one
    # gather, also when most of the run's documents are judged for some other query
    doc_codes: np.ndarray | None = None
    doc_code_index: np.ndarray | None = None
    code_filter: np.ndarray | None = None
    filter_shift: int = 64
    doc_fit: np.ndarray | None = None  # per sorted code: True when it is a packed (exact) code
    # per judgment, in ``keys`` order: query, docno index, docno code, packed-code flag; and the
    # judgments' (query, docno code) mixes, sorted (None if two ever collided), with their line
    pair_keys: np.ndarray | None = None
    pair_line: np.ndarray | None = None
    line_q: np.ndarray | None = None
    line_doc: np.ndarray | None = None
    line_code: np.ndarray | None = None
    line_fit: np.ndarray | None = None

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    def qid_lookup(self) -> dict[bytes, int]:
        """qid → query code (do not modify: it is built once, for every batch of a stream)."""
        return self._qid_lookup

    @functools.cached_property
    def _qid_lookup(self) -> dict[bytes, int]:
        return {q: i for i, q in enumerate(self.qids)}


def _index_in(values: Any, value_set: pa.Array) -> Any:
    from pyarrow._compute import SetLookupOptions

    return call("index_in", values, options=SetLookupOptions(value_set))


def _unique_sorted_binary(arr: pa.ChunkedArray) -> tuple[list[bytes], pa.Array]:
    uniq = call("unique", arr)
    if isinstance(uniq, pa.ChunkedArray):
        uniq = uniq.combine_chunks()
    uniq = call("take", uniq, call("sort_indices", uniq))
    return uniq.to_pylist(), uniq


def _unique_codes(
    col: pa.ChunkedArray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(sorted distinct codes, first row of each, code index per row, packed-code mask per
    distinct value), or None when two different ids share a fingerprint (never seen)."""
    codes, fit = _docno_codes(col, exact=True)
    uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    inverse = inverse.astype(np.int64).ravel()
    if not fit.all():
        # a fingerprint stands for its bytes only if every row with it has the same bytes
        rep_row = first[inverse]
        check = np.flatnonzero(~fit & (rep_row != np.arange(inverse.size)))
        mine = take_rows(col, check)
        rep = take_rows(col, rep_row[check])
        if not to_numpy(call("equal", mine, rep)).astype(bool).all():
            return None
    return uniq, first, inverse, fit[first]


def build_qrels_index(qrels: Qrels, *, dedupe: str | None = None) -> QrelsIndex:
    """Sort and key the qrels; a document judged twice for a query is an error (--dedupe aside)."""
    # distinct values through their 64-bit codes (a sort of integers), not Arrow's hash of
    # the bytes, which costs several times more on deeply judged qrels
    q = _unique_codes(qrels.qid)
    if q is not None and q[3].all():  # packed qids: code order is byte order
        qid_list = take_rows(qrels.qid, q[1]).to_pylist()
        qcode = q[2]
    else:
        qid_list, qid_values = _unique_sorted_binary(qrels.qid)
        qcode = _to_numpy(_index_in(qrels.qid, qid_values)).astype(np.int64)
    d = _unique_codes(qrels.docno)
    if d is not None:
        doc_values = take_rows(qrels.docno, d[1])
        dcode = d[2]
    else:
        doc_values = call("unique", qrels.docno)
        if isinstance(doc_values, pa.ChunkedArray):
            doc_values = doc_values.combine_chunks()
        dcode = _to_numpy(_index_in(qrels.docno, doc_values)).astype(np.int64)
    ndocs = max(len(doc_values), 1)
    keys = qcode * ndocs + dcode
    order = np.argsort(keys, kind="stable")  # stable: file order among duplicates
    skeys = keys[order]
    grades = qrels.grade[order]
    dropped = 0
    dup = np.flatnonzero(skeys[1:] == skeys[:-1]) + 1
    if dup.size:
        if dedupe is None:
            second = int(order[dup].min())
            key = keys[second]
            first = int(np.flatnonzero(keys == key)[0])
            doc = qrels.docno[second].as_py().decode("utf-8", "replace")
            qid = qrels.qid[second].as_py()
            qid = qid.decode("utf-8", "replace") if isinstance(qid, bytes) else str(qid)
            loc = qrels.origin.locate([second])[0]
            raise InputError(
                f"document '{doc}' is judged twice for query '{qid}' (first at "
                f"{qrels.origin.where(first)}); use --dedupe first or --dedupe max to keep one",
                path=loc.path,
                line=loc.line,
                location=loc.location,
            )
        if dedupe == "max":
            # the highest grade per key, the first line among equals
            order = np.lexsort((np.arange(keys.size), -qrels.grade, keys))
        skeys = keys[order]
        grades = qrels.grade[order]
        keep = np.ones(skeys.size, dtype=bool)
        keep[1:] = skeys[1:] != skeys[:-1]
        dropped = int((~keep).sum())
        skeys, grades = skeys[keep], grades[keep]
        qcode_sorted = qcode[order][keep]
    else:
        qcode_sorted = qcode[order]
    q_starts = np.searchsorted(qcode_sorted, np.arange(len(qid_list) + 1), side="left")
    # grades by (query, grade descending): the ideal ranking of each query
    by_grade = grades[np.lexsort((-grades, qcode_sorted))]
    # every judged docno's code, sorted: packed (exact) for ids of at most 8 bytes, a
    # fingerprint for longer ones, whose matches the join confirms on the bytes
    if d is not None:
        codes, doc_codes, doc_fit = d[0], d[0], d[3]
        doc_code_index = np.arange(codes.size)
        fit_by_doc = d[3]
    else:
        codes, fit = _docno_codes(pa.chunked_array([doc_values], type=doc_values.type), exact=True)
        order = np.argsort(codes, kind="stable")
        doc_codes, doc_code_index, doc_fit = codes[order], order, fit[order]
        fit_by_doc = fit
    # the filter holds (query, docno) pairs, not docnos: keyed on the docno alone it lets
    # through every row whose document is judged for *any* query, which on deeply judged
    # collections is most of the run; ~64 bits per judged pair keep false positives near 1.5%
    n_pairs = max(skeys.size, 1)
    bits = int(min(30, max(16, np.ceil(np.log2(n_pairs * 64)))))
    table = np.zeros(1 << (bits - 3), dtype=np.uint8)
    shift = 64 - bits
    ndocs = max(len(doc_values), 1)
    line_doc = skeys - qcode_sorted * ndocs  # docno index of each sorted line
    pair = _pair_hash(codes[line_doc], qcode_sorted, 0)
    # the same 64-bit mix, sorted, finds a candidate's judgment in one binary search
    pair_line = np.argsort(pair, kind="stable")
    pair_keys = pair[pair_line]
    unique_pairs = not (pair_keys[1:] == pair_keys[:-1]).any()
    h = pair >> np.uint64(shift)
    del pair
    slot, bit = h >> np.uint64(3), (h & np.uint64(7)).astype(np.uint8)
    for b in range(8):  # one bit at a time: repeated slots then set the same bit (no ufunc.at)
        table[slot[bit == b]] |= np.uint8(1 << b)
    return QrelsIndex(
        qids=qid_list,
        doc_values=doc_values,
        keys=skeys,
        grades=grades,
        q_starts=q_starts.astype(np.int64),
        by_grade=by_grade,
        qrels=qrels,
        dedupe_dropped=dropped,
        doc_codes=doc_codes,
        doc_code_index=doc_code_index,
        # two judged docnos with one fingerprint (never seen; 2^-64 per pair) would hide one of
        # them from the binary search: such qrels are joined on the bytes instead
        code_filter=None if (doc_codes[1:] == doc_codes[:-1]).any() else table,
        filter_shift=shift,
        doc_fit=doc_fit,
        pair_keys=pair_keys if unique_pairs else None,
        pair_line=pair_line,
        line_q=qcode_sorted,
        line_doc=line_doc,
        line_code=codes[line_doc],
        line_fit=(fit_by_doc[line_doc] if unique_pairs else None),
    )


def _to_numpy(arr: pa.ChunkedArray | pa.Array, fill: int = -1) -> np.ndarray:
    return to_numpy(arr, fill=fill)


# --------------------------------------------------------------------------------------------
# Run side: qid codes, join, duplicates


@dataclass(eq=False)
class JoinedRun:
    """A run's rows with query codes and, for judged rows, their grades."""

    run: Run
    run_qids: list[bytes]  # distinct run qids (unified dictionary), any order
    run_qcode: np.ndarray  # int32 per row: index into run_qids
    remap: np.ndarray  # int32 per run qid: index into the qrels' qids, -1 if not judged
    judged_rows: np.ndarray  # int64 rows whose (qid, docno) is in the qrels
    judged_grades: np.ndarray  # int64 grade of those rows
    unjudged_qids: list[bytes] = field(default_factory=list)  # run qids without qrels

    @property
    def qcode(self) -> np.ndarray:
        """int32 per row: index into the qrels' qids, -1 if not judged (built on demand)."""
        return self.remap[self.run_qcode] if self.remap.size else self.run_qcode

    @property
    def any_judged(self) -> bool:
        return bool((self.remap >= 0).any())


def _qid_codes(qid: pa.ChunkedArray) -> tuple[list[bytes], np.ndarray]:
    """Unified codes for a (possibly dictionary-encoded, chunked) qid column."""
    if not pa.types.is_dictionary(qid.type):
        qid = pc.dictionary_encode(qid)
        if isinstance(qid, pa.Array):
            qid = pa.chunked_array([qid])
    values: dict[bytes, int] = {}
    codes = np.empty(len(qid), dtype=np.int32)
    at = 0
    for chunk in qid.chunks:
        n = len(chunk)
        dic = chunk.dictionary.to_pylist()
        remap = np.fromiter(
            (values.setdefault(v, len(values)) for v in dic), dtype=np.int32, count=len(dic)
        )
        if n:
            np.take(remap, to_numpy(chunk.indices), out=codes[at : at + n])
        at += n
    return list(values), codes


def join_run(
    run: Run,
    index: QrelsIndex,
    run_codes: tuple[list[bytes], np.ndarray] | None = None,
    doc_codes: tuple[np.ndarray, np.ndarray] | None = None,
) -> JoinedRun:
    """Query codes for every row and grades for the judged rows (an exact join).

    With ``doc_codes`` (the run's docno codes and their exactness mask), the docnos are matched
    through their codes: a hashed bit table of the judged (query, docno) pairs rules out almost
    every row, the few candidates are found by binary search, and a match through a fingerprint
    (an id longer than 8 bytes) is confirmed on the bytes. Otherwise an Arrow hash lookup
    (``index_in``, which hashes every judged docno again on each call) matches the bytes.
    """
    run_qids, run_qcode = run_codes if run_codes is not None else _qid_codes(run.qid)
    lookup = index.qid_lookup()
    remap = np.array([lookup.get(q, -1) for q in run_qids], dtype=np.int32)
    unjudged = [q for q, c in zip(run_qids, remap.tolist(), strict=True) if c < 0]
    if doc_codes is not None and index.code_filter is not None:
        hit, dcode, line = _join_codes(doc_codes[0], doc_codes[1], run_qcode, remap, index, run)
        if line is not None:
            grades = index.grades[line]
            return JoinedRun(run, run_qids, run_qcode, remap, hit, grades, unjudged)
    else:
        hit, dcode = _join_bytes(run, index)
    qhit = remap[run_qcode[hit]] if remap.size else np.zeros(0, dtype=np.int32)
    judged = qhit >= 0
    hit, dcode, qhit = hit[judged], dcode[judged], qhit[judged]
    ndocs = max(len(index.doc_values), 1)
    keys = qhit.astype(np.int64) * ndocs + dcode
    pos = np.searchsorted(index.keys, keys)
    pos = np.minimum(pos, max(index.keys.size - 1, 0))
    found = index.keys[pos] == keys if index.keys.size else np.zeros(keys.size, bool)
    return JoinedRun(
        run, run_qids, run_qcode, remap, hit[found], index.grades[pos[found]], unjudged
    )


def _pair_hash(codes: np.ndarray, qcodes: np.ndarray, shift: int) -> np.ndarray:
    """The filter slot of each (query code, docno code) pair: the top bits of a 64-bit mix."""
    with np.errstate(over="ignore"):
        h = qcodes.astype(np.uint64) * _QMIX
        h ^= codes
        h *= _MIX
        h >>= np.uint64(shift)
    return h


def _join_codes(
    codes: np.ndarray,
    exact: np.ndarray,
    qcodes: np.ndarray,
    remap: np.ndarray,
    index: QrelsIndex,
    run: Run,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(rows, docno index, judgment line or None) of the run rows judged for their query.

    ``qcodes`` (per row, into the run's qids) and ``remap`` (run qid → qrels query) give each
    row its judged query, so the filter passes about as many rows as there are judged pairs
    in the run, whatever the share of the run's documents judged for other queries.
    """
    assert index.code_filter is not None and index.doc_codes is not None
    assert index.doc_code_index is not None and index.doc_fit is not None
    table, shift = index.code_filter, np.uint64(index.filter_shift)
    rows: list[np.ndarray] = []
    mixes: list[np.ndarray] = []
    step = 1 << 20
    for a in range(0, codes.size, step):
        q = remap[qcodes[a : a + step]] if remap.size else qcodes[a : a + step]
        pair = _pair_hash(codes[a : a + step], q, 0)
        del q
        h = pair >> shift
        byte = table[h >> np.uint64(3)]
        byte >>= (h & np.uint64(7)).astype(np.uint8)
        del h
        local = np.flatnonzero(byte & 1)
        rows.append(local + a)
        mixes.append(pair[local])
        del pair
    cand = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    if index.pair_keys is not None and index.pair_keys.size:
        return _match_pairs(cand, np.concatenate(mixes), codes, exact, qcodes, remap, index, run)
    c = codes[cand]
    pos = np.minimum(np.searchsorted(index.doc_codes, c), max(index.doc_codes.size - 1, 0))
    ok = index.doc_codes[pos] == c if index.doc_codes.size else np.zeros(c.size, bool)
    cand, pos = cand[ok], pos[ok]
    # equal packed codes are equal ids; a fingerprint on either side is checked on the bytes
    check = np.flatnonzero(~(exact[cand] & index.doc_fit[pos]))
    if check.size:
        mine = take_rows(run.docno, cand[check])
        theirs = call("take", index.doc_values, from_numpy(index.doc_code_index[pos[check]]))
        same = to_numpy(call("equal", mine, theirs)).astype(bool)
        if not same.all():
            keep = np.ones(cand.size, dtype=bool)
            keep[check[~same]] = False
            cand, pos = cand[keep], pos[keep]
    return cand, index.doc_code_index[pos].astype(np.int64), None


def _match_pairs(
    cand: np.ndarray,
    mix: np.ndarray,
    codes: np.ndarray,
    exact: np.ndarray,
    qcodes: np.ndarray,
    remap: np.ndarray,
    index: QrelsIndex,
    run: Run,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, docno index, judgment line) of the candidates: one binary search on the mixes,
    then the query and docno code compared (and the bytes, for fingerprints)."""
    assert index.pair_keys is not None and index.pair_line is not None
    assert index.line_q is not None and index.line_doc is not None
    assert index.line_code is not None and index.line_fit is not None
    keys = index.pair_keys
    pos = np.minimum(np.searchsorted(keys, mix), keys.size - 1)
    ok = keys[pos] == mix
    cand, line = cand[ok], index.pair_line[pos[ok]]
    q = remap[qcodes[cand]] if remap.size else qcodes[cand]
    ok = (index.line_q[line] == q) & (index.line_code[line] == codes[cand])
    cand, line = cand[ok], line[ok]
    # equal packed codes are equal ids; a fingerprint on either side is checked on the bytes
    check = np.flatnonzero(~(exact[cand] & index.line_fit[line]))
    if check.size:
        mine = take_rows(run.docno, cand[check])
        theirs = call("take", index.doc_values, from_numpy(index.line_doc[line[check]]))
        same = to_numpy(call("equal", mine, theirs)).astype(bool)
        if not same.all():
            keep = np.ones(cand.size, dtype=bool)
            keep[check[~same]] = False
            cand, line = cand[keep], line[keep]
    return cand, index.line_doc[line], line


def _join_bytes(run: Run, index: QrelsIndex) -> tuple[np.ndarray, np.ndarray]:
    """(rows, docno index) through Arrow's hash lookup on the bytes, a few chunks at a time."""
    hits: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    base = 0
    chunks = run.docno.chunks
    for g in range(0, len(chunks), 16):
        group = pa.chunked_array(chunks[g : g + 16], type=run.docno.type)
        for chunk in _index_in(group, index.doc_values).chunks:
            n = len(chunk)
            if chunk.null_count < n:
                data = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[
                    chunk.offset : chunk.offset + n
                ]
                if chunk.null_count:
                    bits = np.frombuffer(chunk.buffers()[0], dtype=np.uint8)
                    valid = np.unpackbits(bits, bitorder="little")[chunk.offset : chunk.offset + n]
                    rows = np.flatnonzero(valid)
                else:
                    rows = np.arange(n)
                hits.append(rows + base)
                codes.append(data[rows].astype(np.int64))
            base += n
    hit = np.concatenate(hits) if hits else np.zeros(0, dtype=np.int64)
    dcode = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    return hit, dcode


def _docno_codes(
    docno: pa.ChunkedArray, out: np.ndarray | None = None, *, exact: bool = False
) -> tuple[np.ndarray, Any]:
    """A 64-bit code per docno, and (``exact=False``) whether every id fits in 8 bytes or
    (``exact=True``) a per-row mask of the ids whose code is exact.

    Ids of at most 8 bytes without NUL bytes are packed big-endian and zero-padded: an
    order-preserving, collision-free code. Longer ids get a fingerprint of fixed-position 8-byte
    words and the length; every equality found through a fingerprint is confirmed on the bytes.
    Codes are written chunk by chunk into one array (``out`` when given).
    """
    codes = np.empty(len(docno), dtype=np.uint64) if out is None else out
    fit = np.ones(len(docno), dtype=np.bool_) if exact else None
    all_short = True
    at = 0
    for chunk in docno.chunks:
        n = len(chunk)
        if n == 0:
            continue
        dest = codes[at : at + n]
        dfit = fit[at : at + n] if fit is not None else None
        at += n
        bufs = chunk.buffers()
        large = pa.types.is_large_binary(chunk.type) or pa.types.is_large_string(chunk.type)
        offs = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)[
            chunk.offset : chunk.offset + n + 1
        ].astype(np.int64)
        data = (
            np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        )
        lens = np.diff(offs)
        if lens.min() == 8 and lens.max() == 8 and offs[-1] - offs[0] == 8 * n:
            # the common case (MS MARCO-style ids): the data buffer is the code array
            words = data[offs[0] : offs[-1]]
            dest[:] = words.view(">u8")
            if dfit is not None and not words.all():  # an id with a NUL byte
                dfit &= words.reshape(-1, 8).all(axis=1)
            continue
        length = int(lens[0])
        if length > 8 and lens.min() == lens.max() and offs[-1] - offs[0] == length * n:
            # fixed-length long ids (40-byte MS MARCO v2.1 segments): words from a byte matrix
            mat = data[offs[0] : offs[-1]].reshape(n, length)
            first = np.ascontiguousarray(mat[:, :8]).view(">u8").ravel().astype(np.uint64)
            last = np.ascontiguousarray(mat[:, -8:]).view(">u8").ravel().astype(np.uint64)
            mid_at = (length - 8) // 2
            mid = np.ascontiguousarray(mat[:, mid_at : mid_at + 8]).view(">u8").ravel()
            with np.errstate(over="ignore"):
                fp = first * _MIX
                fp ^= last + np.uint64(0x632BE59BD9B4E019)
                fp *= _MIX
                fp ^= mid.astype(np.uint64) + np.uint64(length)
                fp *= _MIX
            dest[:] = fp
            all_short = False
            if dfit is not None:
                dfit[:] = False
            continue
        pad = np.zeros(int(offs[-1]) + 8, dtype=np.uint8)
        pad[: int(offs[-1])] = data[: int(offs[-1])]
        view = np.ndarray(buffer=pad, dtype=">u8", shape=(pad.size - 7,), strides=(1,))
        first = view[offs[:-1]].astype(np.uint64)
        short = lens <= 8
        shift = (8 - np.minimum(lens, 8)).astype(np.uint64) * np.uint64(8)
        with np.errstate(over="ignore"):
            mask = np.where(short & (lens > 0), ~np.uint64(0) << np.minimum(shift, 63), 0)
        mask = np.where(lens >= 8, ~np.uint64(0), mask).astype(np.uint64)
        code = first & mask
        if dfit is not None:
            dfit &= short
            if not data[offs[0] : offs[-1]].all():
                nul = np.flatnonzero(data[offs[0] : offs[-1]] == 0) + offs[0]
                dfit[np.searchsorted(offs, nul, side="right") - 1] = False
        if not short.all():
            all_short = False
            longs = np.flatnonzero(~short)
            last = view[offs[1:][longs] - 8].astype(np.uint64)
            mid = view[offs[:-1][longs] + (lens[longs] - 8) // 2].astype(np.uint64)
            with np.errstate(over="ignore"):
                fp = code[longs] * _MIX
                fp ^= last + np.uint64(0x632BE59BD9B4E019)
                fp = fp * _MIX
                fp ^= mid + lens[longs].astype(np.uint64)
                fp = fp * _MIX
            code[longs] = fp
        dest[:] = code
    return codes, (fit if exact else all_short)


def _dup_keys(run: Run, run_qcode: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit mix of (query, docno code) per row; equal rows have equal keys.

    ``codes`` (the docno codes, consumed: mixed in place) saves recomputing them."""
    keys = codes if codes is not None else _docno_codes(run.docno)[0]
    step = 1 << 20
    with np.errstate(over="ignore"):
        for a in range(0, keys.size, step):  # in place, a block at a time: no n-sized temporary
            block = keys[a : a + step]
            block *= _MIX
            block += run_qcode[a : a + step].astype(np.uint64)
    return keys


def find_duplicates(
    run: Run, run_qcode: np.ndarray, codes: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Exact (first row, later row) pairs of one (qid, docno) appearing twice, in file order.

    Candidates come from a sort of 64-bit (query, docno) codes; each is confirmed on the bytes.
    """
    keys = _dup_keys(run, run_qcode, codes)
    keys.sort()  # in place: one 8-byte array for the whole run
    dupvals = keys[1:][keys[1:] == keys[:-1]]  # sorted: unique without np.unique (numpy.ma)
    if dupvals.size > 1:
        dupvals = dupvals[np.concatenate(([True], dupvals[1:] != dupvals[:-1]))]
    del keys
    if dupvals.size == 0:
        return []
    rows = np.flatnonzero(np.isin(_dup_keys(run, run_qcode), dupvals))
    docs = take_rows(run.docno, rows).to_pylist()
    first: dict[tuple[int, bytes], int] = {}
    pairs: list[tuple[int, int]] = []
    for r, d in zip(rows.tolist(), docs, strict=True):
        k = (int(run_qcode[r]), d)
        if k in first:
            pairs.append((first[k], r))
        else:
            first[k] = r
    return pairs


def duplicate_error(
    run: Run, run_qids: Sequence[bytes], run_qcode: np.ndarray, pair: tuple[int, int]
) -> InputError:
    a, b = pair
    doc = run.docno[b].as_py().decode("utf-8", "replace")
    qid = run_qids[int(run_qcode[b])].decode("utf-8", "replace")
    loc = run.origin.locate([b])[0]
    return InputError(
        f"document '{doc}' appears twice for query '{qid}' (first at {run.origin.where(a)}); "
        "use --dedupe first or --dedupe max to keep one",
        path=loc.path,
        line=loc.line,
        location=loc.location,
    )


def dedupe_rows(run: Run, pairs: list[tuple[int, int]], policy: str) -> np.ndarray:
    """Rows to drop under ``--dedupe first|max`` (max: highest score, first among equals)."""
    groups: dict[int, list[int]] = {}
    for a, b in pairs:
        groups.setdefault(a, [a]).append(b)
    drop: list[int] = []
    for rows in groups.values():
        if policy == "first":
            drop += rows[1:]
        else:
            best = max(rows, key=lambda r: (run.score[r], -r))
            drop += [r for r in rows if r != best]
    return np.asarray(sorted(drop), dtype=np.int64)


class DuplicateCheck:
    """The run's duplicate check, started on a worker thread (numpy's sort releases the GIL).

    A plain thread, not concurrent.futures: that module imports logging, and ``ragmeter trec``
    keeps its imports lean.
    """

    def __init__(
        self,
        run: Run,
        run_qcode: np.ndarray,
        *,
        codes: np.ndarray | None = None,
        background: bool = True,
    ) -> None:
        self._result: list[tuple[int, int]] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if background and len(run) > 200_000:
            self._thread = threading.Thread(
                target=self._work, args=(run, run_qcode, codes), daemon=True
            )
            self._thread.start()
        else:
            self._result = find_duplicates(run, run_qcode, codes)

    def _work(self, run: Run, run_qcode: np.ndarray, codes: np.ndarray | None) -> None:
        try:
            self._result = find_duplicates(run, run_qcode, codes)
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def result(self) -> list[tuple[int, int]]:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


# --------------------------------------------------------------------------------------------
# Ranking


@dataclass(frozen=True, eq=False)
class Ranking:
    """The judged-subset view of one run against one qrels (the join above).

    Queries are the evaluated ones, numbered 0..E-1 in qid byte order. ``rows`` lists, for each
    retrieved document that has a qrels line, its query, rank (1-based, after ``-M``/``-J``) and
    grade, sorted by (query, rank). ``n`` is the number of documents retrieved per query.
    """

    qids: list[str]
    qcodes: np.ndarray  # qrels query code of each evaluated query
    missing: np.ndarray  # bool: judged query absent from the run, scored 0 under -c
    n: np.ndarray  # int64 documents retrieved per query
    q: np.ndarray  # int64 query of each judged row
    rank: np.ndarray  # int64 rank of each judged row
    grade: np.ndarray  # int64 grade of each judged row (< 0: pooled but unjudged)
    starts: np.ndarray  # row offset of each query (+ end)
    qrel_grades: np.ndarray  # qrels grades of the evaluated queries, by (query, grade desc)
    qrel_starts: np.ndarray  # offsets into qrel_grades (+ end)
    judged_only: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

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


def take_rows(arr: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``arr[rows]`` for a chunked array, chunk by chunk (Arrow's take on a chunked array may
    first concatenate every chunk, which costs the whole column for a few rows)."""
    rows = np.asarray(rows, dtype=np.int64)
    if arr.num_chunks == 1:
        return call("take", arr.chunk(0), from_numpy(rows))
    if rows.size == 0:
        return arr.chunk(0).slice(0, 0)
    bounds = np.cumsum([0] + [len(c) for c in arr.chunks])
    which = np.searchsorted(bounds, rows, side="right") - 1
    order = np.argsort(which, kind="stable")
    parts = []
    sorted_which = which[order]
    cuts = np.flatnonzero(np.diff(sorted_which)) + 1
    for idx in np.split(order, cuts):
        c = int(which[idx[0]])
        parts.append(call("take", arr.chunk(c), from_numpy(rows[idx] - bounds[c])))
    taken = pa.concat_arrays(parts)
    inverse = np.empty(rows.size, dtype=np.int64)
    inverse[order] = np.arange(rows.size, dtype=np.int64)
    return call("take", taken, from_numpy(inverse))


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
    docno: pa.ChunkedArray,
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
    docs = take_rows(docno, member_rows)
    table = pa.table({"g": from_numpy(member_group), "d": docs})
    from pyarrow._compute import SortOptions

    order = call(
        "sort_indices", table, options=SortOptions([("g", "ascending"), ("d", "descending")])
    )
    order = to_numpy(order)
    sorted_group = member_group[order]
    gfirst = np.searchsorted(sorted_group, np.arange(groups.size))
    rank_in_group = np.empty(total, dtype=np.int64)
    rank_in_group[order] = np.arange(total, dtype=np.int64) - gfirst[sorted_group]
    member_index = np.searchsorted(members, tpos)  # groups are disjoint and ascending
    group_start[tied] = lo
    offset[tied] = rank_in_group[member_index]
    return group_start, offset


@dataclass(eq=False)
class RankPiece:
    """The ranked judged rows of one batch of whole queries (before they are assembled)."""

    counts: np.ndarray  # documents per qrels query in this piece (before -M), int64
    jq: np.ndarray  # qrels query code of each judged row
    jrank: np.ndarray  # rank after ties and -M
    jgrade: np.ndarray
    tied_pairs: int = 0
    all_tied: list[str] = field(default_factory=list)


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
    order_j = np.lexsort((jrank, jq))
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
