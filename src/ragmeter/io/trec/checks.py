"""Validation of TREC lines, and the one-line ``FILE:LINE: ...`` errors they raise
(docs/retrieval.md#inputs)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import call
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.cnum import c_atol
from ragmeter.io.trec.containers import Origin, _plain
from ragmeter.io.trec.lines import _Input, _iter_raw_lines, _split_lines, lines_before

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
