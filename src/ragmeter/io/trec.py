"""TREC runs and qrels: fast columnar readers, other formats, and Python inputs.

``read_run`` and ``read_qrels`` return immutable, pyarrow-backed :class:`Run` and :class:`Qrels`
objects (docs/retrieval.md#inputs). The TREC line format is parsed by ``pyarrow.csv`` on a
single-byte delimiter sniffed from the first 64 KiB (the fast path, multi-threaded); files with
runs of whitespace, comment lines or ragged extra fields are first normalised with numpy (the
general path). Errors are found by a line-by-line rescan that runs only when something is wrong,
so every message names the physical line: ``run.txt:17: score 'abc' is not a number (…)``.

:func:`as_run` and :func:`as_qrels` accept every input docs/retrieval.md#inputs lists: paths,
dicts, lists, pandas and pyarrow tables, and ir_measures ``ScoredDoc``/``Qrel`` tuples.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import binaries, call, from_numpy, strings
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.arrowutil import to_numpy as _to_np
from ragmeter.io.cnum import c_atol
from ragmeter.io.files import GZIP_MAGIC, display_name, open_binary, sha256_file

__all__ = [
    "InputError",
    "Qrels",
    "Run",
    "as_qrels",
    "as_run",
    "read_qrels",
    "read_run",
]

RUN_FIELDS = "qid Q0 docno rank score tag"
QRELS_FIELDS = "qid iter docno grade"
_SNIFF = 1 << 16
_BLOCK = 1 << 21  # CSV block: small blocks keep the parse's peak memory low
_NORM_CHUNK = 1 << 24
_WS = b" \t\r\x0b\x0c"
_WS_TABLE = np.zeros(256, dtype=bool)
_WS_TABLE[list(_WS)] = True
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INT32 = (-(2**31), 2**31 - 1)


# --------------------------------------------------------------------------------------------
# Containers


LineOffset = int | Callable[[], int]
"""Lines before a chunk of a streamed file: a count, or a function that counts them, so that
a memory-mapped stream pays for counting only when a message needs a line number."""


def lines_before(offset: LineOffset) -> int:
    return offset() if callable(offset) else offset


@dataclass(frozen=True, eq=False)
class Origin:
    """Where rows came from, to name them in messages (a file's lines or an object's keys).

    Line numbers of file rows are recomputed only when a message needs them, by rescanning the
    input (``data`` for decompressed or stdin input, else ``path``).
    """

    name: str  # display name: a path, "<stdin>", or "run" / "qrels" for objects
    path: str | None = None
    data: bytes | memoryview | None = None  # a memoryview: a segment of a memory-mapped file
    labels: Callable[[int], str] | None = None  # object rows -> "run['q7'][3]"
    lines: np.ndarray | None = None  # physical line of each row, when known
    line_offset: LineOffset = 0  # lines before ``data`` (a chunk of a streamed file)

    def locate(self, rows: Sequence[int]) -> list[InputError]:
        """An empty InputError per row, carrying its path and line (or object location)."""
        if self.labels is not None:
            return [InputError("", location=self.labels(int(r))) for r in rows]
        return [InputError("", path=self.name, line=ln) for ln in self.line_numbers(rows)]

    def where(self, row: int) -> str:
        """``line 17`` or an object location, for "first at …" in messages."""
        err = self.locate([row])[0]
        return err.location if err.location else f"line {err.line}"

    def line_numbers(self, rows: Sequence[int]) -> list[int | None]:
        if self.lines is not None:
            return [int(self.lines[r]) for r in rows]
        if self.data is None and self.path is None:
            return [None for _ in rows]
        wanted = {int(r) for r in rows}
        found: dict[int, int] = {}
        offset = lines_before(self.line_offset)
        source: Iterable[bytes]
        if self.data is not None:
            source = _split_lines(bytes(self.data))  # a copy: messages only
        else:
            assert self.path is not None
            source = _iter_raw_lines(self.path)
        for row, (lineno, _) in enumerate(_data_lines(source, first=offset == 0)):
            if row in wanted:
                found[row] = lineno + offset
                if len(found) == len(wanted):
                    break
        return [found.get(int(r)) for r in rows]


@dataclass(frozen=True, eq=False)
class Run:
    """A retrieval run: (qid, docno, score) rows, pyarrow-backed and immutable.

    ``qid`` and ``docno`` are binary arrays (UTF-8 checked), ``score`` a float64 numpy array.
    ``runid`` is the tag of the last data line. ``source`` holds the per-line tag or a ``source``
    column (docs/retrieval.md#source-breakdown-hybrid-and-graphrag-retrieval) when it was read.
    ``ranked`` is True when the order came from lists (no scores): the scores are then synthetic
    and strictly decreasing.
    """

    qid: pa.ChunkedArray
    docno: pa.ChunkedArray
    score: np.ndarray
    runid: str
    origin: Origin
    source: pa.ChunkedArray | None = None
    sha256: str | None = None
    ranked: bool = False
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.score)

    @property
    def name(self) -> str:
        return self.origin.name

    @property
    def num_queries(self) -> int:
        return len(self.qid_values())

    def qid_values(self) -> list[str]:
        """The distinct qids, sorted (byte order equals code-point order for UTF-8)."""
        if pa.types.is_dictionary(self.qid.type):
            used: set[bytes] = set()
            for chunk in self.qid.chunks:
                idx = np.unique(_to_np(chunk.indices))
                dic = chunk.dictionary.to_pylist()
                used.update(dic[i] for i in idx.tolist())
        else:
            used = set(pc.unique(self.qid).to_pylist())
        return sorted(v.decode("utf-8", "replace") for v in used)

    def to_table(self) -> pa.Table:
        """The run as a table (qid, docno as strings; score)."""
        cols = {
            "qid": _plain(self.qid).cast(pa.string()),
            "docno": self.docno.cast(pa.string()),
            "score": from_numpy(self.score),
        }
        if self.source is not None:
            cols["source"] = _plain(self.source).cast(pa.string())
        return pa.table(cols)

    def __repr__(self) -> str:
        return f"<Run {self.name!r} runid={self.runid!r} lines={len(self)}>"


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: (qid, docno, grade) rows, pyarrow-backed and immutable."""

    qid: pa.ChunkedArray
    docno: pa.ChunkedArray
    grade: np.ndarray  # int64
    origin: Origin
    sha256: str | None = None
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.grade)

    @property
    def name(self) -> str:
        return self.origin.name

    @property
    def num_topics(self) -> int:
        return len(pc.unique(_plain(self.qid)))

    def to_table(self) -> pa.Table:
        return pa.table(
            {
                "qid": _plain(self.qid).cast(pa.string()),
                "docno": self.docno.cast(pa.string()),
                "grade": from_numpy(self.grade),
            }
        )

    def __repr__(self) -> str:
        return f"<Qrels {self.name!r} lines={len(self)}>"


