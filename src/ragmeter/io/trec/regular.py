"""The parse of regular TREC files in numpy: no Arrow, and no Python object per line.

Nearly every run and qrels a system writes is *regular*: ASCII, every line holds exactly the
expected fields separated by spaces or tabs, with no comment, blank or CR-ended line. Such a file
is cut into fields with a few vectorised passes over its bytes; ids stay spans of the file's
buffer (:class:`~ragmeter.io.trec.column.SpanColumn`), and scores and grades are converted from
a byte matrix. For a medium-sized file (512 KiB to 48 MB, about 12,000 to 1.2M run lines) this
is faster than importing Arrow and starting its CSV reader (docs/retrieval.md#speed).

Anything else returns ``None``, and the caller parses the file with the Arrow path, which
accepts every form and reports every error with its line. A value this parse cannot convert
exactly (a score in exponent form, an integral grade written ``2.0``) is converted as the
Arrow path converts it, or sends the file there too.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

import numpy as np

from ragmeter.io.trec.checks import _BLOCK, _INT32, _NUMBER
from ragmeter.io.trec.column import SpanColumn
from ragmeter.io.trec.containers import Origin, Qrels, Run

__all__ = ["read_qrels_regular", "read_run_regular"]

# zero bytes after a copied file's data: an 8-byte word read at any id's start stays inside
_PAD = 16

# 10**k, exact in float64 for k <= 22
_POW10 = 10.0 ** np.arange(23)

# digits of a decimal whose mantissa is exact in float64 (below 2**53) whatever the digits
_MAX_DIGITS = 15


# bytes of the file cut at a time: the temporaries of one piece are reused for the next, where
# whole-file temporaries would fault in fresh pages (most of the parse's time)
_PIECE = 1 << 18


# the separators' kinds: 1 between fields (space, tab), 2 at a line's end, 0 not allowed
_KIND = np.zeros(256, dtype=np.uint8)
_KIND[[9, 32]] = 1
_KIND[10] = 2
_LINE = {k: np.array([1] * (k - 1) + [2], dtype=np.uint8) for k in (4, 6)}


class _Text:
    """A file's bytes up to a final newline, with 8 bytes or more after every id's start: a
    memory map of the file (its pages come from the page cache, several per fault, and none is
    copied) or, for a file not ending with a newline or whose last ids lie too close to its
    end, a copy with a newline and padding."""

    def __init__(self, raw: mmap.mmap | bytearray, size: int) -> None:
        self.raw = raw  # find and rfind
        self.size = size  # the bytes up to the last newline, included
        self.buf = np.frombuffer(raw, dtype=np.uint8)

    def room(self, starts: np.ndarray) -> bool:
        """Whether a word of 8 bytes read at each of these starts stays inside the buffer."""
        return int(starts.max()) + 8 <= self.buf.size


def _mapped(path: str) -> _Text | None:
    try:
        with open(path, "rb") as fh:
            raw = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # unreadable (the Arrow path says why), or empty
        return None
    size = len(raw)
    return _Text(raw, size) if raw[size - 1] == 10 else None


def _copied(path: str) -> _Text | None:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            raw = bytearray(size + 1 + _PAD)
            got = fh.readinto(memoryview(raw)[:size])
    except OSError:
        return None
    if got != size or size == 0:
        return None
    if raw[size - 1] != 10:
        raw[size] = 10
        size += 1
    return _Text(raw, size)


def _cut(path: str, k: int, keep: tuple[int, ...]) -> tuple[_Text, np.ndarray, np.ndarray] | None:
    """The file and the (starts, ends) of the fields ``keep`` of its lines; None when it is
    not regular."""
    text = _mapped(path)
    if text is not None:
        cut = _fields(text, k, keep)
        # the ids (the first two fields kept) are read 8 bytes at a time
        if cut is None or text.room(cut[0][-1, :2]):
            return None if cut is None else (text, *cut)
    text = _copied(path)
    if text is None:
        return None
    cut = _fields(text, k, keep)
    return None if cut is None else (text, *cut)


def _fields(text: _Text, k: int, keep: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the fields ``keep`` of every line, shaped (lines, len(keep)), when
    every line holds exactly ``k`` fields of printable ASCII separated by spaces and tabs;
    else None.

    The bytes below 33 of such a file are its separators and newlines, found by one comparison
    and one search per piece; a field runs from one separator to the next. When every field is
    followed by exactly one separator (the usual layout) the fields are read off the
    separators' positions directly.
    """
    raw, buf, size = text.raw, text.buf, text.size
    if raw.find(b"#", 0, size) >= 0:
        return None
    # a line holds at least k bytes of fields and k separators: room for every line (the
    # pages of the rows not used are never touched)
    most = size // (2 * k) + 1
    index = np.int32 if buf.size < 2**31 else np.int64
    starts = np.empty((most, len(keep)), dtype=index)
    ends = np.empty((most, len(keep)), dtype=index)
    done = 0  # lines cut so far
    a = -1  # each piece runs from a newline (before the first one: the file's start) to one
    while a < size - 1:
        b = raw.find(b"\n", min(a + _PIECE, size - 1), size)  # the last byte is a newline
        piece = buf[max(a, 0) : b + 1]
        if int(piece.max()) > 127:
            return None  # not ASCII
        seps = np.flatnonzero(piece <= 32)
        if a < 0:
            seps = np.concatenate(([-1], seps))
            kinds = _KIND[buf[seps[1:]]]
            kinds = np.concatenate(([2], kinds)).astype(np.uint8)
        else:
            seps += a
            kinds = _KIND[buf[seps]]
        cut = _one_separator(seps, kinds, k)
        if cut is None:
            cut = _runs_of_separators(seps, kinds, k)
            if cut is None:
                return None
        s, e = cut
        n = s.size // k
        if b - a >= _BLOCK and int(np.diff(seps[kinds == 2]).max()) >= _BLOCK:
            return None  # a line too long for the Arrow path, refused there
        for i, f in enumerate(keep):
            starts[done : done + n, i] = s[f::k]
            ends[done : done + n, i] = e[f::k]
        done += n
        a = b
    return starts[:done], ends[:done]


