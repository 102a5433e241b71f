"""The call cache: every finished call of a live system, kept in SQLite.

A call is keyed by (system name, system ``version``, method, canonical JSON of its arguments),
so a re-run of the same config makes no call at all and a new ``version`` calls again. Each
result is committed as soon as it returns, in WAL mode: a ``kill -9`` loses at most the calls
that were in flight. Failed calls are never stored, so a re-run retries them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SYSTEMS_CACHE", "CallCache", "call_key"]

DEFAULT_SYSTEMS_CACHE = ".ragmeter/systems-cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    system TEXT NOT NULL,
    version TEXT NOT NULL,
    method TEXT NOT NULL,
    key TEXT NOT NULL,
    args TEXT NOT NULL,
    result TEXT NOT NULL,
    seconds REAL NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (system, version, method, key)
)
"""


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, exact floats: one text per value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call_key(args: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a call's arguments."""
    return hashlib.sha256(canonical_json(args).encode("utf-8")).hexdigest()


class CallCache:
    """Finished calls on disk (``path=None``: in memory only, for a throwaway evaluation)."""

    def __init__(self, path: str | os.PathLike[str] | None = DEFAULT_SYSTEMS_CACHE) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = ":memory:" if self.path is None else str(self.path)
        # one connection, used only by the thread that collects results
        self.conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout = 30000")
        if self.path is not None:
            self.conn.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL: a commit survives the process being killed (not a power cut)
            self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(_SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def lookup(
        self, system: str, version: str | None, method: str, keys: Iterable[str]
    ) -> dict[str, Any]:
        """The cached results among ``keys`` (one query per method, not per call)."""
        wanted = set(keys)
        if not wanted:
            return {}
        rows = self.conn.execute(
            "SELECT key, result FROM calls WHERE system = ? AND version = ? AND method = ?",
            (system, version or "", method),
        )
        return {k: json.loads(r) for k, r in rows if k in wanted}

    def put(
        self,
        system: str,
        version: str | None,
        method: str,
        key: str,
        args: Mapping[str, Any],
        result: Any,
        seconds: float,
    ) -> None:
        """Store one finished call; committed before this returns."""
        self.conn.execute(
            "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                system,
                version or "",
                method,
                key,
                canonical_json(args),
                canonical_json(result),
                seconds,
                time.time(),
            ),
        )

    def drop(self, system: str) -> int:
        """Forget every call of one system (``--refresh-system``); returns how many."""
        cur = self.conn.execute("DELETE FROM calls WHERE system = ?", (system,))
        return cur.rowcount

    def count(self, system: str | None = None) -> int:
        if system is None:
            return self.conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        return self.conn.execute(
            "SELECT COUNT(*) FROM calls WHERE system = ?", (system,)
        ).fetchone()[0]
