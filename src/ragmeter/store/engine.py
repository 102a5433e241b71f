"""Opening a store URL: SQLite (WAL, one writer at a time) or PostgreSQL (psycopg 3).

``sqlite:///PATH`` (relative to the working directory, as with every URL), a bare file path (taken
as SQLite), or ``postgresql://``/``postgresql+psycopg://``. SQLite connections run in WAL mode
with a long busy timeout and open write transactions with ``BEGIN IMMEDIATE``, so two processes
writing at once queue up instead of failing with "database is locked" half-way through.

A store opened for reading (``readonly=True``: ``runs list``, ``report``, ``serve``...) changes
nothing: SQLite is opened with ``mode=ro`` and no journal-mode switch, and where the file or its
folder cannot be written (a read-only mount, a CD, someone else's file) with ``immutable=1``,
since SQLite cannot create the WAL index there; PostgreSQL sessions are read-only transactions.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import QueuePool

from ragmeter.errors import UsageError

__all__ = ["DEFAULT_STORE", "display_url", "make_engine", "normalize_url", "sqlite_path"]

DEFAULT_STORE = "sqlite:///.ragmeter/ragmeter.db"
BUSY_TIMEOUT_S = 600.0  # a writer storing a very large run may hold the lock for a while
CONNECT_TIMEOUT_S = 10  # an unreachable PostgreSQL host is an error after this, not a hang


def normalize_url(url: str | os.PathLike[str]) -> URL:
    """Parse a store URL; a plain path means a SQLite file, ``postgresql://`` means psycopg 3."""
    text = os.fspath(url).strip()
    if not text:
        raise UsageError("the store URL is empty (expected e.g. sqlite:///.ragmeter/ragmeter.db)")
    if "://" not in text:
        text = "sqlite:///" + text
    try:
        parsed = make_url(text)
    except ArgumentError as exc:
        raise UsageError(f"cannot parse store URL {text!r} ({exc})") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        return parsed
    if backend != "sqlite":
        raise UsageError(
            f"unsupported store backend {backend!r} (expected sqlite:///PATH or postgresql://...)"
        )
    return parsed


def display_url(url: URL | str) -> str:
    """The URL with any password masked, for messages, summaries and stored configs."""
    if isinstance(url, str):
        try:
            url = normalize_url(url)
        except UsageError:
            return re.sub(r"//([^:/@]+):[^@/]*@", r"//\1:***@", url)
    return url.render_as_string(hide_password=True)


def _sqlite_engine(url: URL) -> Engine:
    db = url.database
    if db and db != ":memory:" and not db.startswith("file:"):
        Path(db).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
        # let SQLAlchemy's begin event emit BEGIN itself (pysqlite's implicit BEGIN is DEFERRED)
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        write = conn.get_execution_options().get("ragmeter_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite store URL (``None`` for PostgreSQL, ``:memory:`` and URI forms)."""
    db = url.database if url.get_backend_name() == "sqlite" else None
    if not db or db == ":memory:" or db.startswith("file:"):
        return None
    return Path(db).expanduser()


def _writable(path: Path) -> bool:
    # access() answers EROFS on a read-only mount, which is the case that matters here
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _sqlite_reader(url: URL, pool_size: int) -> Engine:
    """A read-only engine on an existing SQLite file: ``mode=ro``, nothing switched or created."""
    path = sqlite_path(url)
    if path is None:  # :memory: or a URI the user wrote: taken as it is
        return _sqlite_engine(url)
    uri = f"file:{quote(str(path.absolute()))}?mode=ro"
    if not _writable(path):
        # SQLite cannot create the -shm index of a WAL store here, and nobody can be writing it
        uri += "&immutable=1"

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
        )
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA query_only=ON")
        return conn

    engine = create_engine(
        "sqlite://", creator=connect, poolclass=QueuePool, pool_size=pool_size, max_overflow=0
    )

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        conn.exec_driver_sql("BEGIN")  # one snapshot per transaction, as with the writer

    return engine


def make_engine(url: URL, *, readonly: bool = False, pool_size: int = 5) -> Engine:
    """A SQLAlchemy engine for a normalised store URL; ``readonly`` changes nothing in it."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_reader(url, pool_size) if readonly else _sqlite_engine(url)
    try:
        import psycopg  # noqa: F401
    except ModuleNotFoundError:
        raise UsageError(
            "a PostgreSQL store needs the psycopg driver: pip install 'ragmeter[postgres]'"
        ) from None
    connect_args: dict[str, object] = {"connect_timeout": CONNECT_TIMEOUT_S}
    if readonly:
        connect_args["options"] = "-c default_transaction_read_only=on"
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args, pool_size=pool_size)