def to_numpy(arr: pa.ChunkedArray | pa.Array, fill: float | int | None = None) -> np.ndarray:
    """A (chunked) numeric Arrow array as numpy, without importing pandas."""
    return _to_np(arr, fill=fill)


def _plain(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column decoded to plain values (cheap for small dictionaries)."""
    if pa.types.is_dictionary(arr.type):
        return arr.cast(arr.type.value_type)
    return arr


# --------------------------------------------------------------------------------------------
# Reading bytes


@dataclass
class _Input:
    name: str  # for messages
    path: str | None  # re-readable plain or compressed file
    # decompressed bytes (gzip, stdin) or a segment of a memory-mapped file, else None
    data: bytes | memoryview | None
    head: bytes  # the first bytes after decompression, for sniffing
    line_offset: LineOffset = 0  # lines before ``data`` (a chunk of a streamed file)


def _open_input(path: str | os.PathLike[str], *, allow_stdin: bool) -> _Input:
    name = display_name(path)
    p = os.fspath(path)
    if p == "-":
        if not allow_stdin:
            raise InputError("cannot read qrels from stdin (expected a file path)", path="-")
        with open_binary("-", allow_stdin=True) as fh:
            data = _read_all(fh, name)
        return _Input(name, None, data, data[:_SNIFF])
    from ragmeter.io.files import check_regular_file

    if check_regular_file(p, allow_pipe=True):
        # a pipe (`<(zcat run.gz)`, a FIFO) is read once, into memory, like stdin; the paths
        # below reopen and map the file, which a pipe cannot do (devices are refused above)
        with open_binary(p) as fh:
            data = _read_all(fh, name)
        return _Input(name, None, data, data[:_SNIFF])
    try:
        with open(p, "rb") as fh:
            magic = fh.read(2)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=name) from None
    if magic == GZIP_MAGIC or p.endswith((".bz2", ".zst")):
        with open_binary(p) as fh:
            if p.endswith((".bz2", ".zst")) and magic != GZIP_MAGIC:
                fh.close()
                codec = "bz2" if p.endswith(".bz2") else "zstd"
                try:
                    stream = pa.CompressedInputStream(pa.OSFile(p), codec)
                    data = stream.read()
                except (pa.ArrowException, OSError) as exc:
                    raise InputError(
                        f"cannot read (not a {codec} stream: {exc})", path=name
                    ) from None
            else:
                data = _read_all(fh, name)
        return _Input(name, p, data, data[:_SNIFF])
    with open(p, "rb") as fh:
        head = fh.read(_SNIFF)
    return _Input(name, p, None, head)


def _sha_unless_pipe(path: str | os.PathLike[str]) -> str | None:
    """The file's hash, or ``None`` for a pipe (``<(cmd)``, a FIFO): its bytes were consumed by
    the one read a pipe allows, and hashing would read it a second time (as for stdin's run)."""
    from ragmeter.io.files import check_regular_file

    p = os.fspath(path)
    if p != "-" and check_regular_file(p, allow_pipe=True):
        return None
    return sha256_file(p)


def _read_all(fh: Any, name: str) -> bytes:
    try:
        return fh.read()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read (not a gzip stream: {exc})", path=name) from None


def _iter_raw_lines(path: str) -> Iterator[bytes]:
    with open_binary(path, allow_stdin=False) as fh:
        yield from fh


def _split_lines(data: bytes) -> Iterator[bytes]:
    """Lines of a buffer split at newlines only (CR is whitespace, not a line end)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start : end + 1]
        start = end + 1


def _data_lines(lines: Iterable[bytes], *, first: bool = True) -> Iterator[tuple[int, bytes]]:
    """(physical line number, line) of each data line: not blank, not a comment."""
    for lineno, raw in enumerate(lines, start=1):
        bom = first and lineno == 1 and raw.startswith(b"\xef\xbb\xbf")
        line = raw[3:] if bom else raw
        stripped = line.strip(_WS + b"\n")
        if not stripped or stripped.startswith(b"#"):
            continue
        yield lineno, line


# --------------------------------------------------------------------------------------------
# Fast and general parse of whitespace-separated lines


@dataclass
class _Parsed:
    columns: dict[str, pa.ChunkedArray]
    rows: int


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
    path: str, names: list[str], types: dict[str, pa.DataType], delimiter: str
) -> pa.Table:
    """Parse a large file through a memory map, a newline-aligned segment at a time.

    Parsing straight from the page cache saves copying the file (about a third of the parse's
    CPU); each parsed segment's pages are then dropped from this process (MADV_DONTNEED; the
    page cache keeps them), so the mapped file never adds more than a segment to the peak RSS.
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
    sniff = _sniff(inp.head, min_fields)
    table: pa.Table | None = None
    if sniff is not None:
        delimiter, nfields, trim = sniff
        if exact_fields and nfields != min_fields:
            check()
        col_names = [*names, *(f"_extra{i}" for i in range(nfields - len(names)))]
        try:
            # numbers parse with their padding; ids are checked for padding below
            if inp.data is None and _SEGMENT and os.path.getsize(inp.path) > _SEGMENT:  # type: ignore[arg-type]
                table = _csv_read_mapped(inp.path, col_names, types, delimiter)  # type: ignore[arg-type]
            else:
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


def _numbered_lines(inp: _Input) -> Iterator[tuple[int, bytes]]:
    """(physical line number, raw line) of the whole input, as the error scan counts them."""
    lines: Iterable[bytes]
    if inp.data is not None:
        lines = _split_lines(bytes(inp.data))
    else:
        assert inp.path is not None
        lines = _iter_raw_lines(inp.path)
    yield from enumerate(lines, start=1 + lines_before(inp.line_offset))


def _refuse_cr_only(raw: np.ndarray, inp: _Input, nfields: int) -> None:
    """Refuse a line that holds several records separated by bare CRs (CR-only line ends).

    CR is white space inside a line (CRLF files read as they should), so a file whose lines end
    with CR alone would otherwise read as one long line whose extra fields are dropped.
    """
    cr = raw[:-1] == 13
    if not cr.any() or not (cr & (raw[1:] != 10)).any():
        return
    fields = RUN_FIELDS if nfields == 6 else QRELS_FIELDS
    for lineno, line in _numbered_lines(inp):
        body = line.rstrip(b"\n").rstrip(b"\r")
        cut = body.find(b"\r")
        while cut >= 0:
            # a record before the CR and another (not a stray extra field) after it
            nxt = body[cut + 1 :].split(b"\r", 1)[0]
            if len(body[:cut].split()) >= nfields and len(nxt.split()) >= nfields:
                raise InputError(
                    "a bare CR ends a record and another follows on the same line: the file "
                    "seems to end its lines with CR alone (classic Mac); convert the line ends "
                    f"to LF (expected one record per line: {fields})",
                    path=inp.name,
                    line=lineno,
                )
            cut = body.find(b"\r", cut + 1)


def _refuse_long_line(inp: _Input) -> None:
    """Name the first line longer than the CSV block (Arrow reports no line for it)."""
    for lineno, line in _numbered_lines(inp):
        if len(line) >= _BLOCK:
            raise InputError(
                f"line of {len(line):,} bytes is too long (expected lines under "
                f"{_BLOCK // (1 << 20)} MiB)",
                path=inp.name,
                line=lineno,
            )


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


def _no_data(nfields: int) -> str:
    layout = RUN_FIELDS if nfields >= 6 else QRELS_FIELDS
    return f"no data lines (expected lines of {nfields} fields: {layout})"


# --------------------------------------------------------------------------------------------
# Validation helpers


def _utf8_error(value: bytes) -> str | None:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{value[exc.start]:02x} at offset {exc.start}"
    return None


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


def _scan_errors(inp: _Input, kind: str) -> None:
    """Rescan the input line by line and raise the first error (the error path)."""
    lines: Iterable[bytes]
    if inp.data is not None:
        lines = _split_lines(bytes(inp.data))
    else:
        assert inp.path is not None
        lines = _iter_raw_lines(inp.path)
    seen = False
    offset = lines_before(inp.line_offset)
    for lineno, raw in enumerate(lines, start=1 + offset):
        bom = offset == 0 and lineno == 1 and raw.startswith(b"\xef\xbb\xbf")
        line = raw[3:] if bom else raw
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        seen = True
        _check_fields(fields, kind, inp.name, lineno)
    if not seen:
        raise InputError(_no_data(6 if kind == "run" else 4), path=inp.name)


def _check_fields(fields: list[bytes], kind: str, name: str, lineno: int) -> None:
    n = len(fields)
    if kind == "run":
        if n == 4:
            raise InputError(
                f"4 fields, expected 6 ({RUN_FIELDS}); this looks like a qrels line: the order "
                "is QRELS RUN",
                path=name,
                line=lineno,
            )
        if n < 6:
            raise InputError(f"{n} fields, expected 6 ({RUN_FIELDS})", path=name, line=lineno)
        _check_score(fields[4], name, lineno)
        ids = ((0, "qid"), (2, "docno"))
    else:
        if n == 6:
            raise InputError(
                f"6 fields, expected 4 ({QRELS_FIELDS}); this looks like a run line: the order "
                "is QRELS RUN",
                path=name,
                line=lineno,
            )
        if n == 3:
            raise InputError(
                f"3 fields, expected 4 ({QRELS_FIELDS}); for 'query-id corpus-id score' files "
                "use --qrels-format tsv",
                path=name,
                line=lineno,
            )
        if n != 4:
            raise InputError(f"{n} fields, expected 4 ({QRELS_FIELDS})", path=name, line=lineno)
        _parse_grade(fields[3].decode("utf-8", "replace"), name, lineno)
        ids = ((0, "qid"), (2, "docno"))
    for idx, what in ids:
        reason = _utf8_error(fields[idx])
        if reason:
            raise InputError(f"{what} is not valid UTF-8 ({reason})", path=name, line=lineno)


def _score_message(text: str) -> str:
    return f"score '{text}' is not a number (expected a decimal such as 12.5 or -3e-2)"


def _nonfinite_message(text: str) -> str:
    return (
        f"score '{text}' is not finite (NaN and infinity cannot be ranked; drop the line or give "
        "a finite score)"
    )


def _check_score(token: bytes, name: str, lineno: int) -> float:
    text = token.decode("utf-8", "replace")
    low = text.lower().lstrip("+-")
    if low in ("nan", "inf", "infinity"):
        raise InputError(_nonfinite_message(text), path=name, line=lineno)
    if not _NUMBER.fullmatch(token):
        raise InputError(_score_message(text), path=name, line=lineno)
    value = float(token)
    if not math.isfinite(value):
        raise InputError(_nonfinite_message(text), path=name, line=lineno)
    return value


def _parse_grade(
    text: str, name: str | None, lineno: int | None, location: str | None = None
) -> int:
    stripped = text.strip()
    try:
        value = int(stripped)
    except ValueError:
        try:
            real = float(stripped)
        except ValueError:
            raise InputError(
                f"grade '{text}' is not an integer (expected an integer such as 0, 1 or 2)",
                path=name,
                line=lineno,
                location=location,
            ) from None
        if not math.isfinite(real) or real != int(real):
            # trec_eval reads grades with atol: the leading integer, so nan → 0, 1e309 → 1
            raise InputError(
                f"grade '{text}' is not an integer (trec_eval would silently use "
                f"{c_atol(stripped)[0]})",
                path=name,
                line=lineno,
                location=location,
            ) from None
        value = int(real)
    if not _INT32[0] <= value <= _INT32[1]:
        raise InputError(
            f"grade '{text}' is outside the 32-bit integer range (expected an integer from "
            f"{_INT32[0]} to {_INT32[1]}; trec_eval would silently use {c_atol(stripped)[0]})",
            path=name,
            line=lineno,
            location=location,
        )
    return value


def _raise_row(origin: Origin, row: int, message: str) -> None:
    loc = origin.locate([row])[0]
    raise InputError(message, path=loc.path, line=loc.line, location=loc.location)


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


# --------------------------------------------------------------------------------------------
# TREC files


def read_run(
    path: str | os.PathLike[str],
    *,
    format: str = "trec",
    qid_field: str = "qid",
    ids_field: str = "retrieved_ids",
    source_field: str | None = None,
    with_source: bool = False,
    hash_input: bool = True,
) -> Run:
    """Read a run file (TREC 6-column, or JSONL traces), gzip-compressed or not; ``-`` is stdin.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = p.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n")
    >>> run = read_run(p)
    >>> run.runid, len(run), run.score.tolist()
    ('bm25', 2, [2.5, 1.5])
    """
    if format == "jsonl":
        return _read_run_jsonl(
            path, qid_field=qid_field, ids_field=ids_field, source_field=source_field
        )
    if format != "trec":
        raise InputError(
            f"unknown run format '{format}' (expected trec or jsonl)", path=display_name(path)
        )
    inp = _open_input(path, allow_stdin=True)
    run = run_from_input(inp, with_source=with_source)
    assert run is not None
    if hash_input and inp.path is not None:
        run = Run(**{**run.__dict__, "sha256": sha256_file(inp.path)})
    return run


_RUN_TYPES: dict[str, pa.DataType] = {
    "qid": pa.dictionary(pa.int32(), pa.binary()),
    "docno": pa.binary(),
    "score": pa.float64(),  # Arrow's parser is correctly rounded, like strtod
}
_TAG_TYPE = pa.dictionary(pa.int32(), pa.binary())


def _last_tag(inp: _Input) -> str:
    """The tag of the last data line (the run's runid), read from the end of the input."""
    size = len(inp.data) if inp.data is not None else os.path.getsize(inp.path)  # type: ignore[arg-type]
    window = 1 << 16
    while True:
        start = max(0, size - window)
        if inp.data is not None:
            tail = bytes(inp.data[start:size])
        else:
            with open(inp.path, "rb") as fh:  # type: ignore[arg-type]
                fh.seek(start)
                tail = fh.read(size - start)
        lines = tail.split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first piece may be a partial line
        for line in reversed(lines):
            fields = line.split()
            if fields and not fields[0].startswith(b"#") and len(fields) >= 6:
                return fields[5].decode("utf-8", "replace")
        if start == 0:
            return ""
        window *= 4


def run_from_input(
    inp: _Input, *, with_source: bool = False, allow_empty: bool = False, trim: bool = True
) -> Run | None:
    """Parse an opened TREC run input (a whole file or one chunk of a stream).

    ``trim=False`` keeps the parse's freed buffers in the process for the next chunk of a
    stream to reuse (trimming after every chunk cost ~3.5 s of page faults on 100M lines).
    """
    types = {**_RUN_TYPES, "tag": _TAG_TYPE} if with_source else _RUN_TYPES
    table = _parse_lines(
        inp,
        names=["qid", "iter", "docno", "rank", "score", "tag"],
        types=types,
        min_fields=6,
        exact_fields=False,
        check=lambda: _scan_errors(inp, "run"),
        allow_empty=allow_empty,
    )
    if table is not None:
        table = _drop_comment_rows(table)
    origin = Origin(
        inp.name,
        path=inp.path if inp.data is None else None,
        data=inp.data,
        line_offset=inp.line_offset,
    )
    if table is None or table.num_rows == 0:
        if allow_empty:
            return None
        raise InputError(_no_data(6), path=inp.name)
    _check_utf8(table.column("qid"), "qid", origin)
    _check_utf8(table.column("docno"), "docno", origin)
    score = to_numpy(table.column("score"), fill=math.nan)
    if not np.isfinite(score).all():
        _scan_errors(inp, "run")  # raises with the line and the score as written
        row = int(np.argmin(np.isfinite(score)))  # pragma: no cover - the scan always finds it
        _raise_row(origin, row, _nonfinite_message(repr(float(score[row]))))
    if with_source:
        tag = table.column("tag")
        runid = _combine_runid(tag)
    else:
        tag = None
        runid = _last_tag(inp)
    qid, docno = table.column("qid"), table.column("docno")
    del table
    if trim:
        # hand the parse's transient buffers back to the OS: they set the peak memory otherwise
        pa.default_memory_pool().release_unused()
    return Run(qid=qid, docno=docno, score=score, runid=runid, origin=origin, source=tag)


def read_qrels(
    path: str | os.PathLike[str],
    *,
    format: str = "trec",
    qid_field: str = "qid",
    gold_field: str = "gold_citations",
    hash_input: bool = True,
) -> Qrels:
    """Read judgments: TREC qrels (4 columns), BEIR-style TSV, or JSONL gold citations.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = p.write_text("q1 0 d1 1\\n# a comment\\nq1 0 d2 0\\n")
    >>> qrels = read_qrels(p)
    >>> len(qrels), qrels.grade.tolist()
    (2, [1, 0])
    """
    if format == "jsonl":
        return _read_qrels_jsonl(path, qid_field=qid_field, gold_field=gold_field)
    if format == "tsv":
        return _read_qrels_tsv(path)
    if format != "trec":
        raise InputError(
            f"unknown qrels format '{format}' (expected trec, tsv or jsonl)",
            path=display_name(path),
        )
    inp = _open_input(path, allow_stdin=False)
    types: dict[str, pa.DataType] = {
        "qid": pa.binary(),
        "docno": pa.binary(),
        "grade": pa.string(),
    }
    table = _parse_lines(
        inp,
        names=["qid", "iter", "docno", "grade"],
        types=types,
        min_fields=4,
        exact_fields=True,
        check=lambda: _scan_errors(inp, "qrels"),
    )
    table = _drop_comment_rows(table)
    origin = Origin(inp.name, path=inp.path if inp.data is None else None, data=inp.data)
    if table.num_rows == 0:
        raise InputError(_no_data(4), path=inp.name)
    _check_utf8(table.column("qid"), "qid", origin)
    _check_utf8(table.column("docno"), "docno", origin)
    grade = _grades_to_int(table.column("grade"), origin)
    sha = sha256_file(inp.path) if hash_input and inp.path is not None else None
    return Qrels(table.column("qid"), table.column("docno"), grade, origin, sha)


def _grades_to_int(col: pa.ChunkedArray, origin: Origin) -> np.ndarray:
    try:
        from pyarrow._compute import CastOptions

        ints = call("cast", col, options=CastOptions.safe(pa.int64()))
    except pa.ArrowInvalid:
        ints = None
    if ints is not None:
        arr = to_numpy(ints)
        bad = (arr < _INT32[0]) | (arr > _INT32[1])
        if bad.any():
            row = int(np.argmax(bad))
            loc = origin.locate([row])[0]
            _parse_grade(col[row].as_py(), loc.path, loc.line, loc.location)
        return arr.astype(np.int64)
    values = col.to_pylist()
    out = np.empty(len(values), dtype=np.int64)
    for i, text in enumerate(values):
        try:
            value = int(text)
            if not _INT32[0] <= value <= _INT32[1]:
                raise ValueError(text)  # reported with its line below
            out[i] = value
        except ValueError:
            try:
                real = float(text)
            except ValueError:
                real = math.nan
            if math.isfinite(real) and real == int(real) and _INT32[0] <= real <= _INT32[1]:
                out[i] = int(real)
            else:
                loc = origin.locate([i])[0]
                _parse_grade(text, loc.path, loc.line, loc.location)
    return out


def _read_qrels_tsv(path: str | os.PathLike[str]) -> Qrels:
    name = display_name(path)
    qids: list[bytes] = []
    docs: list[bytes] = []
    grades: list[int] = []
    lines: list[int] = []
    first = True
    with open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            line = line.rstrip(b"\r\n")
            if not line.strip(_WS) or line.lstrip(_WS).startswith(b"#"):
                continue
            fields = [f.strip(_WS) for f in line.split(b"\t")]
            if len(fields) != 3:
                raise InputError(
                    f"{len(fields)} tab-separated fields, expected 3 (query-id corpus-id score)",
                    path=name,
                    line=lineno,
                )
            if first:
                first = False
                if not re.fullmatch(rb"[+-]?\d+(\.0*)?", fields[2]):
                    continue  # a header line: its third field is not an integer
            for idx, what in ((0, "qid"), (1, "docno")):
                reason = _utf8_error(fields[idx])
                if reason:
                    raise InputError(
                        f"{what} is not valid UTF-8 ({reason})", path=name, line=lineno
                    )
            grades.append(_parse_grade(fields[2].decode("utf-8", "replace"), name, lineno))
            qids.append(fields[0])
            docs.append(fields[1])
            lines.append(lineno)
    if not grades:
        raise InputError(
            "no data lines (expected lines of 3 tab-separated fields: query-id corpus-id score)",
            path=name,
        )
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    sha = _sha_unless_pipe(path) if os.fspath(path) != "-" else None
    return Qrels(
        pa.chunked_array([binaries(qids)]),
        pa.chunked_array([binaries(docs)]),
        np.asarray(grades, dtype=np.int64),
        origin,
        sha,
    )


# --------------------------------------------------------------------------------------------
# JSONL traces and gold citations


def _read_run_jsonl(
    path: str | os.PathLike[str], *, qid_field: str, ids_field: str, source_field: str | None
) -> Run:
    from ragmeter.io.jsonl import iter_jsonl

    name = display_name(path)
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    sources: list[str] = []
    lines: list[int] = []
    ranked = True
    seen_q: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path, allow_stdin=True):
        if qid_field not in obj:
            raise InputError(f"missing key '{qid_field}' (set --qid-field)", path=name, line=lineno)
        qid = _id_text(obj[qid_field], name, lineno, qid_field)
        if qid in seen_q:
            raise InputError(
                f"query '{qid}' appears again (first at line {seen_q[qid]}); one line per query",
                path=name,
                line=lineno,
            )
        seen_q[qid] = lineno
        ids = obj.get(ids_field)
        if not isinstance(ids, list):
            raise InputError(
                f"'{ids_field}' is {'missing' if ids is None else 'not a list'} (expected a list "
                "of document ids in rank order; set --ids-field)",
                path=name,
                line=lineno,
            )
        these = [_id_text(d, name, lineno, f"{ids_field}[{i}]") for i, d in enumerate(ids)]
        sc = obj.get("scores")
        if sc is not None:
            if not isinstance(sc, list) or len(sc) != len(these):
                raise InputError(
                    f"'scores' has {len(sc) if isinstance(sc, list) else 'no'} values for "
                    f"{len(these)} ids (expected one score per id)",
                    path=name,
                    line=lineno,
                )
            ranked = False
            for i, s in enumerate(sc):
                if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                    raise InputError(
                        f"scores[{i}] is {s!r} (expected a finite number)", path=name, line=lineno
                    )
            vals = [float(s) for s in sc]
        else:
            vals = [float(-i) for i in range(len(these))]
        src = obj.get(source_field) if source_field else None
        if source_field and src is not None:
            if isinstance(src, list):
                if len(src) != len(these):
                    raise InputError(
                        f"'{source_field}' has {len(src)} values for {len(these)} ids",
                        path=name,
                        line=lineno,
                    )
                sources += [str(s) for s in src]
            else:
                sources += [str(src)] * len(these)
        elif source_field:
            sources += [""] * len(these)
        qids += [qid] * len(these)
        docs += these
        scores += vals
        lines += [lineno] * len(these)
    if not ranked and len(scores) != len(docs):  # pragma: no cover
        raise InputError("inconsistent scores", path=name)
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    sha = _sha_unless_pipe(path) if os.fspath(path) != "-" else None
    return Run(
        qid=pa.chunked_array([strings(qids).cast(pa.binary())]),
        docno=pa.chunked_array([strings(docs).cast(pa.binary())]),
        score=np.asarray(scores, dtype=np.float64),
        runid=os.path.basename(name),
        origin=origin,
        source=pa.chunked_array([strings(sources)]) if source_field else None,
        sha256=sha,
        ranked=ranked,
    )


