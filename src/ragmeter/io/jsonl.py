"""Line-numbered JSON Lines reading, shared by every JSONL input of ragmeter."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, display_name, open_binary

__all__ = ["finite_float", "iter_jsonl", "parse_line", "read_jsonl"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN and infinity have no JSON spelling; use null)")


def finite_float(text: str) -> float:
    """``parse_float`` for every JSON input: a number beyond a double's range is refused.

    Python reads ``1e309`` as infinity, which would then pass for a prediction ``"inf"``, a
    label or a stratum while ``NaN`` is refused; both are refused alike, with the line.

    >>> finite_float("0.25")
    0.25
    >>> finite_float("1e309")
    Traceback (most recent call last):
    ...
    ValueError: number 1e309 is out of range (expected a finite number)
    """
    value = float(text)
    if value in (math.inf, -math.inf):
        shown = text if len(text) <= 24 else text[:20] + "..."
        raise ValueError(f"number {shown} is out of range (expected a finite number)")
    return value


# One decoder for every line: json.loads with hooks builds a new JSONDecoder per call, which was
# a fifth of the time of reading a file of short lines.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)


def iter_jsonl(
    path: PathLike, *, allow_stdin: bool = True, allow_empty: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file.

    Line numbers are physical and 1-based. Every line must hold one JSON object; NaN and
    Infinity, which Python's ``json`` would accept, are rejected because JSON has no such values.
    Gzip input is decompressed transparently and a UTF-8 byte-order mark is dropped.

    Errors are :class:`InputError` with the file and line, e.g.
    ``answers.jsonl:3: not valid JSON: Expecting ',' delimiter at column 12 (expected one JSON
    object per line)``.
    """
    name = display_name(path)
    seen = False
    with open_binary(path, allow_stdin=allow_stdin) as fh:
        for lineno, raw in enumerate(fh, start=1):
            obj = parse_line(raw, lineno, name)
            if obj is None:
                continue
            seen = True
            yield lineno, obj
    if not seen and not allow_empty:
        raise InputError("no data lines (expected one JSON object per line)", path=name)


def parse_line(raw: bytes, lineno: int, name: str) -> dict[str, Any] | None:
    """One physical line of a JSONL file as :func:`iter_jsonl` reads it: its object, or None
    for a blank line (a reader of a byte range of the file numbers lines the same way)."""
    if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            path=name,
            line=lineno,
        ) from None
    if not text.strip():
        return None
    try:
        obj = _DECODER.decode(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} at column {exc.colno} (expected one JSON object per line)",
            path=name,
            line=lineno,
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), path=name, line=lineno) from None
    except RecursionError:
        raise InputError(
            "JSON nested too deeply (expected one JSON object per line)", path=name, line=lineno
        ) from None
    if not isinstance(obj, dict):
        raise InputError(
            f"a JSON {type(obj).__name__ if obj is not None else 'null'} "
            "(expected one JSON object per line)",
            path=name,
            line=lineno,
        )
    return obj


def read_jsonl(path: PathLike, **kwargs: Any) -> list[tuple[int, dict[str, Any]]]:
    """All of :func:`iter_jsonl` as a list (validates the whole file before returning)."""
    return list(iter_jsonl(os.fspath(path), **kwargs))
