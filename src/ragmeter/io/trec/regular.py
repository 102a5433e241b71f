"""The parse of regular TREC files in numpy: no Arrow, and no Python object per line.

Nearly every run and qrels a system writes is *regular*: ASCII, every line holds exactly the
expected fields separated by spaces or tabs, with no comment, blank or CR-ended line. Such a file
is cut into fields with a few vectorised passes over its bytes; ids stay spans of the file's
buffer (:class:`~ragmeter.io.trec.column.SpanColumn`), and scores and grades are converted from
a byte matrix. For a medium-sized file (about 12,000 to 1.5M lines) this is faster than
importing Arrow and starting its CSV reader (docs/retrieval.md#speed).

Anything else returns ``None``, and the caller parses the file with the Arrow path, which
accepts every form and reports every error with its line. A value this parse cannot convert
exactly (a score in exponent form, an integral grade written ``2.0``) is converted as the
Arrow path converts it, or sends the file there too.
"""

from __future__ import annotations

import os

import numpy as np

from ragmeter.io.trec.checks import _BLOCK, _INT32, _NUMBER
from ragmeter.io.trec.column import SpanColumn
from ragmeter.io.trec.containers import Origin, Qrels, Run

__all__ = ["read_qrels_regular", "read_run_regular"]

# bytes after the data: an 8-byte word read at any id's start stays inside the buffer
_PAD = 16

# 10**k, exact in float64 for k <= 22
_POW10 = 10.0 ** np.arange(23)

# digits of a decimal whose mantissa is exact in float64 (below 2**53) whatever the digits
_MAX_DIGITS = 15


# bytes of the file tokenised at a time: the temporaries of one piece are reused for the next,
# where whole-file temporaries would fault in fresh pages (most of the parse's time)
_PIECE = 1 << 20


# the separators' kinds: 1 between fields (space, tab), 2 at a line's end, 0 not allowed
_KIND = np.zeros(256, dtype=np.uint8)
_KIND[[9, 32]] = 1
_KIND[10] = 2
_LINE = {k: np.array([1] * (k - 1) + [2], dtype=np.uint8) for k in (4, 6)}


def _load(path: str) -> bytearray | None:
    """The file's bytes after a newline, then a newline and zero padding; None if the file
    cannot be read here (the Arrow path reports why)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            buf = bytearray(size + 2 + _PAD)
            buf[0] = buf[size + 1] = 10
            got = fh.readinto(memoryview(buf)[1 : size + 1])
    except OSError:
        return None
    return buf if got == size else None


def _fields(raw: bytearray, k: int, keep: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the fields ``keep`` of every line, shaped (lines, len(keep)), when
    every line holds exactly ``k`` fields of printable ASCII separated by spaces and tabs;
    else None.

    The bytes below 33 of such a file are its separators and newlines, found by one comparison
    and one search per piece; a field runs from one separator to the next. When every field is
    followed by exactly one separator (the usual layout) the fields are read off the
    separators' positions directly.
    """
    size = len(raw) - _PAD  # the two framing newlines included
    if not raw.isascii() or b"#" in raw:
        return None
    final = raw[size - 2] == 10  # the file ends with a newline: the piece after it is empty
    lines = raw.count(b"\n", 0, size) - 1 - final
    if lines < 1:
        return None
    buf = np.frombuffer(raw, dtype=np.uint8)
    index = np.int32 if size < 2**31 - _PAD else np.int64
    starts = np.empty((lines, len(keep)), dtype=index)
    ends = np.empty((lines, len(keep)), dtype=index)
    done = 0  # lines cut so far
    a = 0  # each piece runs from a newline to a newline
    while done < lines:
        b = raw.find(b"\n", min(a + _PIECE, size - 1), size)  # the last byte is a newline
        seps = np.flatnonzero(buf[a : b + 1] <= 32)
        seps += a
        kinds = _KIND[buf[seps]]
        if b == size - 1 and final:
            seps, kinds = seps[:-1], kinds[:-1]  # the empty piece after the last newline
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
    return (starts, ends) if done == lines else None


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


def _matrix(buf: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes from each start, one row per field (uint8)."""
    view = np.lib.stride_tricks.as_strided(buf, shape=(buf.size - width + 1, width), strides=(1, 1))
    return view[starts]


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


def _last_field(raw: bytearray, n: int) -> bytes:
    """Field ``n`` of the file's last line."""
    size = len(raw) - _PAD
    end = size - 2 if raw[size - 2] == 10 else size - 1
    return bytes(raw[raw.rfind(b"\n", 0, end) + 1 : end]).split()[n]


def _origin(path: str, name: str) -> Origin:
    # no blank or comment line: row i is line i + 1, found by rescanning the file on demand
    return Origin(name, path=path)


def read_run_regular(path: str, name: str) -> Run | None:
    """A regular TREC run file as :func:`~ragmeter.io.trec.read_run` reads it; None when the
    file is not regular or holds a score the Arrow path should convert or refuse."""
    raw = _load(path)
    if raw is None:
        return None
    fields = _fields(raw, 6, (0, 2, 4))
    if fields is None:
        return None
    starts, ends = fields
    buf = np.frombuffer(raw, dtype=np.uint8)
    scores, left = _numbers(buf, starts[:, 2], ends[:, 2], dot=True)
    for row in left.tolist():
        token = bytes(raw[starts[row, 2] : ends[row, 2]])
        if not _NUMBER.fullmatch(token):
            return None  # not a number: the Arrow path names the line
        scores[row] = float(token)
    if left.size and not np.isfinite(scores[left]).all():
        return None  # out of range: refused with its line by the Arrow path
    return Run(
        qid=SpanColumn(buf, starts[:, 0], ends[:, 0]),
        docno=SpanColumn(buf, starts[:, 1], ends[:, 1]),
        score=scores,
        runid=_last_field(raw, 5).decode("ascii"),
        origin=_origin(path, name),
    )


def read_qrels_regular(path: str, name: str) -> Qrels | None:
    """A regular TREC qrels file as :func:`~ragmeter.io.trec.read_qrels` reads it; None when
    the file is not regular or a grade is not a plain integer of 32 bits."""
    raw = _load(path)
    if raw is None:
        return None
    fields = _fields(raw, 4, (0, 2, 3))
    if fields is None:
        return None
    starts, ends = fields
    buf = np.frombuffer(raw, dtype=np.uint8)
    grades, left = _numbers(buf, starts[:, 2], ends[:, 2], dot=False)
    if left.size or grades.min() < _INT32[0] or grades.max() > _INT32[1]:
        return None
    return Qrels(
        SpanColumn(buf, starts[:, 0], ends[:, 0]),
        SpanColumn(buf, starts[:, 1], ends[:, 1]),
        grades,
        _origin(path, name),
    )
