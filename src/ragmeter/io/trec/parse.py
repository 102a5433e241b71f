"""The columnar parse of whitespace-separated lines: ``pyarrow.csv`` on a sniffed single-byte
delimiter (the fast path), after a numpy normalisation for ragged whitespace (the general path)."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import call
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.trec.checks import (
    _BLOCK,
    _no_data,
    _refuse_cr_only,
    _refuse_long_line,
    _utf8_error,
)
from ragmeter.io.trec.containers import Origin, _plain
from ragmeter.io.trec.lines import _WS, _Input

_NORM_CHUNK = 1 << 24

# Bytes of the head the sniff reads (about 400 run lines, 1 ms): enough to find the layout,
# since the whole input is then searched for whitespace the layout would keep in a field
_SAMPLE = 1 << 14

_WS_TABLE = np.zeros(256, dtype=bool)

_WS_TABLE[list(_WS)] = True


def _sniff(head: bytes, min_fields: int) -> tuple[str, int, bool] | None:
    """(delimiter, field count, trim) for the fast path, or None when it cannot apply."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    cut = head.rfind(b"\n")
    if cut < 0:
        sample = head
    else:
        sample = head[: cut + 1]
    lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in sample.split(b"\n")]
    if b"\r" in b"".join(lines) or b"\x0b" in sample or b"\x0c" in sample:
        return None
    if re.search(rb"\r(?!\n)", head[:-1]):  # a bare CR after the last whole line: CR-only ends?
        return None
    tabs = b"\t" in sample
    counts = set()
    for ln in lines:
        if not ln:
            continue
        stripped = ln.strip(_WS)
        if not stripped or stripped.startswith(b"#"):
            return None
        if tabs:
            parts = ln.split(b"\t")
            if any(not p.strip(b" ") for p in parts) or any(b" " in p.strip(b" ") for p in parts):
                return None
        else:
            if ln != stripped or b"  " in ln:
                return None
            parts = ln.split(b" ")
        counts.add(len(parts))
    if len(counts) > 1:
        return None
    n = counts.pop() if counts else min_fields
    if n < min_fields:
        return None
    trim = tabs and b" " in sample
    return ("\t" if tabs else " "), n, trim


