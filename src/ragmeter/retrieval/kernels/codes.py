"""Integer codes of id columns: packed or fingerprinted 64-bit docno codes, unified qid codes, and
row takes that do not concatenate a chunked column.

An id column is an Arrow array or, for a small file, a
:class:`~ragmeter.io.trec.column.BytesColumn`; both expose the same offsets-and-bytes layout, so
the codes (and all that is computed from them) come from one code path. Arrow is imported only
for Arrow columns.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.io.trec.column import BytesColumn, SpanColumn

if TYPE_CHECKING:
    import pyarrow as pa

_MIX = np.uint64(0x9E3779B97F4A7C15)

_QMIX = np.uint64(0xC2B2AE3D27D4EB4F)


def _index_in(values: Any, value_set: pa.Array) -> Any:
    from pyarrow._compute import SetLookupOptions

    from ragmeter.io.arrowutil import call

    return call("index_in", values, options=SetLookupOptions(value_set))


def _unique_sorted_binary(arr: pa.ChunkedArray) -> tuple[list[bytes], pa.Array]:
    import pyarrow as pa

    from ragmeter.io.arrowutil import call

    uniq = call("unique", arr)
    if isinstance(uniq, pa.ChunkedArray):
        uniq = uniq.combine_chunks()
    uniq = call("take", uniq, call("sort_indices", uniq))
    return uniq.to_pylist(), uniq


def _to_numpy(arr: pa.ChunkedArray | pa.Array, fill: int = -1) -> np.ndarray:
    from ragmeter.io.arrowutil import to_numpy

    return to_numpy(arr, fill=fill)


def row_bytes(col: Any, row: int) -> bytes:
    """One id's bytes (for messages)."""
    if isinstance(col, BytesColumn):
        return col[row]
    value: bytes = col[row].as_py()
    return value


def same_ids(mine: Any, theirs: Any) -> np.ndarray:
    """Row-by-row equality of two id arrays of one length (bool)."""
    if isinstance(mine, SpanColumn) and isinstance(theirs, SpanColumn):
        return _same_spans(mine, theirs)
    if isinstance(mine, BytesColumn) or isinstance(theirs, BytesColumn):
        a, b = mine.to_pylist(), theirs.to_pylist()
        return np.fromiter(map(operator.eq, a, b), dtype=bool, count=len(a))
    from ragmeter.io.arrowutil import call, to_numpy

    return to_numpy(call("equal", mine, theirs)).astype(bool)


def _same_spans(mine: SpanColumn, theirs: SpanColumn) -> np.ndarray:
    """:func:`same_ids` of span columns: ids of up to 16 bytes are equal when their lengths and
    their first and last 8 bytes are; longer ones are compared as bytes."""
    (sa, ea, a), (sb, eb, b) = mine.spans(), theirs.spans()
    wa = np.ndarray(buffer=a, dtype="<u8", shape=(a.size - 7,), strides=(1,))
    wb = np.ndarray(buffer=b, dtype="<u8", shape=(b.size - 7,), strides=(1,))
    la, lb = ea - sa, eb - sb
    same = la == lb
    if la.size and int(la.min()) >= 8 and int(la.max()) <= 16:
        # every id has 8 to 16 bytes (the common case): two words cover each
        same &= wa[sa] == wb[sb]
        same &= wa[ea - 8] == wb[eb - 8]
        return same
    # ids of under 8 bytes: their bytes alone (the word's high bytes are past the id's end)
    keep = (np.uint64(1) << (np.minimum(la, 8).astype(np.uint64) * np.uint64(8))) - np.uint64(1)
    keep[la >= 8] = ~np.uint64(0)
    same &= (wa[sa] & keep) == (wb[sb] & keep)
    long_a, long_b = la > 8, lb > 8
    same &= wa[np.where(long_a, ea - 8, sa)] * long_a == wb[np.where(long_b, eb - 8, sb)] * long_b
    for row in np.flatnonzero(same & (la > 16)).tolist():
        same[row] = mine[row] == theirs[row]
    return same


