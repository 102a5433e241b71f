"""The join of a run with the qrels: which rows are judged for their query, and their grades."""

from __future__ import annotations

import numpy as np

from ragmeter.io.trec.column import BytesColumn
from ragmeter.io.trec.containers import Run
from ragmeter.retrieval.kernels.codes import (
    _index_in,
    _pair_hash,
    _qid_codes,
    same_ids,
    take_ids,
    take_rows,
)
from ragmeter.retrieval.kernels.qrels_index import QrelsIndex


class JoinedRun:
    """A run's rows with query codes and, for judged rows, their grades.

    (A plain class, as the other records of the kernels: a dataclass costs ~1 ms of
    ``ragmeter trec``'s start to create, docs/retrieval.md#speed.)
    """

    def __init__(
        self,
        run: Run,
        run_qids: list[bytes],
        run_qcode: np.ndarray,
        remap: np.ndarray,
        judged_rows: np.ndarray,
        judged_grades: np.ndarray,
        unjudged_qids: list[bytes] | None = None,
    ) -> None:
        self.run = run
        self.run_qids = run_qids  # distinct run qids (unified dictionary), any order
        self.run_qcode = run_qcode  # int32 per row: index into run_qids
        self.remap = remap  # int32 per run qid: index into the qrels' qids, -1 if not judged
        self.judged_rows = judged_rows  # int64 rows whose (qid, docno) is in the qrels
        self.judged_grades = judged_grades  # int64 grade of those rows
        # run qids without qrels
        self.unjudged_qids = [] if unjudged_qids is None else unjudged_qids

    @property
    def qcode(self) -> np.ndarray:
        """int32 per row: index into the qrels' qids, -1 if not judged (built on demand)."""
        return self.remap[self.run_qcode] if self.remap.size else self.run_qcode

    @property
    def any_judged(self) -> bool:
        return bool((self.remap >= 0).any())


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
    keep = _same_bytes(
        run, index, cand, exact[cand] & index.doc_fit[pos], index.doc_code_index, pos
    )
    if keep is not None:
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
    if index.pair_dir is not None:
        pos = _bucket_search(keys, index.pair_dir, index.pair_shift, mix)
    else:
        pos = np.minimum(np.searchsorted(keys, mix), keys.size - 1)
    ok = keys[pos] == mix
    cand, line = cand[ok], index.pair_line[pos[ok]]
    q = remap[qcodes[cand]] if remap.size else qcodes[cand]
    ok = (index.line_q[line] == q) & (index.line_code[line] == codes[cand])
    cand, line = cand[ok], line[ok]
    keep = _same_bytes(run, index, cand, exact[cand] & index.line_fit[line], index.line_doc, line)
    if keep is not None:
        cand, line = cand[keep], line[keep]
    return cand, index.line_doc[line], line


def _bucket_search(keys: np.ndarray, starts: np.ndarray, shift: int, mix: np.ndarray) -> np.ndarray:
    """A position in the sorted, distinct ``keys`` for each ``mix``: where it is when present
    (as ``searchsorted`` finds it), some valid position otherwise. Each mix walks its bucket
    (``starts``: the buckets of the top bits) to the first key not below it."""
    bucket = (mix >> np.uint64(shift)).astype(np.intp)
    pos = starts[bucket]
    end = starts[bucket + 1]
    del bucket
    active = np.flatnonzero(pos < end)
    for _ in range(32):  # buckets hold one or two keys; a crowded one ends in a binary search
        if not active.size:
            break
        active = active[keys[pos[active]] < mix[active]]
        pos[active] += 1
        active = active[pos[active] < end[active]]
    else:
        pos[active] = np.searchsorted(keys, mix[active])
    return np.minimum(pos, keys.size - 1)


def _same_bytes(
    run: Run,
    index: QrelsIndex,
    cand: np.ndarray,
    exact: np.ndarray,
    docs: np.ndarray,
    at: np.ndarray,
) -> np.ndarray | None:
    """Which candidate matches hold on the bytes (``None``: all of them). Equal packed codes are
    equal ids; where either side is a fingerprint (``exact`` false) the run's docno bytes are
    compared with the judged document's, ``docs[at]``."""
    check = np.flatnonzero(~exact)
    if not check.size:
        return None
    same = same_ids(take_rows(run.docno, cand[check]), take_ids(index.doc_values, docs[at[check]]))
    if same.all():
        return None
    keep = np.ones(cand.size, dtype=bool)
    keep[check[~same]] = False
    return keep


def _join_bytes(run: Run, index: QrelsIndex) -> tuple[np.ndarray, np.ndarray]:
    """(rows, docno index) through Arrow's hash lookup on the bytes, a few chunks at a time."""
    if isinstance(run.docno, BytesColumn) or isinstance(index.doc_values, BytesColumn):
        at = {v: i for i, v in enumerate(index.doc_values.to_pylist())}
        found = [(r, at.get(v, -1)) for r, v in enumerate(run.docno.to_pylist())]
        pairs = np.array([p for p in found if p[1] >= 0], dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]
    import pyarrow as pa

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
