"""The passages a live system's ``answer`` receives as contexts: ``dataset.corpus``.

JSONL, one passage per line: ``{"id": str, "text": str, "title"?: str}`` (BEIR's
``corpus.jsonl`` with ``_id`` is accepted too). Bad lines are one-line ``FILE:LINE`` errors.
"""

from __future__ import annotations

from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, display_name
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.jsonutil import json_type

__all__ = ["read_corpus"]


def read_corpus(path: PathLike) -> dict[str, dict[str, Any]]:
    """Passages by id, in file order."""
    name = display_name(path)
    out: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        key = "id" if "id" in obj else "_id" if "_id" in obj else None
        if key is None:
            raise InputError("no id (expected an object with id and text)", path=name, line=line)
        doc = obj[key]
        if not isinstance(doc, str) or not doc:
            raise InputError(
                f"{key} is {json_type(doc)} (expected a non-empty string)", path=name, line=line
            )
        if doc in out:
            raise InputError(
                f"id {doc!r} appears twice (first at line {lines[doc]})", path=name, line=line
            )
        text = obj.get("text")
        if not isinstance(text, str):
            raise InputError(f"text is {json_type(text)} (expected a string)", path=name, line=line)
        title = obj.get("title")
        out[doc] = {"text": text, **({"title": title} if isinstance(title, str) else {})}
        lines[doc] = line
    return out