def take_ids(values: Any, rows: np.ndarray) -> Any:
    """``values[rows]`` of a plain (not chunked) id array: Arrow's take, or a BytesColumn's."""
    if isinstance(values, BytesColumn):
        return values.take(rows)
    from ragmeter.io.arrowutil import call, from_numpy

    return call("take", values, from_numpy(np.asarray(rows, dtype=np.int64)))


def _qid_codes(qid: pa.ChunkedArray) -> tuple[list[bytes], np.ndarray]:
    """Unified codes for a (possibly dictionary-encoded, chunked) qid column."""
    if isinstance(qid, SpanColumn):
        packed = _packed_first_appearance(qid)
        if packed is not None:
            return packed
    if isinstance(qid, BytesColumn):
        distinct = list(dict.fromkeys(qid.values))  # in order of first appearance
        at = {v: i for i, v in enumerate(distinct)}
        return distinct, np.fromiter(map(at.__getitem__, qid.values), np.int32, len(qid))
    import pyarrow as pa

    from ragmeter.io.arrowutil import lazy_compute as pc
    from ragmeter.io.arrowutil import to_numpy

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


def _packed_first_appearance(col: SpanColumn) -> tuple[list[bytes], np.ndarray] | None:
    """:func:`_qid_codes` of a span column through packed codes (sorts of integers, fast on a
    file grouped by query), or None when an id is longer than 8 bytes."""
    from ragmeter.retrieval.kernels.sorting import unique_first_inverse

    codes, fit = _docno_codes(col, exact=True)
    if not fit.all():
        return None
    _, first, inverse = unique_first_inverse(codes)
    order = np.argsort(first)
    rank = np.empty(order.size, dtype=np.int32)
    rank[order] = np.arange(order.size, dtype=np.int32)
    return col.take(first[order]).to_pylist(), rank[inverse]


def _pair_hash(codes: np.ndarray, qcodes: np.ndarray, shift: int) -> np.ndarray:
    """The filter slot of each (query code, docno code) pair: the top bits of a 64-bit mix."""
    with np.errstate(over="ignore"):
        h = qcodes.astype(np.uint64) * _QMIX
        h ^= codes
        h *= _MIX
        h >>= np.uint64(shift)
    return h


def _layouts(col: Any) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, bool]]:
    """(int64 starts, int64 ends, uint8 bytes, back to back) of each non-empty chunk of an id
    column. Back to back: each id starts where the one before ends (Arrow's layout); else the
    ids are spans of a buffer with at least 8 bytes after each, and no NUL byte."""
    if isinstance(col, SpanColumn):
        if len(col):
            yield (*col.spans(), False)
        return
    if isinstance(col, BytesColumn):
        if len(col):
            yield (*col.spans(), True)
        return
    import pyarrow as pa

    for chunk in col.chunks:
        n = len(chunk)
        if n == 0:
            continue
        bufs = chunk.buffers()
        large = pa.types.is_large_binary(chunk.type) or pa.types.is_large_string(chunk.type)
        offs = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)[
            chunk.offset : chunk.offset + n + 1
        ].astype(np.int64)
        data = (
            np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        )
        yield offs[:-1], offs[1:], data, True


