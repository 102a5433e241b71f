"""Validation of TREC lines, and the one-line ``FILE:LINE: ...`` errors they raise
(docs/retrieval.md#inputs)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

from ragmeter.errors import InputError
from ragmeter.io.cnum import c_atol
from ragmeter.io.trec.containers import Origin
from ragmeter.io.trec.lines import (
    _Input,
    _iter_raw_lines,
    _numbered_lines,
    _split_lines,
    lines_before,
)

# the CSV block of the Arrow parse, and so the longest line either parse accepts: small blocks
# keep the Arrow parse's peak memory low
_BLOCK = 1 << 21

RUN_FIELDS = "qid Q0 docno rank score tag"

QRELS_FIELDS = "qid iter docno grade"

_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

_INT32 = (-(2**31), 2**31 - 1)


def _no_data(nfields: int) -> str:
    layout = RUN_FIELDS if nfields >= 6 else QRELS_FIELDS
    return f"no data lines (expected lines of {nfields} fields: {layout})"


def _utf8_error(value: bytes) -> str | None:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{value[exc.start]:02x} at offset {exc.start}"
    return None


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
