"""The judge cache on PostgreSQL: the tables of the SQLite file on a server (docs/judge.md).

For Dask workers on several hosts, which cannot share one SQLite file (SQLite's locking is
unsafe over network filesystems). The tables, keys, JSON values and behaviour are those of
:class:`~ragmeter.judge.cache.JudgeCache`: each reply is committed as it arrives, ledger rows of
cache hits in batches, and a reply stored again under the same key replaces the first one (as
``INSERT OR REPLACE`` does in SQLite, which ``--refresh-cache`` relies on). Writers of one key
in several processes never fail: ``INSERT ... ON CONFLICT`` settles the race inside the server.
Two processes creating the tables of a new database at once take an advisory lock first,
since ``CREATE TABLE IF NOT EXISTS`` is not safe against a concurrent create in PostgreSQL.

psycopg 3 (the ``postgres`` extra) is used directly, one autocommit connection per cache, with
explicit ``BEGIN``/``COMMIT`` as the SQLite path does. The password, if the URL carries one, is
used to connect and never shown: :meth:`PgJudgeCache.shown` and every message mask it.
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from ragmeter.errors import InputError, UsageError
from ragmeter.judge.cache import SCHEMA_VERSION, JudgeCache, exported_entry
from ragmeter.judge.cache_reader import CacheReader, shown_entry

__all__ = ["PgCacheReader", "PgJudgeCache", "connect", "parse_url"]

# an arbitrary constant: the advisory lock under which the tables are created
_DDL_LOCK = 0x7261676D_6A630001

_DDL = (
    """CREATE TABLE IF NOT EXISTS judge_cache (
  key TEXT PRIMARY KEY,
  model TEXT NOT NULL,
  prompt_version TEXT NOT NULL,
  params_json TEXT NOT NULL,
  request_json TEXT,
  response_json TEXT NOT NULL,
  valid INTEGER NOT NULL,
  created DOUBLE PRECISION NOT NULL,
  latency_ms DOUBLE PRECISION,
  tokens_in BIGINT,
  tokens_out BIGINT
)""",
    """CREATE TABLE IF NOT EXISTS judge_ledger (
  id BIGSERIAL PRIMARY KEY,
  run_id TEXT NOT NULL,
  sample_id TEXT,
  metric TEXT,
  stage TEXT,
  kind TEXT,
  repeat INTEGER,
  attempts INTEGER,
  cache_hit INTEGER NOT NULL,
  model TEXT,
  prompt_tokens BIGINT,
  completion_tokens BIGINT,
  cached_prompt_tokens BIGINT,
  cost_usd DOUBLE PRECISION,
  latency_ms DOUBLE PRECISION,
  status TEXT,
  created DOUBLE PRECISION NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS judge_cache_created ON judge_cache(created)",
    "CREATE INDEX IF NOT EXISTS judge_ledger_run ON judge_ledger(run_id)",
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)",
)

_COLUMNS = (
    "key, model, prompt_version, params_json, request_json, response_json, valid, created, "
    "latency_ms, tokens_in, tokens_out"
)
_EXPORT_BATCH = 1000


def parse_url(text: str) -> Any:
    """The SQLAlchemy URL of a ``postgresql://`` cache (parsed as the results store's are)."""
    from ragmeter.judge.cache_url import shown_cache
    from ragmeter.store.engine import normalize_url

    try:
        return normalize_url(text)
    except UsageError as exc:  # its message quotes the URL as given: password and all
        raise UsageError(
            f"cannot parse the judge cache URL {shown_cache(text)!r} ({type(exc).__name__})"
        ) from None


def _driver_text(exc: BaseException, password: str | None) -> str:
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0].strip()
    if text.startswith("connection failed: "):
        text = text[len("connection failed: ") :]
    if password:
        text = text.replace(password, "***")
    return text[:300]


def connect(url: Any, *, readonly: bool = False) -> Any:
    """An autocommit psycopg connection to ``url``; errors are one line without the password:
    a missing driver names the extra, an unreachable server fails within the store's
    ``CONNECT_TIMEOUT_S``."""
    from ragmeter.store.engine import CONNECT_TIMEOUT_S, display_url

    try:
        import psycopg
    except ModuleNotFoundError:
        raise UsageError(
            "a PostgreSQL judge cache needs the psycopg driver: pip install 'ragmeter[postgres]'"
        ) from None
    kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S}
    if readonly:
        kwargs["options"] = "-c default_transaction_read_only=on"
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        return psycopg.connect(conninfo, **kwargs)
    except psycopg.Error as exc:
        raise InputError(
            f"cannot connect to the judge cache ({_driver_text(exc, url.password)})",
            path=display_url(url),
        ) from None


class _Conn:
    """The connection as the SQLite code uses it: ``execute(sql, params)`` with ``?`` marks
    (none of the cache's statements holds a literal ``?`` or ``%``). A server that goes away
    during a run is one line naming the cache, not a driver traceback."""

    def __init__(self, conn: Any, shown: str, password: str | None) -> None:
        self.conn = conn
        self.shown = shown
        self.password = password

    def execute(self, sql: str, params: Iterable[Any] = ()) -> Any:
        import psycopg

        try:
            return self.conn.execute(sql.replace("?", "%s"), tuple(params))
        except psycopg.Error as exc:
            raise InputError(
                f"the judge cache failed ({_driver_text(exc, self.password)})", path=self.shown
            ) from None

    def close(self) -> None:
        self.conn.close()


