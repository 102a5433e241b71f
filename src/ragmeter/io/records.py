"""JSON records with line numbers: a JSON array or JSON Lines, detected from the first character.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "r.json"
>>> _ = p.write_text('[\\n {"id": 1},\\n {"id": 2}\\n]', encoding="utf-8")
>>> [(line, rec["id"]) for line, rec in read_records(p)]
[(2, 1), (3, 2)]
"""

from __future__ import annotations

import json
import os
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import read_text
from ragmeter.io.jsonl import finite_float

__all__ = ["read_records"]


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN and infinity have no JSON spelling; use null)")


def read_records(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for every object of a JSON array file or a JSONL file.

    Errors carry the file and line: invalid JSON, a value that is not an object, NaN, an empty
    file.
    """
    name = os.fspath(path)
    text = read_text(name)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(
            "empty file (expected a JSON array or one JSON object per line)", path=name
        )
    if stripped[0] != "[":
        from ragmeter.io.jsonl import read_jsonl

        return read_jsonl(name)
    decoder = json.JSONDecoder(parse_constant=_reject, parse_float=finite_float)
    pos = len(text) - len(stripped) + 1
    out: list[tuple[int, dict[str, Any]]] = []
    n = len(text)

    def skip(i: int) -> int:
        while i < n and text[i] in " \t\r\n":
            i += 1
        return i

    def line_of(i: int) -> int:
        return text.count("\n", 0, i) + 1

    pos = skip(pos)
    if pos < n and text[pos] == "]":
        raise InputError("empty array (expected at least one record)", path=name)
    while True:
        pos = skip(pos)
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} (expected a JSON array of objects)",
                path=name,
                line=line_of(exc.pos),
            ) from None
        except ValueError as exc:
            raise InputError(str(exc), path=name, line=line_of(pos)) from None
        except RecursionError:
            raise InputError(
                "JSON nested too deeply (expected a JSON array of objects)",
                path=name,
                line=line_of(pos),
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"a JSON {type(obj).__name__} (expected an object per record)",
                path=name,
                line=line_of(pos),
            )
        out.append((line_of(pos), obj))
        pos = skip(end)
        if pos < n and text[pos] == ",":
            pos += 1
            continue
        if pos < n and text[pos] == "]":
            rest = text[pos + 1 :].strip()
            if rest:
                raise InputError("text after the closing ']'", path=name, line=line_of(pos + 1))
            return out
        raise InputError(
            "expected ',' or ']' after a record", path=name, line=line_of(min(pos, n - 1))
        )