def _one_separator(
    seps: np.ndarray, kinds: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the fields of a piece whose lines are ``k`` fields each followed by
    one space or tab, the last by the newline; else None."""
    n = (seps.size - 1) // k
    if n == 0 or seps.size != n * k + 1 or not (kinds[1:].reshape(n, k) == _LINE[k]).all():
        return None
    if int(np.diff(seps).min()) < 2:
        return None  # two separators in a row
    return seps[:-1] + 1, seps[1:]


def _runs_of_separators(
    seps: np.ndarray, kinds: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the fields of a piece whose lines hold ``k`` fields each, separated
    and surrounded by any runs of spaces and tabs; else None (a control byte other than a
    tab or newline, or a line of another number of fields, a blank one included)."""
    if not kinds.all():
        return None
    gap = np.flatnonzero(np.diff(seps) > 1)  # a field between separators gap and gap + 1
    s, e = seps[gap] + 1, seps[gap + 1]
    nl = seps[kinds == 2]
    n = nl.size - 1
    if n == 0 or s.size != n * k:
        return None
    # each line's first field starts after its newline and its last field ends before the
    # next: then every line holds exactly k fields
    if not (s[::k] > nl[:-1]).all() or not (e[k - 1 :: k] <= nl[1:]).all():
        return None
    return s, e


def _rows_of(buf: np.ndarray, width: int) -> np.ndarray:
    """Every ``width`` bytes of ``buf`` from each position where they fit, as a row (a view)."""
    rows = max(buf.size - width + 1, 0)
    return np.lib.stride_tricks.as_strided(buf, shape=(rows, width), strides=(1, 1))


def _matrix(buf: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes from each start, one row per field (uint8); past the buffer's end
    (the last fields of a memory-mapped file), zeros."""
    view = _rows_of(buf, width)
    tail = starts >= view.shape[0]
    if not tail.any():
        return view[starts]
    at = int(starts[tail].min())
    padded = np.zeros(buf.size - at + width, dtype=np.uint8)
    padded[: buf.size - at] = buf[at:]
    out = np.empty((starts.size, width), dtype=np.uint8)
    out[~tail] = view[starts[~tail]]
    out[tail] = _rows_of(padded, width)[starts[tail] - at]
    return out


def _numbers(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, dot: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(values, rows left): ``[+-]digits[.digits]`` fields of at most 15 digits converted
    exactly (float64 when ``dot``, else int64), and the rows in another form.

    The mantissa of at most 15 digits and the power of ten are both exact in float64, so one
    IEEE division gives the correctly rounded value, as ``strtod`` does (Clinger, "How to read
    floating point numbers accurately", PLDI 1990).
    """
    lens = (ends - starts).astype(np.int8 if int((ends - starts).max()) < 128 else np.int64)
    n = lens.size
    width = int(lens.max())
    if width > 40:
        return np.zeros(n, np.float64 if dot else np.int64), np.arange(n)
    # one contiguous row per byte position: the loop below reads each once
    cols = np.ascontiguousarray(_matrix(buf, starts, width).T)
    mant = np.zeros(n, dtype=np.int64)
    digits = np.zeros(n, dtype=np.int8)
    frac = np.zeros(n, dtype=np.int8)
    dots = np.zeros(n, dtype=np.int8)
    neg = cols[0] == 45
    bad = np.zeros(n, dtype=bool)
    short = int(lens.min())
    for j in range(width):
        c = cols[j]
        d = c - np.uint8(48)
        isd = d < 10
        if j >= short:
            inside = lens > j
            isd &= inside
        np.multiply(mant, 10, out=mant, where=isd)
        np.add(mant, d, out=mant, where=isd, casting="unsafe")
        digits += isd
        other = ~isd  # a byte of the field that is not a digit: a dot, a sign or bad
        if dot:
            isdot = c == 46
            if j >= short:
                isdot &= inside
            frac += isd & (dots > 0)
            dots += isdot
            other &= ~isdot
        if j == 0:
            other &= ~(neg | (c == 43))
        if j >= short:
            other &= inside
        bad |= other
    bad |= (digits == 0) | (digits > _MAX_DIGITS)
    if dot:
        bad |= dots > 1
        values = mant.astype(np.float64)
        values /= _POW10[np.minimum(frac, 22)]  # (rows of over 15 digits are left anyway)
        np.negative(values, out=values, where=neg)
        return values, np.flatnonzero(bad)
    np.negative(mant, out=mant, where=neg)
    return mant, np.flatnonzero(bad)


def _last_field(text: _Text, n: int) -> bytes:
    """Field ``n`` of the file's last line."""
    start = text.raw.rfind(b"\n", 0, text.size - 1) + 1
    return bytes(text.raw[start : text.size - 1]).split()[n]


def _columns(
    text: _Text, starts: np.ndarray, ends: np.ndarray, path: str, name: str
) -> dict[str, Any]:
    """The qid and docno (the first two fields kept) as spans of the file, and the rows'
    origin: with no blank or comment line, row i is line i + 1 (found on demand by a rescan)."""
    return {
        "qid": SpanColumn(text.buf, starts[:, 0], ends[:, 0]),
        "docno": SpanColumn(text.buf, starts[:, 1], ends[:, 1]),
        "origin": Origin(name, path=path),
    }


def read_run_regular(path: str, name: str) -> Run | None:
    """A regular TREC run file as :func:`~ragmeter.io.trec.read_run` reads it; None when the
    file is not regular or holds a score the Arrow path should convert or refuse."""
    cut = _cut(path, 6, (0, 2, 4))
    if cut is None:
        return None
    text, starts, ends = cut
    scores, left = _numbers(text.buf, starts[:, 2], ends[:, 2], dot=True)
    for row in left.tolist():
        token = text.buf[starts[row, 2] : ends[row, 2]].tobytes()
        if not _NUMBER.fullmatch(token):
            return None  # not a number: the Arrow path names the line
        scores[row] = float(token)
    if left.size and not np.isfinite(scores[left]).all():
        return None  # out of range: refused with its line by the Arrow path
    runid = _last_field(text, 5).decode("ascii")
    return Run(score=scores, runid=runid, **_columns(text, starts, ends, path, name))


def read_qrels_regular(path: str, name: str) -> Qrels | None:
    """A regular TREC qrels file as :func:`~ragmeter.io.trec.read_qrels` reads it; None when
    the file is not regular or a grade is not a plain integer of 32 bits."""
    cut = _cut(path, 4, (0, 2, 3))
    if cut is None:
        return None
    text, starts, ends = cut
    grades, left = _numbers(text.buf, starts[:, 2], ends[:, 2], dot=False)
    if left.size or grades.min() < _INT32[0] or grades.max() > _INT32[1]:
        return None
    return Qrels(grade=grades, **_columns(text, starts, ends, path, name))