def _id_text(value: Any, name: str, lineno: int, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(
            f"'{key}' is {type(value).__name__} (expected a string or integer id)",
            path=name,
            line=lineno,
        )
    text = str(value)
    if not text or any(ch in text for ch in " \t\r\n"):
        raise InputError(
            f"'{key}' is {text!r} (ids are non-empty and contain no whitespace)",
            path=name,
            line=lineno,
        )
    return text


def _read_qrels_jsonl(path: str | os.PathLike[str], *, qid_field: str, gold_field: str) -> Qrels:
    from ragmeter.io.jsonl import iter_jsonl

    name = display_name(path)
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    for lineno, obj in iter_jsonl(path):
        if qid_field not in obj:
            raise InputError(f"missing key '{qid_field}' (set --qid-field)", path=name, line=lineno)
        qid = _id_text(obj[qid_field], name, lineno, qid_field)
        gold = obj.get(gold_field)
        if isinstance(gold, list):
            items = [(d, 1) for d in gold]
        elif isinstance(gold, dict):
            items = list(gold.items())
        else:
            raise InputError(
                f"'{gold_field}' is {'missing' if gold is None else type(gold).__name__} "
                "(expected a list of ids or an object id → grade; set --gold-field)",
                path=name,
                line=lineno,
            )
        for i, (d, g) in enumerate(items):
            doc = _id_text(d, name, lineno, f"{gold_field}[{i}]")
            if isinstance(g, bool) or not isinstance(g, (int, float)):
                raise InputError(
                    f"grade {g!r} of '{doc}' is not an integer", path=name, line=lineno
                )
            grades.append(_parse_grade(repr(g) if isinstance(g, float) else str(g), name, lineno))
            qids.append(qid)
            docs.append(doc)
            lines.append(lineno)
    if not grades:
        raise InputError(f"no judgments (every '{gold_field}' is empty)", path=name)
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    return Qrels(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(grades, dtype=np.int64),
        origin,
        _sha_unless_pipe(path),
    )


# --------------------------------------------------------------------------------------------
# Python inputs (docs/retrieval.md#inputs)

_QID_COLS = ("qid", "query_id", "query-id")
_DOC_COLS = ("docno", "doc_id", "docid", "corpus-id")
_GRADE_COLS = ("rel", "relevance", "grade")


@dataclass
class _Conversions:
    notes: list[str] = field(default_factory=list)

    def note(self, what: str) -> None:
        if what not in self.notes:
            self.notes.append(what)


def _key_text(value: Any, conv: _Conversions, what: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{what} is not valid UTF-8 (byte 0x{value[exc.start]:02x} at offset {exc.start})",
                location=where,
            ) from None
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{what} {value!r} is a boolean (expected a string id)", location=where)
    if isinstance(value, (int, np.integer)):
        conv.note(f"{what}s given as integers were converted to decimal strings")
        return str(int(value))
    raise InputError(
        f"{what} {value!r} is {type(value).__name__} (expected a string id)", location=where
    )


def _is_table(obj: Any) -> bool:
    mod = type(obj).__module__
    return isinstance(obj, (pa.Table, pa.RecordBatch)) or (
        mod.startswith("pandas") and hasattr(obj, "columns")
    )


def _table_of(obj: Any) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    return pa.Table.from_pandas(obj, preserve_index=False)


def _pick(table: pa.Table, names: Sequence[str], what: str, label: str) -> str:
    for n in names:
        if n in table.column_names:
            return n
    raise InputError(
        f"no {what} column (expected one of {', '.join(names)}; columns are "
        f"{', '.join(table.column_names)})",
        location=label,
    )


def _ids_column(col: pa.ChunkedArray, conv: _Conversions, what: str, label: str) -> pa.ChunkedArray:
    typ = col.type
    if pa.types.is_dictionary(typ):
        col = col.cast(typ.value_type)
        typ = col.type
    if pa.types.is_integer(typ):
        conv.note(f"{what}s given as integers were converted to decimal strings")
        col = col.cast(pa.string())
        typ = col.type
    if not (
        pa.types.is_string(typ)
        or pa.types.is_large_string(typ)
        or pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
    ):
        raise InputError(f"{what} column has type {typ} (expected strings)", location=label)
    if col.null_count:
        row = int(pc.index(pc.is_null(col), True).as_py())
        raise InputError(f"{what} is missing (null) in row {row}", location=label)
    return col.cast(pa.binary())


def as_run(run: Any, *, source: str = "source") -> Run:
    """Any run input of docs/retrieval.md#inputs as a :class:`Run` (a path: :func:`read_run`)."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return read_run(run)
    conv = _Conversions()
    if _is_table(run):
        table = _table_of(run)
        qc = _pick(table, _QID_COLS, "qid", "run")
        dc = _pick(table, _DOC_COLS, "docno", "run")
        if "score" not in table.column_names:
            raise InputError(
                f"no score column (expected 'score'; columns are {', '.join(table.column_names)})",
                location="run",
            )
        qid = _ids_column(table.column(qc), conv, "qid", "run")
        doc = _ids_column(table.column(dc), conv, "docno", "run")
        sc = table.column("score")
        if sc.null_count:
            row = int(pc.index(pc.is_null(sc), True).as_py())
            raise InputError(
                "score is missing (null) (expected a finite number)", location=f"run row {row}"
            )
        if not (
            pa.types.is_floating(sc.type)
            or pa.types.is_integer(sc.type)
            or pa.types.is_decimal(sc.type)
        ):
            raise InputError(f"score column has type {sc.type} (expected numbers)", location="run")
        score = to_numpy(sc.cast(pa.float64()))
        finite = np.isfinite(score)
        if not finite.all():
            row = int(np.argmin(finite))
            raise InputError(_nonfinite_message(repr(float(score[row]))), location=f"run row {row}")
        src = table.column(source).cast(pa.string()) if source in table.column_names else None
        origin = Origin("run", labels=lambda i: f"run row {i}")
        return Run(
            qid,
            doc,
            np.ascontiguousarray(score, dtype=np.float64),
            "run",
            origin,
            src,
            None,
            False,
            tuple(conv.notes),
        )
    if isinstance(run, Mapping):
        return _run_from_mapping(run, conv)
    if isinstance(run, Iterable):
        return _run_from_tuples(run, conv)
    raise InputError(f"cannot read a run from {type(run).__name__}", location="run")


def _run_from_mapping(run: Mapping[Any, Any], conv: _Conversions) -> Run:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    labels: list[tuple[str, Any]] = []
    ranked_lists = 0
    scored_dicts = 0
    for q, docs_of in run.items():
        qtext = _key_text(q, conv, "qid", f"run[{q!r}]")
        if isinstance(docs_of, Mapping):
            scored_dicts += 1
            for d, s in docs_of.items():
                where = f"run[{q!r}][{d!r}]"
                dtext = _key_text(d, conv, "docno", where)
                if isinstance(s, (bool, np.bool_)) or not isinstance(
                    s, (int, float, np.integer, np.floating)
                ):
                    raise InputError(
                        f"score {s!r} is not a number (expected a finite number)", location=where
                    )
                value = float(s)
                if not math.isfinite(value):
                    raise InputError(_nonfinite_message(repr(value)), location=where)
                qids.append(qtext)
                docs.append(dtext)
                scores.append(value)
                labels.append((q, d))
        elif isinstance(docs_of, (list, tuple)):
            ranked_lists += 1
            for i, d in enumerate(docs_of):
                where = f"run[{q!r}][{i}]"
                dtext = _key_text(d, conv, "docno", where)
                qids.append(qtext)
                docs.append(dtext)
                scores.append(float(-i))
                labels.append((q, i))
        else:
            raise InputError(
                f"run[{q!r}] is {type(docs_of).__name__} (expected a dict docno → score or a list "
                "of docnos in rank order)",
                location=f"run[{q!r}]",
            )
    if ranked_lists and scored_dicts:
        raise InputError("mixes dicts of scores and ranked lists (use one form)", location="run")
    if not qids:
        raise InputError("no documents (the run is empty)", location="run")
    origin = Origin("run", labels=lambda i: f"run[{labels[i][0]!r}][{labels[i][1]!r}]")
    return Run(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(scores, dtype=np.float64),
        "run",
        origin,
        None,
        None,
        ranked_lists > 0,
        tuple(conv.notes),
    )


def _run_from_tuples(run: Iterable[Any], conv: _Conversions) -> Run:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    for i, item in enumerate(run):
        where = f"run[{i}]"
        try:
            q, d, s = item.query_id, item.doc_id, item.score
        except AttributeError:
            try:
                q, d, s = item
            except (TypeError, ValueError):
                raise InputError(
                    f"{type(item).__name__} is not a ScoredDoc (expected query_id, doc_id, score)",
                    location=where,
                ) from None
        qids.append(_key_text(q, conv, "qid", where))
        docs.append(_key_text(d, conv, "docno", where))
        if isinstance(s, (bool, np.bool_)) or not isinstance(
            s, (int, float, np.integer, np.floating)
        ):
            raise InputError(f"score {s!r} is not a number", location=where)
        if not math.isfinite(float(s)):
            raise InputError(_nonfinite_message(repr(float(s))), location=where)
        scores.append(float(s))
    if not qids:
        raise InputError("no documents (the run is empty)", location="run")
    return Run(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(scores, dtype=np.float64),
        "run",
        Origin("run", labels=lambda i: f"run[{i}]"),
        warnings=tuple(conv.notes),
    )


def as_qrels(qrels: Any) -> Qrels:
    """Any qrels input of docs/retrieval.md#inputs as :class:`Qrels` (paths: :func:`read_qrels`)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels)
    conv = _Conversions()
    if _is_table(qrels):
        table = _table_of(qrels)
        qc = _pick(table, _QID_COLS, "qid", "qrels")
        dc = _pick(table, _DOC_COLS, "docno", "qrels")
        gcol = next((c for c in _GRADE_COLS if c in table.column_names), None)
        if gcol is None:
            gcol = _pick(table, ("score",), "grade", "qrels")
        qid = _ids_column(table.column(qc), conv, "qid", "qrels")
        doc = _ids_column(table.column(dc), conv, "docno", "qrels")
        g = table.column(gcol)
        if g.null_count:
            row = int(pc.index(pc.is_null(g), True).as_py())
            raise InputError("grade is missing (null)", location=f"qrels row {row}")
        if pa.types.is_integer(g.type):
            grade = to_numpy(g.cast(pa.int64()))
            bad = (grade < _INT32[0]) | (grade > _INT32[1])
            if bad.any():
                row = int(np.argmax(bad))
                _parse_grade(str(grade[row]), None, None, f"qrels row {row}")
        else:
            grade = np.empty(len(g), dtype=np.int64)
            for i, v in enumerate(g.to_pylist()):
                grade[i] = _parse_grade(
                    repr(v) if isinstance(v, float) else str(v), None, None, f"qrels row {i}"
                )
        return Qrels(
            qid,
            doc,
            np.ascontiguousarray(grade, dtype=np.int64),
            Origin("qrels", labels=lambda i: f"qrels row {i}"),
            None,
            tuple(conv.notes),
        )
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    labels: list[str] = []
    if isinstance(qrels, Mapping):
        for q, judged in qrels.items():
            qtext = _key_text(q, conv, "qid", f"qrels[{q!r}]")
            if isinstance(judged, Mapping):
                items = [(d, g, f"qrels[{q!r}][{d!r}]") for d, g in judged.items()]
            elif isinstance(judged, (list, tuple, set, frozenset)):
                seq = sorted(judged) if isinstance(judged, (set, frozenset)) else judged
                items = [(d, 1, f"qrels[{q!r}][{i}]") for i, d in enumerate(seq)]
            else:
                raise InputError(
                    f"qrels[{q!r}] is {type(judged).__name__} (expected a dict docno → grade or a "
                    "list of relevant docnos)",
                    location=f"qrels[{q!r}]",
                )
            for d, g, where in items:
                docs.append(_key_text(d, conv, "docno", where))
                qids.append(qtext)
                grades.append(_grade_value(g, where))
                labels.append(where)
    elif isinstance(qrels, Iterable):
        for i, item in enumerate(qrels):
            where = f"qrels[{i}]"
            try:
                q, d, g = item.query_id, item.doc_id, item.relevance
            except AttributeError:
                try:
                    q, d, g = item
                except (TypeError, ValueError):
                    raise InputError(
                        f"{type(item).__name__} is not a Qrel "
                        "(expected query_id, doc_id, relevance)",
                        location=where,
                    ) from None
            qids.append(_key_text(q, conv, "qid", where))
            docs.append(_key_text(d, conv, "docno", where))
            grades.append(_grade_value(g, where))
            labels.append(where)
    else:
        raise InputError(f"cannot read qrels from {type(qrels).__name__}", location="qrels")
    if not qids:
        raise InputError("no judgments (the qrels are empty)", location="qrels")
    return Qrels(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(grades, dtype=np.int64),
        Origin("qrels", labels=lambda i: labels[i]),
        None,
        tuple(conv.notes),
    )


def _grade_value(g: Any, where: str) -> int:
    if isinstance(g, (bool, np.bool_)):
        raise InputError(f"grade {g!r} is a boolean (expected an integer)", location=where)
    if isinstance(g, (int, np.integer)):
        return _parse_grade(str(int(g)), None, None, where)
    if isinstance(g, (float, np.floating)):
        return _parse_grade(repr(float(g)), None, None, where)
    if isinstance(g, str):
        return _parse_grade(g, None, None, where)
    raise InputError(f"grade {g!r} is not an integer", location=where)


def stdin_is_tty() -> bool:  # pragma: no cover - trivial
    return sys.stdin.isatty()
