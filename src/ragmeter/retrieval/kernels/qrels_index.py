"""The qrels side of the join, prepared once per evaluator (:class:`QrelsIndex`)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.io.trec.column import BytesColumn
from ragmeter.io.trec.containers import Qrels
from ragmeter.retrieval.kernels.codes import (
    _docno_codes,
    _index_in,
    _pair_hash,
    _to_numpy,
    _unique_sorted_binary,
    row_bytes,
    same_ids,
    take_rows,
)
from ragmeter.retrieval.kernels.sorting import (
    sort_with_rows,
    stable_argsort,
    unique_first_inverse,
)


class QrelsIndex:
    """The qrels side, prepared once (an :class:`~ragmeter.retrieval.Evaluator` keeps it).

    Queries are numbered in qid byte order. Lines are sorted by (query, docno index), so that a
    run row's (query, docno) key is found with one ``searchsorted``. (A plain class: a
    dataclass of this size costs ~2 ms of ``ragmeter trec``'s start to create,
    docs/retrieval.md#speed.)
    """

    def __init__(
        self,
        qids: list[bytes],
        doc_values: Any,
        keys: np.ndarray,
        grades: np.ndarray,
        q_starts: np.ndarray,
        by_grade: np.ndarray,
        qrels: Qrels,
        dedupe_dropped: int = 0,
        doc_codes: np.ndarray | None = None,
        doc_code_index: np.ndarray | None = None,
        code_filter: np.ndarray | None = None,
        filter_shift: int = 64,
        doc_fit: np.ndarray | None = None,
        pair_keys: np.ndarray | None = None,
        pair_dir: np.ndarray | None = None,
        pair_shift: int = 64,
        pair_line: np.ndarray | None = None,
        line_q: np.ndarray | None = None,
        line_doc: np.ndarray | None = None,
        line_code: np.ndarray | None = None,
        line_fit: np.ndarray | None = None,
    ) -> None:
        self.qids = qids  # judged qids in byte order
        # distinct judged docnos (binary pa.Array or BytesColumn): the join's value set
        self.doc_values = doc_values
        self.keys = keys  # sorted int64 key per qrels line: query * ndocs + docno index
        self.grades = grades  # int64 grade per key
        self.q_starts = q_starts  # line offset of each query in the sorted lines (+ end)
        self.by_grade = by_grade  # grades sorted by (query, grade descending)
        self.qrels = qrels
        self.dedupe_dropped = dedupe_dropped
        # packed 8-byte codes of the judged docnos that fit (sorted), their doc_values index,
        # and a bit table of hashed (query, docno code) pairs that rules out almost every run
        # row in one gather, also when most of the run's documents are judged for another query
        self.doc_codes = doc_codes
        self.doc_code_index = doc_code_index
        self.code_filter = code_filter
        self.filter_shift = filter_shift
        self.doc_fit = doc_fit  # per sorted code: True when it is a packed (exact) code
        # per judgment, in ``keys`` order: query, docno index, docno code, packed-code flag; and
        # the judgments' (query, docno code) mixes, sorted (None if two ever collided), with
        # their line
        self.pair_keys = pair_keys
        # where each bucket of mixes (their top ``64 - pair_shift`` bits) starts in pair_keys
        # (+ end): a candidate is then looked for among the one or two keys of its bucket, not
        # by a binary search over all of them, whose random reads cost several times more
        self.pair_dir = pair_dir
        self.pair_shift = pair_shift
        self.pair_line = pair_line
        self.line_q = line_q
        self.line_doc = line_doc
        self.line_code = line_code
        self.line_fit = line_fit

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    def qid_lookup(self) -> dict[bytes, int]:
        """qid → query code (do not modify: it is built once, for every batch of a stream)."""
        return self._qid_lookup

    @functools.cached_property
    def _qid_lookup(self) -> dict[bytes, int]:
        return {q: i for i, q in enumerate(self.qids)}


def _unique_codes(
    col: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(sorted distinct codes, first row of each, code index per row, packed-code mask per
    distinct value), or None when two different ids share a fingerprint (never seen)."""
    codes, fit = _docno_codes(col, exact=True)
    uniq, first, inverse = unique_first_inverse(codes)
    if not fit.all():
        # a fingerprint stands for its bytes only if every row with it has the same bytes
        rep_row = first[inverse]
        check = np.flatnonzero(~fit & (rep_row != np.arange(inverse.size)))
        mine = take_rows(col, check)
        rep = take_rows(col, rep_row[check])
        if not same_ids(mine, rep).all():
            return None
    return uniq, first, inverse, fit[first]


def _sorted_codes(col: Any) -> tuple[list[bytes], np.ndarray]:
    """(distinct values in byte order, int64 index of each row's value among them)."""
    if isinstance(col, BytesColumn):
        values = sorted(set(col.values))
        at = {v: i for i, v in enumerate(values)}
        return values, np.array([at[v] for v in col.values], dtype=np.int64)
    qid_list, qid_values = _unique_sorted_binary(col)
    return qid_list, _to_numpy(_index_in(col, qid_values)).astype(np.int64)


def _distinct(col: Any) -> tuple[Any, np.ndarray]:
    """(distinct values in order of appearance, int64 index of each row's value among them)."""
    if isinstance(col, BytesColumn):
        at: dict[bytes, int] = {}
        codes = [at.setdefault(v, len(at)) for v in col.values]
        return BytesColumn(list(at)), np.array(codes, dtype=np.int64)
    import pyarrow as pa

    from ragmeter.io.arrowutil import call

    values = call("unique", col)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values, _to_numpy(_index_in(col, values)).astype(np.int64)


