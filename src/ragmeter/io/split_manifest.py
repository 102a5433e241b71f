"""Reading and writing split manifests (docs/stats.md#dataset-splits-ragmeterstatsdatasets)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, atomic_write, display_name, open_text
from ragmeter.io.jsonutil import dumps
from ragmeter.records.split_manifest import verify_manifest

__all__ = ["load_manifest", "write_manifest"]


def load_manifest(path: PathLike) -> dict[str, Any]:
    """Read a manifest written by ``ragmeter split`` and verify its hash.

    Errors are one line: ``manifest.json: sha256 '…' does not match the splits (…)``.
    """
    name = display_name(path)
    with open_text(path) as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg} at column {exc.colno} (expected a split manifest)",
            path=name,
            line=exc.lineno,
        ) from None
    return verify_manifest(data, path=name)


def write_manifest(path: PathLike, manifest: Mapping[str, Any]) -> None:
    """Write a manifest atomically (2-space indented JSON, UTF-8, final newline)."""
    with atomic_write(path) as fh:
        fh.write(dumps(dict(manifest), indent=2) + "\n")
