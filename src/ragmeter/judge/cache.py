"""The request cache and the ledger table: one SQLite file, or PostgreSQL (docs/judge.md).

A cache is named by a file path (SQLite) or a ``postgresql://`` URL (for Dask workers on several
hosts, :mod:`ragmeter.judge.cache_pg`); :class:`JudgeCache` and :class:`CacheReader` open either.
SQLite runs in WAL mode, ``synchronous=NORMAL``, ``busy_timeout=5000``; values are JSON (never
pickle). Each reply is committed as soon as it arrives, so killing the process loses at most the
in-flight calls and a re-run sends only the calls that never finished. Headers and keys are never
stored: ``request_json`` holds only messages, params and schema. :class:`CacheReader` looks
entries up without ever writing to the cache (the dashboard's sample page).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.judge.cache_reader import CacheReader
from ragmeter.judge.cache_url import _sqlite_file, is_cache_url, shown_cache
from ragmeter.judge.ledger import LEDGER_FIELDS

__all__ = [
    "CacheEntry",
    "CacheReader",
    "JudgeCache",
    "cache_key",
    "canonical_json",
    "is_cache_url",
    "shown_cache",
]

SCHEMA_VERSION = "1"

_DDL = """
CREATE TABLE IF NOT EXISTS judge_cache (
  key TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  prompt_version TEXT NOT NULL,
  params_json TEXT NOT NULL,
  request_json TEXT,
  response_json TEXT NOT NULL,
  valid INTEGER NOT NULL,
  created REAL NOT NULL,
  latency_ms REAL,
  tokens_in INTEGER,
  tokens_out INTEGER
);
CREATE TABLE IF NOT EXISTS judge_ledger (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  sample_id TEXT,
  metric TEXT,
  stage TEXT,
  kind TEXT,
  repeat INTEGER,
  attempts INTEGER,
  cache_hit INTEGER NOT NULL,
  model TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cached_prompt_tokens INTEGER,
  cost_usd REAL,
  latency_ms REAL,
  status TEXT,
  created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS judge_cache_created ON judge_cache(created);
CREATE INDEX IF NOT EXISTS judge_ledger_run ON judge_ledger(run_id);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
"""

_LEDGER_SQL = (
    f"INSERT INTO judge_ledger ({', '.join(LEDGER_FIELDS)}) "
    f"VALUES ({', '.join('?' for _ in LEDGER_FIELDS)})"
)


def _final_commit(db: sqlite3.Connection) -> None:
    try:
        if db.in_transaction:
            db.execute("COMMIT")
        db.close()
    except sqlite3.Error:
        pass


def _set_wal(db: sqlite3.Connection, tries: int = 50) -> None:
    """Switch a cache to WAL. Workers that open a new cache at once contend for the switch, and
    SQLite answers "database is locked" at once there rather than waiting its busy timeout."""
    for attempt in range(tries):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(0.1)


def canonical_json(obj: Any) -> bytes:
    """The canonical JSON of docs/judge.md: sorted keys, no spaces, UTF-8, no NaN.

    >>> canonical_json({"b": 1, "a": "é"})
    b'{"a":"\\xc3\\xa9","b":1}'
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def cache_key(
    *,
    endpoint: str,
    model: str,
    messages: list[dict[str, str]],
    params: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    prompt_version: str,
) -> str:
    """sha256 hex of the canonical JSON of the request's identity."""
    return hashlib.sha256(
        canonical_json(
            {
                "endpoint": endpoint,
                "model": model,
                "messages": messages,
                "params": dict(params),
                "schema": schema,
                "prompt_version": prompt_version,
            }
        )
    ).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    key: str
    response: dict[str, Any]
    valid: bool
    created: float


def exported_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One ``judge_cache`` row (its columns in table order) as ``ragmeter cache export``
    writes it, whichever database it came from."""
    return {
        "key": row[0],
        "model": row[1],
        "prompt_version": row[2],
        "params": json.loads(row[3]),
        "request": json.loads(row[4]) if row[4] is not None else None,
        "response": json.loads(row[5]),
        "valid": bool(row[6]),
        "created": row[7],
        "latency_ms": row[8],
        "tokens_in": row[9],
        "tokens_out": row[10],
    }


class JudgeCache:
    """The request cache in a SQLite file, or in memory with ``path=None`` (``--no-cache``).

    :func:`~ragmeter.judge.cache_open.open_cache` opens a path or a ``postgresql://`` URL alike.
    """

    # the statements whose wording differs between SQLite and PostgreSQL
    _PUT_SQL = (
        "INSERT OR REPLACE INTO judge_cache (key, model, prompt_version, params_json, "
        "request_json, response_json, valid, created, latency_ms, tokens_in, tokens_out) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    _SET_META_SQL = "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)"

    def __init__(self, path: str | os.PathLike[str] | None, *, store_requests: bool = True) -> None:
        self.path = None if path is None else Path(_sqlite_file(path))
        self.store_requests = store_requests
        if self.path is None:
            self.db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(
                    os.fspath(self.path), check_same_thread=False, isolation_level=None, timeout=5.0
                )
                _set_wal(self.db)
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute("PRAGMA busy_timeout=5000")
            except sqlite3.DatabaseError as exc:
                raise InputError(
                    f"cannot open the judge cache ({exc})", path=os.fspath(self.path)
                ) from None
            except OSError as exc:  # its folder cannot be made
                raise InputError(
                    f"cannot create the judge cache ({exc.strerror or exc}; expected a path in "
                    "a writable folder, set with --cache)",
                    path=os.fspath(self.path),
                ) from None
        try:
            self.db.executescript(_DDL)
            row = self.db.execute("SELECT v FROM meta WHERE k='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"not a ragmeter judge cache ({exc})", path=os.fspath(self.path or ":memory:")
            ) from None
        if row is None:
            # several workers may open a new cache at once: the first insert wins, the others
            # read what it wrote
            self.db.execute(
                "INSERT OR IGNORE INTO meta (k, v) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
            )
            row = self.db.execute("SELECT v FROM meta WHERE k='schema_version'").fetchone()
        if row[0] != SCHEMA_VERSION:
            raise InputError(
                f"judge cache schema version {row[0]} is not supported (expected {SCHEMA_VERSION})",
                path=os.fspath(self.path or ":memory:"),
            )
        self._in_tx = False
        self._pending = 0
        self._last_commit = time.monotonic()
        # ledger rows of cache hits are committed in batches: commit what is left when the
        # cache is dropped or the interpreter exits without close()
        self._finalizer = weakref.finalize(self, _final_commit, self.db)

    # -- transactions: a reply is committed at once; ledger rows of cache hits in batches --
    def _begin(self) -> None:
        if not self._in_tx:
            self.db.execute("BEGIN")
            self._in_tx = True

    def commit(self) -> None:
        if self._in_tx:
            self.db.execute("COMMIT")
            self._in_tx = False
            self._pending = 0
            self._last_commit = time.monotonic()

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self._finalizer.detach()
            self.db.close()

    # -- entries -----------------------------------------------------------------------------
    def get(self, key: str) -> CacheEntry | None:
        row = self.db.execute(
            "SELECT response_json, valid, created FROM judge_cache WHERE key=?", (key,)
        ).fetchone()
        if row is None:
            return None
        return CacheEntry(key, json.loads(row[0]), bool(row[1]), row[2])

    def put(
        self,
        key: str,
        *,
        model: str,
        prompt_version: str,
        params: Mapping[str, Any],
        request: Mapping[str, Any] | None,
        response: Mapping[str, Any],
        valid: bool,
        latency_ms: float | None,
        tokens_in: int | None,
        tokens_out: int | None,
    ) -> None:
        self._begin()
        self.db.execute(
            self._PUT_SQL,
            (
                key,
                model,
                prompt_version,
                canonical_json(dict(params)).decode(),
                canonical_json(dict(request)).decode()
                if request is not None and self.store_requests
                else None,
                canonical_json(dict(response)).decode(),
                1 if valid else 0,
                time.time(),
                latency_ms,
                tokens_in,
                tokens_out,
            ),
        )
        self.commit()

    def mark_valid(self, key: str, valid: bool) -> None:
        self._begin()
        self.db.execute("UPDATE judge_cache SET valid=? WHERE key=?", (1 if valid else 0, key))
        self.commit()

    def write_ledger(self, row: Mapping[str, Any]) -> None:
        self._begin()
        self.db.execute(
            _LEDGER_SQL,
            tuple(int(row[c]) if c == "cache_hit" else row[c] for c in LEDGER_FIELDS),
        )
        self._pending += 1
        if self._pending >= 256 or time.monotonic() - self._last_commit > 1.0:
            self.commit()

    # -- negotiation memory (what the endpoint accepts) -------------------------------------
    def get_meta(self, k: str) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (k,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, k: str, v: str) -> None:
        self._begin()
        self.db.execute(self._SET_META_SQL, (k, v))
        self.commit()

    # -- ragmeter cache stats | prune | export -----------------------------------------------
    def stats(self) -> dict[str, Any]:
        self.commit()
        n, valid, oldest, newest = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(valid), 0), MIN(created), MAX(created) FROM judge_cache"
        ).fetchone()
        rows, hits, spend, unknown = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(cache_hit), 0), COALESCE(SUM(cost_usd), 0), "
            "COALESCE(SUM(CASE WHEN cost_usd IS NULL AND cache_hit = 0 THEN 1 ELSE 0 END), 0) "
            "FROM judge_ledger"
        ).fetchone()
        runs = self.db.execute("SELECT COUNT(DISTINCT run_id) FROM judge_ledger").fetchone()[0]
        models = dict(
            self.db.execute("SELECT model, COUNT(*) FROM judge_cache GROUP BY model ORDER BY model")
        )
        return {
            "path": self.shown(),
            "entries": n,
            "valid": valid,
            "invalid": n - valid,
            "size_bytes": self._size_bytes(),
            "models": models,
            "oldest": oldest,
            "newest": newest,
            "runs": runs,
            "lookups": rows,
            "hit_rate": (hits / rows) if rows else None,
            "lifetime_usd": round(spend, 10),
            "usd_unknown_calls": unknown,
        }

    def shown(self) -> str | None:
        """Where the cache is, as messages and summaries show it (never a password)."""
        return None if self.path is None else os.fspath(self.path)

    def _size_bytes(self) -> int:
        size = 0
        if self.path is not None:
            for suffix in ("", "-wal", "-shm"):
                p = Path(os.fspath(self.path) + suffix)
                if p.exists():
                    size += p.stat().st_size
        return size

    def prune(self, older_than_s: float) -> int:
        cutoff = time.time() - older_than_s
        self._begin()
        n = self.db.execute("DELETE FROM judge_cache WHERE created < ?", (cutoff,)).rowcount
        self.commit()
        self.db.execute("VACUUM")
        return n

    def export(self) -> Iterator[dict[str, Any]]:
        self.commit()
        cur = self.db.execute(
            "SELECT key, model, prompt_version, params_json, request_json, response_json, valid, "
            "created, latency_ms, tokens_in, tokens_out FROM judge_cache ORDER BY created, key"
        )
        for row in cur:
            yield exported_entry(row)

    def keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM judge_cache")}

    def __len__(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