def _csv_read(
    source: Any, names: list[str], types: dict[str, pa.DataType], delimiter: str
) -> pa.Table:
    return pcsv.read_csv(
        source,
        read_options=pcsv.ReadOptions(column_names=names, block_size=_BLOCK),
        parse_options=pcsv.ParseOptions(
            delimiter=delimiter, quote_char=False, escape_char=False, double_quote=False
        ),
        convert_options=pcsv.ConvertOptions(
            include_columns=list(types),
            column_types=types,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
    )


def _drop_ranges(out: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``out`` without the bytes of the (disjoint, sorted) ranges [starts, ends)."""
    if starts.size == 0:
        return out
    marks = np.zeros(out.size + 1, dtype=np.int8)
    marks[starts] += 1
    np.subtract.at(marks, ends, 1)  # an end may equal the next range's start
    return out[np.cumsum(marks[:-1], dtype=np.int8) == 0]


def _line_bounds(out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    nl = np.flatnonzero(out == 10)
    ls = np.concatenate(([0], nl + 1))
    le = np.append(nl, out.size)
    keep = ls < le
    return ls[keep], le[keep]


_SEGMENT = 64 << 20  # bytes of a memory-mapped file parsed at a time


def _csv_read_mapped(
    path: str,
    names: list[str],
    types: dict[str, pa.DataType],
    delimiter: str,
    foreign: list[bytes],
) -> pa.Table | None:
    """Parse a large file through a memory map, a newline-aligned segment at a time; None when
    a segment holds one of the ``foreign`` bytes (the general path then reads the file).

    Parsing straight from the page cache saves copying the file (about a third of the parse's
    CPU); each parsed segment's pages are then dropped from this process (MADV_DONTNEED; the
    page cache keeps them), so the mapped file never adds more than a segment to the peak RSS.
    Each segment is searched just before its parse, so its pages are mapped in once.
    """
    import mmap

    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    size = len(mm)
    view = memoryview(mm)
    tables = []
    pos = 0
    page = mmap.PAGESIZE
    try:
        while pos < size:
            end = min(pos + _SEGMENT, size)
            if end < size:
                nl = mm.find(b"\n", end)
                end = size if nl < 0 else nl + 1
            if any(mm.find(b, pos, end) >= 0 for b in foreign):
                return None
            tables.append(
                _csv_read(pa.BufferReader(pa.py_buffer(view[pos:end])), names, types, delimiter)
            )
            done = (end // page) * page
            start = (pos // page) * page
            if done > start and hasattr(mm, "madvise"):
                mm.madvise(mmap.MADV_DONTNEED, start, done - start)
            pos = end
    finally:
        view.release()
    table = pa.concat_tables(tables)
    del tables
    with contextlib.suppress(BufferError):  # an Arrow buffer may still point into the map
        mm.close()
    return table


def _normalise_chunk(chunk: np.ndarray, nfields: int, truncate: bool) -> np.ndarray:
    """Whitespace runs → one space, no leading or trailing space, comment lines emptied.

    With ``truncate``, fields after the first ``nfields`` are dropped (run lines with junk).
    Newlines are kept, so a line keeps its place (blank lines are skipped by the CSV reader).
    """
    ws = _WS_TABLE[chunk]
    nl = chunk == 10
    tok = ~(ws | nl)
    keep = tok | nl
    keep[:-1] |= ws[:-1] & tok[1:]  # the last whitespace byte of a run before a token
    del nl, tok
    out = chunk[keep]
    out[ws[keep]] = 32
    del ws, keep
    ls, le = _line_bounds(out)
    lead = out[ls] == 32
    first = ls + lead
    comment = (first < le) & (out[np.minimum(first, out.size - 1)] == 35) if out.size else lead
    starts = np.where(comment, ls, ls)[lead | comment]
    ends = np.where(comment, le, ls + 1)[lead | comment]
    out = _drop_ranges(out, starts, ends)
    if truncate and out.size:
        ls, le = _line_bounds(out)
        sp = np.flatnonzero(out == 32)
        first_sp = np.searchsorted(sp, ls)
        per_line = np.searchsorted(sp, le) - first_sp
        long_lines = np.flatnonzero(per_line >= nfields)
        if long_lines.size:
            cut = sp[first_sp[long_lines] + nfields - 1]
            out = _drop_ranges(out, cut, le[long_lines])
    return out


def _normalise(data: np.ndarray, nfields: int, truncate: bool) -> bytes:
    """Normalise a whole buffer in newline-aligned chunks, on two threads."""
    from concurrent.futures import ThreadPoolExecutor

    bounds = [0]
    size = data.size
    while bounds[-1] < size:
        end = min(bounds[-1] + _NORM_CHUNK, size)
        if end < size:
            window = data[end : min(end + (1 << 20), size)]
            hit = np.flatnonzero(window == 10)
            while hit.size == 0 and end + window.size < size:
                end += window.size
                window = data[end : min(end + (1 << 20), size)]
                hit = np.flatnonzero(window == 10)
            end = end + int(hit[0]) + 1 if hit.size else size
        bounds.append(end)
    pieces = list(itertools.pairwise(bounds))
    with ThreadPoolExecutor(max_workers=2) as ex:
        parts = list(
            ex.map(lambda ab: _normalise_chunk(data[ab[0] : ab[1]], nfields, truncate), pieces)
        )
    out = b"".join(p.tobytes() for p in parts)
    return out


def _foreign_whitespace(inp: _Input, delimiter: str, *, trim: bool) -> list[bytes]:
    """The whitespace bytes the fast path would keep inside a field, were they in the input.

    The sniff reads the first lines only; trec_eval splits every line on any whitespace. A tab
    in a space-separated file (or a space in a tab-separated one, unless padding is trimmed) on
    a later line would stay inside an id here and shift the fields there, so the whole input is
    searched for these (:func:`_holds_any`; a large file segment by segment as it is parsed).
    """
    foreign = [b for b in (b" ", b"\t", b"\x0b", b"\x0c") if b != delimiter.encode()]
    if trim:
        foreign.remove(b" ")
    if b"\r" not in inp.head:  # a CR-LF file's line ends are read as line ends
        foreign.append(b"\r")
    return foreign


def _holds_any(inp: _Input, needles: list[bytes]) -> bool:
    """Whether the input (all of it) holds one of ``needles``: a memchr per byte value, 16-19 ms
    per 250 MB once its pages are mapped in (the first pass over a freshly mapped file also
    faults them in: 0.26 s for 255 MB here)."""
    data = inp.data
    if isinstance(data, memoryview) and hasattr(data.obj, "find"):
        # a segment of a mapped file (a stream's chunk): searched where it lies in the map
        whole = data.obj
        start = (
            np.frombuffer(data, dtype=np.uint8).ctypes.data
            - np.frombuffer(whole, dtype=np.uint8).ctypes.data
        )
        return any(whole.find(b, start, start + data.nbytes) >= 0 for b in needles)
    if data is not None:
        data = bytes(data) if isinstance(data, memoryview) else data
        return any(data.find(b) >= 0 for b in needles)
    import mmap

    assert inp.path is not None
    with open(inp.path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return False
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return any(mm.find(b) >= 0 for b in needles)


def _parse_lines(
    inp: _Input,
    *,
    names: list[str],
    types: dict[str, pa.DataType],
    min_fields: int,
    exact_fields: bool,
    check: Callable[[], None],
    allow_empty: bool = False,
) -> pa.Table | None:
    """Parse with the fast path when the sniff allows, else the general path.

    ``check`` runs the line-by-line error scan; it raises the precise InputError.
    """
    sniff = _sniff(inp.head[:_SAMPLE], min_fields)
    table: pa.Table | None = None
    if sniff is not None:
        delimiter, nfields, trim = sniff
        if exact_fields and nfields != min_fields:
            check()
        col_names = [*names, *(f"_extra{i}" for i in range(nfields - len(names)))]
        foreign = _foreign_whitespace(inp, delimiter, trim=trim)
        try:
            # numbers parse with their padding; ids are checked for padding below
            if inp.data is None and _SEGMENT and os.path.getsize(inp.path) > _SEGMENT:  # type: ignore[arg-type]
                table = _csv_read_mapped(inp.path, col_names, types, delimiter, foreign)  # type: ignore[arg-type]
            elif not _holds_any(inp, foreign):
                src = pa.BufferReader(inp.data) if inp.data is not None else inp.path
                table = _csv_read(src, col_names, types, delimiter)
        except pa.ArrowInvalid:
            table = None
        if (
            table is not None
            and trim
            and any(_has_space(table.column(k)) for k, t in types.items() if not _is_number(t))
        ):
            try:
                src = pa.BufferReader(inp.data) if inp.data is not None else inp.path
                table = _csv_read(src, col_names, {k: pa.string() for k in types}, delimiter)
            except pa.ArrowInvalid:
                table = None
            if table is not None:
                table = _trim_columns(table, types)
    if table is None:
        raw = inp.data
        if raw is None:
            assert inp.path is not None
            raw = np.fromfile(inp.path, dtype=np.uint8)
        else:
            raw = np.frombuffer(raw, dtype=np.uint8)
        if raw[:3].tobytes() == b"\xef\xbb\xbf":
            raw = raw[3:]
        _refuse_cr_only(raw, inp, len(names))
        data = _normalise(raw, len(names), truncate=not exact_fields)
        del raw
        if not data.strip():
            if allow_empty:
                return None
            check()
            raise InputError(_no_data(min_fields), path=inp.name)
        try:
            table = _csv_read(pa.BufferReader(data), names, types, " ")
        except pa.ArrowInvalid as exc:
            check()
            if "straddl" in str(exc):
                _refuse_long_line(inp)
            raise InputError(f"cannot parse ({exc})", path=inp.name) from None
    return table


def _is_number(typ: pa.DataType) -> bool:
    return pa.types.is_floating(typ) or pa.types.is_integer(typ)


def _has_space(col: pa.ChunkedArray) -> bool:
    """Whether any value of a binary (or dictionary of binary) column holds a space byte."""
    for chunk in col.chunks:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary
        bufs = chunk.buffers()
        if len(chunk) == 0 or bufs[2] is None:
            continue
        large = pa.types.is_large_binary(chunk.type) or pa.types.is_large_string(chunk.type)
        offs = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)
        lo, hi = int(offs[chunk.offset]), int(offs[chunk.offset + len(chunk)])
        if (np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi] == 32).any():
            return True
    return False


def _trim_columns(table: pa.Table, types: dict[str, pa.DataType]) -> pa.Table | None:
    """Strip the spaces that pad tab-separated fields; None if a field holds inner spaces or
    does not convert (the general path then finds the bad line)."""
    cols = {}
    for name, typ in types.items():
        col = pc.ascii_trim(table.column(name), " ")
        if pc.any(pc.match_substring(col, " ")).as_py():
            return None
        try:
            if pa.types.is_dictionary(typ):
                col = pc.dictionary_encode(col.cast(typ.value_type))
            else:
                col = col.cast(typ)
        except pa.ArrowInvalid:
            return None
        cols[name] = col
    return pa.table(cols)


def _binary_all_ascii(arr: pa.ChunkedArray) -> bool:
    for chunk in arr.chunks:
        if pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary
        bufs = chunk.buffers()
        if bufs[2] is None or len(chunk) == 0:
            continue
        offs = np.frombuffer(
            bufs[1], dtype=np.int32 if not pa.types.is_large_binary(chunk.type) else np.int64
        )
        lo, hi = int(offs[chunk.offset]), int(offs[chunk.offset + len(chunk)])
        data = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi]
        if data.size and int(data.max()) >= 0x80:
            return False
    return True


def _first_bad_utf8(arr: pa.ChunkedArray) -> tuple[int, str] | None:
    """(row, reason) of the first value that is not valid UTF-8."""
    plain = _plain(arr) if pa.types.is_dictionary(arr.type) else arr
    offset = 0
    for chunk in plain.chunks:
        try:
            chunk.cast(pa.string()).validate(full=True)
        except (pa.ArrowInvalid, pa.ArrowException):
            for i, v in enumerate(chunk.to_pylist()):
                reason = _utf8_error(v)
                if reason:
                    return offset + i, reason
        offset += len(chunk)
    return None


def _check_utf8(arr: pa.ChunkedArray, what: str, origin: Origin) -> None:
    if _binary_all_ascii(arr):
        return
    bad = _first_bad_utf8(arr)
    if bad is not None:
        row, reason = bad
        loc = origin.locate([row])[0]
        raise InputError(
            f"{what} is not valid UTF-8 ({reason})",
            path=loc.path,
            line=loc.line,
            location=loc.location,
        )


def _combine_runid(tag: pa.ChunkedArray) -> str:
    if len(tag) == 0:
        return ""
    last = tag[len(tag) - 1]
    value = last.as_py()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _any_comment(values: pa.Array | pa.ChunkedArray) -> bool:
    from pyarrow._compute import MatchSubstringOptions

    found = call("starts_with", values, options=MatchSubstringOptions("#"))
    return bool(call("any", found).as_py())


def _drop_comment_rows(table: pa.Table) -> pa.Table:
    """Drop rows whose qid starts with '#': comment lines that happened to parse as data."""
    qid = table.column("qid")
    if pa.types.is_dictionary(qid.type):
        if not any(len(c.dictionary) and _any_comment(c.dictionary) for c in qid.chunks):
            return table
        qid = _plain(qid)
    if not _any_comment(qid):
        return table
    mask = pc.starts_with(qid, "#")
    return table.filter(pc.invert(mask))