def _words_at(data: np.ndarray, start: int, n: int, length: int, at: int) -> np.ndarray:
    """The little-endian 8-byte word at byte ``at`` of each of ``n`` ids of ``length`` bytes stored
    back to back from ``start``, in one strided read (copying those 8 columns of the byte matrix
    first, then swapping the bytes, took four times longer on a 1M-line run)."""
    strided = np.ndarray((n,), dtype="<u8", buffer=data, offset=start + at, strides=(length,))
    return strided.astype(np.uint64)


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
    for starts, ends, data, packed in _layouts(docno):
        n = starts.size
        dest = codes[at : at + n]
        dfit = fit[at : at + n] if fit is not None else None
        at += n
        lens = ends - starts
        lo, hi = int(starts[0]), int(ends[-1])
        length = int(lens[0])
        fixed = packed and lens.min() == lens.max() and hi - lo == length * n
        if fixed and length == 8:
            # the common case (MS MARCO-style ids): the data buffer is the code array
            words = data[lo:hi]
            dest[:] = words.view(">u8")
            if dfit is not None and not words.all():  # an id with a NUL byte
                dfit &= words.reshape(-1, 8).all(axis=1)
            continue
        if fixed and length > 8:
            # fixed-length long ids (40-byte MS MARCO v2.1 segments): words from a byte matrix
            first = _words_at(data, lo, n, length, 0)
            last = _words_at(data, lo, n, length, length - 8)
            mid = _words_at(data, lo, n, length, (length - 8) // 2)
            dest[:] = _fingerprint(first, last, mid, lens)
            all_short = False
            if dfit is not None:
                dfit[:] = False
            continue
        if packed:
            pad = np.zeros(hi + 8, dtype=np.uint8)
            pad[:hi] = data[:hi]
        else:
            pad = data  # spans: the buffer goes on for 8 bytes after each
        # little-endian words: a fingerprint needs no particular order, and a packed code is
        # swapped to big-endian below (byte order is then numeric order)
        view = np.ndarray(buffer=pad, dtype="<u8", shape=(pad.size - 7,), strides=(1,))
        code = view[starts]
        short = lens <= 8
        n_short = int(np.count_nonzero(short))
        if dfit is not None:
            dfit &= short
            if packed and not data[lo:hi].all():
                nul = np.flatnonzero(data[lo:hi] == 0) + lo
                dfit[np.searchsorted(starts, nul, side="right") - 1] = False
        if n_short < n:
            all_short = False
            rows = np.flatnonzero(~short) if n_short else slice(None)
            ls = lens[rows]
            fp = _fingerprint(
                code[rows] if n_short else code,
                view[ends[rows] - 8],
                view[starts[rows] + (ls - 8) // 2],
                ls,
            )
            if n_short:
                code[rows] = fp
        if n_short:
            rows = np.flatnonzero(short) if n_short < n else slice(None)
            packed_codes = code[rows] if n_short < n else code
            packed_codes.byteswap(inplace=True)
            # the bytes past an id's end are zeroed (an empty id's code is 0)
            drop = (8 - lens[rows].astype(np.uint64)) * np.uint64(8)
            packed_codes >>= drop
            packed_codes <<= drop
            if n_short < n:
                code[rows] = packed_codes
        dest[:] = code
    return codes, (fit if exact else all_short)


def _fingerprint(
    first: np.ndarray, last: np.ndarray, mid: np.ndarray, lens: np.ndarray
) -> np.ndarray:
    """The 64-bit code of ids longer than 8 bytes: a mix of their first, last and middle
    8-byte words (little-endian) and their length. Computed in ``first``, ``last`` and ``mid``
    (fresh arrays), and returned in ``first``."""
    with np.errstate(over="ignore"):
        first *= _MIX
        last += np.uint64(0x632BE59BD9B4E019)
        first ^= last
        first *= _MIX
        mid += lens.astype(np.uint64)
        first ^= mid
        first *= _MIX
    return first


# the largest column :func:`take_rows` copies whole (a 1M-line run's docnos take ~16 MB); a
# larger one, as a 7M-line run's, is taken chunk by chunk and adds no column-sized copy to the peak
_COMBINE_BYTES = 64 << 20


def take_rows(arr: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``arr[rows]`` for a chunked array, chunk by chunk (Arrow's take on a chunked array may
    first concatenate every chunk, which costs the whole column for a few rows)."""
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(arr, BytesColumn):
        return arr.take(rows)
    import pyarrow as pa

    from ragmeter.io.arrowutil import call, from_numpy

    if arr.num_chunks == 1:
        return call("take", arr.chunk(0), from_numpy(rows))
    if rows.size == 0:
        return arr.chunk(0).slice(0, 0)
    if rows.size * 16 >= len(arr) and arr.nbytes <= _COMBINE_BYTES:
        # a sixteenth or more of a column of up to 64 MB (the distinct judged docnos, the
        # join's candidates on deeply judged qrels): one copy of the column and one take. At a
        # fifth of the rows that costs a sixth to a half of taking them chunk by chunk (then
        # concatenating and reordering them); at a sixteenth the two cost about the same
        return call("take", arr.combine_chunks(), from_numpy(rows))
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