def _chunked(values: Any) -> Any:
    """A plain id array as the (chunked) column :func:`_docno_codes` reads."""
    if isinstance(values, BytesColumn):
        return values
    import pyarrow as pa

    return pa.chunked_array([values], type=values.type)


def _by_grade(grades: np.ndarray, qcode_sorted: np.ndarray, num_queries: int) -> np.ndarray:
    """The grades sorted by (query, grade descending), ``qcode_sorted`` being non-decreasing:
    one sort of ``query * span + (top - grade)``, when that fits in 63 bits."""
    if not grades.size:
        return grades.copy()
    top, span = int(grades.max()), int(grades.max()) - int(grades.min()) + 1
    if span.bit_length() + max(num_queries, 1).bit_length() > 62:
        return grades[np.lexsort((-grades, qcode_sorted))]
    base = qcode_sorted.astype(np.int64) * span
    packed = base + (top - grades.astype(np.int64))
    packed.sort()
    packed -= base  # the sort kept every query's rows where they were
    return (top - packed).astype(grades.dtype, copy=False)


def _pair_directory(pair_keys: np.ndarray) -> tuple[np.ndarray, int]:
    """(start of each bucket in the sorted ``pair_keys`` and the end, shift of a mix to its
    bucket): about one key per bucket, at most 2^22 buckets (32 MB)."""
    bits = min(22, max(1, pair_keys.size.bit_length() - 1))
    shift = 64 - bits
    counts = np.bincount((pair_keys >> np.uint64(shift)).astype(np.intp), minlength=1 << bits)
    starts = np.zeros((1 << bits) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts, shift


def build_qrels_index(qrels: Qrels, *, dedupe: str | None = None) -> QrelsIndex:
    """Sort and key the qrels; a document judged twice for a query is an error (--dedupe aside)."""
    # distinct values through their 64-bit codes (a sort of integers), not Arrow's hash of
    # the bytes, which costs several times more on deeply judged qrels
    q = _unique_codes(qrels.qid)
    if q is not None and q[3].all():  # packed qids: code order is byte order
        qid_list = take_rows(qrels.qid, q[1]).to_pylist()
        qcode = q[2]
    else:
        qid_list, qcode = _sorted_codes(qrels.qid)
    d = _unique_codes(qrels.docno)
    if d is not None:
        doc_values = take_rows(qrels.docno, d[1])
        dcode = d[2]
    else:
        doc_values, dcode = _distinct(qrels.docno)
    ndocs = max(len(doc_values), 1)
    keys = qcode * ndocs + dcode
    order = stable_argsort(keys)  # stable: file order among duplicates
    skeys = keys[order]
    grades = qrels.grade[order]
    dropped = 0
    dup = np.flatnonzero(skeys[1:] == skeys[:-1]) + 1
    if dup.size:
        if dedupe is None:
            second = int(order[dup].min())
            key = keys[second]
            first = int(np.flatnonzero(keys == key)[0])
            doc = row_bytes(qrels.docno, second).decode("utf-8", "replace")
            qid: Any = row_bytes(qrels.qid, second)
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
    by_grade = _by_grade(grades, qcode_sorted, len(qid_list))
    # every judged docno's code, sorted: packed (exact) for ids of at most 8 bytes, a
    # fingerprint for longer ones, whose matches the join confirms on the bytes
    if d is not None:
        codes, doc_codes, doc_fit = d[0], d[0], d[3]
        doc_code_index = np.arange(codes.size)
        fit_by_doc = d[3]
    else:
        codes, fit = _docno_codes(_chunked(doc_values), exact=True)
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
    # the same 64-bit mix, sorted, finds a candidate's judgment (through the bucket directory)
    by_words = sort_with_rows(pair)
    if by_words is not None:
        pair_keys, pair_line = by_words
    else:
        pair_line = np.argsort(pair)  # distinct mixes have one order, which is the stable one
        pair_keys = pair[pair_line]
    unique_pairs = not (pair_keys[1:] == pair_keys[:-1]).any()
    if not unique_pairs:
        pair_line = np.argsort(pair, kind="stable")
        pair_keys = pair[pair_line]
    h = pair >> np.uint64(shift)
    del pair
    slot, bit = h >> np.uint64(3), (h & np.uint64(7)).astype(np.uint8)
    # one bit at a time: repeated slots then set the same bit (no ufunc.at); the pairs are
    # grouped by bit with one (radix) sort of the bit numbers, not a mask of every pair per bit
    by_bit = np.argsort(bit, kind="stable")
    bounds = np.searchsorted(bit[by_bit], np.arange(9))
    slot = slot[by_bit]
    for b in range(8):
        table[slot[bounds[b] : bounds[b + 1]]] |= np.uint8(1 << b)
    pair_dir, pair_shift = _pair_directory(pair_keys) if unique_pairs else (None, 64)
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
        pair_dir=pair_dir,
        pair_shift=pair_shift,
        pair_line=pair_line,
        line_q=qcode_sorted,
        line_doc=line_doc,
        line_code=codes[line_doc],
        line_fit=(fit_by_doc[line_doc] if unique_pairs else None),
    )
