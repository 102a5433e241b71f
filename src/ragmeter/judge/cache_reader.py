"""Read-only lookups in a judge cache, for the dashboard's sample page (docs/judge.md)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.judge.cache_url import _sqlite_file

__all__ = ["CacheReader"]

_READ_SQL = (
    "SELECT key, model, prompt_version, request_json, response_json, valid, created "
    "FROM judge_cache WHERE key IN ({})"
)


def shown_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One looked-up entry (key, model, prompt version, request, response, valid, created) as
    the dashboard's sample page shows it, whichever database it came from."""
    key, model, pv, req, resp, valid, created = row
    request = json.loads(req) if req is not None else None
    return {
        "key": key,
        "model": model,
        "prompt_version": pv,
        "messages": request.get("messages") if request else None,
        "response": json.loads(resp),
        "valid": bool(valid),
        "created": created,
    }


class CacheReader:
    """Read-only lookups in a judge cache file, for ``ragmeter serve --judge-cache``.

    The file is opened with the SQLite URI ``mode=ro`` (and ``PRAGMA query_only``) for each
    lookup, so nothing is ever written, created or left open. When no ``-wal`` file exists the
    database is fully checkpointed and is read with ``immutable=1`` as well, which needs no
    shared-memory file either; if a judge run wrote to it meanwhile (the ``-wal`` file appeared
    or the file changed) the lookup is repeated the ordinary read-only way.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(_sqlite_file(path)).absolute()

    def exists(self) -> bool:
        return self.path.is_file()

    def _fingerprint(self) -> tuple[int, int, bool]:
        stat = self.path.stat()
        return stat.st_mtime_ns, stat.st_size, Path(f"{self.path}-wal").exists()

    def _query(self, uri: str, keys: list[str]) -> dict[str, dict[str, Any]]:
        db = sqlite3.connect(uri, uri=True, timeout=5.0, isolation_level=None)
        try:
            db.execute("PRAGMA query_only=ON")
            out: dict[str, dict[str, Any]] = {}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                sql = _READ_SQL.format(", ".join("?" for _ in part))
                for row in db.execute(sql, part):
                    out[row[0]] = shown_entry(row)
            return out
        finally:
            db.close()

    def lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The entries of ``keys`` that the cache holds (a pruned one is simply absent).

        Raises :class:`FileNotFoundError` when the file is gone and
        :class:`~ragmeter.errors.InputError` when it is not a readable judge cache.
        """
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        if not self.exists():
            raise FileNotFoundError(os.fspath(self.path))
        uri = self.path.as_uri()
        try:
            before = self._fingerprint()
            if not before[2]:
                found = self._query(f"{uri}?mode=ro&immutable=1", wanted)
                if self._fingerprint() == before:
                    return found
            return self._query(f"{uri}?mode=ro", wanted)
        except (sqlite3.Error, ValueError) as exc:
            raise InputError(
                f"cannot read the judge cache ({exc})", path=os.fspath(self.path)
            ) from None