def _schema_version(conn: Any) -> str | None:
    """The stored schema version, or None when the database has no ragmeter tables yet."""
    with conn.transaction():
        if conn.execute("SELECT to_regclass('meta')").fetchone()[0] is None:
            return None
        row = conn.execute("SELECT v FROM meta WHERE k = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


def _final_commit(conn: Any) -> None:
    try:
        from psycopg.pq import TransactionStatus

        if conn.info.transaction_status == TransactionStatus.INTRANS:
            conn.execute("COMMIT")
        conn.close()
    except Exception:  # the interpreter is exiting or the server is gone: nothing to save
        pass


class PgJudgeCache(JudgeCache):
    """The request cache in a PostgreSQL database (``JudgeCache("postgresql://...")``)."""

    _PUT_SQL = (
        f"INSERT INTO judge_cache ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET "
        + ", ".join(f"{c} = EXCLUDED.{c}" for c in _COLUMNS.split(", ")[1:])
    )
    _SET_META_SQL = (
        "INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
    )

    def __init__(self, path: str | os.PathLike[str] | None, *, store_requests: bool = True) -> None:
        from ragmeter.store.engine import display_url

        self.url = parse_url(os.fspath(path or ""))
        self.path = None  # no file: stats and messages show the URL without its password
        self._shown = display_url(self.url)
        self.store_requests = store_requests
        conn = connect(self.url)
        try:
            self._create(conn)
        except Exception as exc:
            conn.close()
            if type(exc).__module__.split(".", 1)[0] != "psycopg":
                raise
            raise InputError(
                f"not a usable ragmeter judge cache ({_driver_text(exc, self.url.password)})",
                path=self._shown,
            ) from None
        self.db: Any = _Conn(conn, self._shown, self.url.password)
        self._in_tx = False
        self._pending = 0
        self._last_commit = time.monotonic()
        self._finalizer = weakref.finalize(self, _final_commit, conn)

    def _create(self, conn: Any) -> None:
        """The tables and the schema version, once, whoever else opens the database now.

        A database that has them is only read: ``CREATE INDEX IF NOT EXISTS`` takes a lock on
        its table even when the index exists, which waits for every open write there, so
        workers opening the cache while others write to it could deadlock."""
        version = _schema_version(conn)
        if version is None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))
                for statement in _DDL:
                    conn.execute(statement)
                # first writer wins; everyone reads back what is stored
                conn.execute(
                    "INSERT INTO meta (k, v) VALUES ('schema_version', %s) "
                    "ON CONFLICT (k) DO NOTHING",
                    (SCHEMA_VERSION,),
                )
            version = _schema_version(conn)
        if version != SCHEMA_VERSION:
            conn.close()
            raise InputError(
                f"judge cache schema version {version} is not supported (expected "
                f"{SCHEMA_VERSION})",
                path=self._shown,
            )

    def shown(self) -> str | None:
        return self._shown

    def _size_bytes(self) -> int:
        row = self.db.execute(
            "SELECT COALESCE(pg_total_relation_size('judge_cache'), 0) "
            "+ COALESCE(pg_total_relation_size('judge_ledger'), 0) "
            "+ COALESCE(pg_total_relation_size('meta'), 0)"
        ).fetchone()
        return int(row[0])

    def prune(self, older_than_s: float) -> int:
        # no VACUUM: the server's autovacuum reclaims the space, and it needs no table owner
        cutoff = time.time() - older_than_s
        self._begin()
        n = self.db.execute("DELETE FROM judge_cache WHERE created < ?", (cutoff,)).rowcount
        self.commit()
        return int(n)

    def export(self) -> Iterator[dict[str, Any]]:
        """Every entry in (created, key) order, read in batches: a large cache is never held
        in memory at once (a client-side cursor would fetch all of it)."""

        self.commit()
        after: tuple[float, str] | None = None
        while True:
            where = "" if after is None else "WHERE (created, key) > (?, ?) "
            rows = self.db.execute(
                f"SELECT {_COLUMNS} FROM judge_cache {where}ORDER BY created, key "
                f"LIMIT {_EXPORT_BATCH}",
                () if after is None else after,
            ).fetchall()
            for row in rows:
                yield exported_entry(row)
            if len(rows) < _EXPORT_BATCH:
                return
            after = (rows[-1][7], rows[-1][0])


class PgCacheReader(CacheReader):
    """Read-only lookups in a PostgreSQL judge cache (``ragmeter serve --judge-cache URL``):
    one read-only session per lookup, nothing written or left open."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from ragmeter.store.engine import display_url

        self.url = parse_url(os.fspath(path))
        self.path = display_url(self.url)  # type: ignore[assignment]

    def exists(self) -> bool:
        return True  # a server: whether it answers is found out by the lookup

    def lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:

        wanted = sorted(set(keys))
        if not wanted:
            return {}
        conn = connect(self.url, readonly=True)
        try:
            rows = conn.execute(
                "SELECT key, model, prompt_version, request_json, response_json, valid, created "
                "FROM judge_cache WHERE key = ANY(%s)",
                (wanted,),
            ).fetchall()
        except Exception as exc:
            if type(exc).__module__.split(".", 1)[0] != "psycopg":
                raise
            raise InputError(
                f"cannot read the judge cache ({_driver_text(exc, self.url.password)})",
                path=str(self.path),
            ) from None
        finally:
            conn.close()
        return {row[0]: shown_entry(row) for row in rows}
