"""The parse of small TREC files, in plain Python: no Arrow (docs/retrieval.md#speed).

For a run or qrels of a few hundred kilobytes, importing Arrow and starting its CSV reader costs
more than the whole parse. Lines are split here with ``bytes.split`` (the same whitespace set
as the Arrow path's normalisation) into :class:`~ragmeter.io.trec.column.BytesColumn` ids, and
every check runs in the order the Arrow path runs it, with the same messages: a line that would
make the columnar parse fail sends both paths to the same line-by-line rescan (the first error
in file order), then invalid UTF-8 in qids, then in docnos, then non-finite scores or bad grades.

``RAGMETER_TREC_PARSER`` (``small``, ``regular`` or ``arrow``) forces a path, so that the tests
run every input through each.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.io.files import sha256_file
from ragmeter.io.trec.checks import (
    _BLOCK,
    _INT32,
    _NUMBER,
    _no_data,
    _parse_grade,
    _refuse_cr_only,
    _refuse_long_line,
    _scan_errors,
    _utf8_error,
)
from ragmeter.io.trec.column import BytesColumn
from ragmeter.io.trec.containers import Origin, Qrels, Run
from ragmeter.io.trec.lines import _Input, _open_input

__all__ = ["read_qrels_small", "read_run_small"]

_NONFINITE = (b"nan", b"inf", b"infinity")
_BOM = b"\xef\xbb\xbf"
_GRADE = re.compile(rb"-?\d{1,10}")


def _content(inp: _Input) -> bytes:
    if inp.data is not None:
        data = bytes(inp.data)
    else:
        assert inp.path is not None
        try:
            with open(inp.path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror or exc})", path=inp.name) from None
    return data


def _lines(data: bytes, inp: _Input, nfields: int) -> list[bytes]:
    if b"\r" in data:
        raw = np.frombuffer(data[3:] if data.startswith(_BOM) else data, dtype=np.uint8)
        _refuse_cr_only(raw, inp, nfields)
    lines = data.split(b"\n")
    if len(data) >= _BLOCK - 1 and max(map(len, lines)) >= _BLOCK - 1:
        # a line the Arrow parse cannot hold in one block: refused there, after the rescan
        _scan_errors(inp, "run" if nfields == 6 else "qrels")
        _refuse_long_line(inp)
    if lines[0].startswith(_BOM):
        lines[0] = lines[0][3:]
    return lines


def _data_rows(lines: list[bytes]) -> list[tuple[int, list[bytes]]]:
    """(line number, fields) of every data line: not blank, not a comment."""
    split = [(i, line.split()) for i, line in enumerate(lines, start=1)]
    return [(i, f) for i, f in split if f and f[0][:1] != b"#"]


def _float(token: bytes) -> float:
    try:
        return float(token)
    except ValueError:  # NaN or infinity as written, refused by the rescan
        return math.nan


def _check_utf8(values: list[bytes], linenos: list[int], what: str, name: str) -> None:
    if b"".join(values).isascii():
        return
    for value, lineno in zip(values, linenos, strict=True):
        reason = None if value.isascii() else _utf8_error(value)
        if reason:
            raise InputError(f"{what} is not valid UTF-8 ({reason})", path=name, line=lineno)


def _origin(inp: _Input, linenos: list[int]) -> Origin:
    return Origin(
        inp.name,
        path=inp.path if inp.data is None else None,
        data=inp.data,
        lines=np.array(linenos, dtype=np.int64),
    )


def read_run_small(path: str | os.PathLike[str], *, hash_input: bool = False) -> Run:
    """A TREC run file as :func:`~ragmeter.io.trec.read_run` reads it, ids as bytes."""
    inp = _open_input(path, allow_stdin=True)
    lines = _lines(_content(inp), inp, 6)
    rows = _data_rows(lines)
    if not rows or min(len(f) for _, f in rows) < 6:
        _scan_errors(inp, "run")  # raises the first error in file order
        raise InputError(_no_data(6), path=inp.name)  # pragma: no cover - the scan raised
    tokens = [f[4] for _, f in rows]
    # a score that is not a number makes the columnar parse fail (then the rescan names it);
    # NaN and infinity parse there, and are refused after the UTF-8 checks
    numbers = all(map(_NUMBER.fullmatch, tokens))
    if not numbers and any(
        _NUMBER.fullmatch(t) is None and t.lower().lstrip(b"+-") not in _NONFINITE for t in tokens
    ):
        _scan_errors(inp, "run")
    qids = [f[0] for _, f in rows]
    docs = [f[2] for _, f in rows]
    linenos = [i for i, _ in rows]
    _check_utf8(qids, linenos, "qid", inp.name)
    _check_utf8(docs, linenos, "docno", inp.name)
    scores = np.array(
        list(map(float, tokens)) if numbers else [_float(t) for t in tokens], dtype=np.float64
    )
    if not np.isfinite(scores).all():
        _scan_errors(inp, "run")  # raises with the line and the score as written
    tag = rows[-1][1][5]
    sha = sha256_file(inp.path) if hash_input and inp.path is not None else None
    return Run(
        qid=BytesColumn(qids),
        docno=BytesColumn(docs),
        score=scores,
        runid=tag.decode("utf-8", "replace"),
        origin=_origin(inp, linenos),
        sha256=sha,
    )


def _grade(token: bytes, name: str, lineno: int) -> int | None:
    """A grade as the Arrow path converts it (an integer, or an integral real), or None when
    the columnar parse would fail on it (not UTF-8)."""
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        value = int(text)
        if _INT32[0] <= value <= _INT32[1]:
            return value
    except ValueError:
        pass
    try:
        real = float(text)
    except ValueError:
        real = math.nan
    if math.isfinite(real) and real == int(real) and _INT32[0] <= real <= _INT32[1]:
        return int(real)
    return _parse_grade(text, name, lineno)  # raises


def read_qrels_small(path: str | os.PathLike[str], *, hash_input: bool = False) -> Qrels:
    """A TREC qrels file as :func:`~ragmeter.io.trec.read_qrels` reads it, ids as bytes."""
    inp = _open_input(path, allow_stdin=False)
    lines = _lines(_content(inp), inp, 4)
    rows = _data_rows(lines)
    if not rows or any(len(f) != 4 for _, f in rows):
        _scan_errors(inp, "qrels")  # raises the first error in file order
        raise InputError(_no_data(4), path=inp.name)  # pragma: no cover - the scan raised
    qids = [f[0] for _, f in rows]
    docs = [f[2] for _, f in rows]
    tokens = [f[3] for _, f in rows]
    linenos = [i for i, _ in rows]
    if not b"".join(tokens).isascii():
        for token in tokens:
            try:
                token.decode("utf-8")
            except UnicodeDecodeError:
                _scan_errors(inp, "qrels")
    _check_utf8(qids, linenos, "qid", inp.name)
    _check_utf8(docs, linenos, "docno", inp.name)
    grades: list[Any] = []
    if all(map(_GRADE.fullmatch, tokens)):
        grades = list(map(int, tokens))  # plain integers (range-checked below)
    if not grades or not (_INT32[0] <= min(grades) and max(grades) <= _INT32[1]):
        grades = [_grade(t, inp.name, n) for t, n in zip(tokens, linenos, strict=True)]
    sha = sha256_file(inp.path) if hash_input and inp.path is not None else None
    return Qrels(
        BytesColumn(qids),
        BytesColumn(docs),
        np.array(grades, dtype=np.int64),
        _origin(inp, linenos),
        sha,
    )
