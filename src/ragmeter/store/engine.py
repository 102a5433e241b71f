"""Opening a store URL: SQLite (WAL, one writer at a time) or PostgreSQL (psycopg 3).

``sqlite:///PATH`` (relative to the working directory, as with every URL), a bare file path (taken
as SQLite), or ``postgresql://``/``postgresql+psycopg://``. SQLite connections run in WAL mode
with a long busy timeout and open write transactions with ``BEGIN IMMEDIATE``, so two processes
writing at once queue up instead of failing with "database is locked" half-way through.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError

from ragmeter.errors import UsageError

__all__ = ["DEFAULT_STORE", "display_url", "make_engine", "normalize_url"]

DEFAULT_STORE = "sqlite:///.ragmeter/ragmeter.db"
BUSY_TIMEOUT_S = 600.0  # a writer storing a very large run may hold the lock for a while


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


def make_engine(url: URL) -> Engine:
    """A SQLAlchemy engine for a normalised store URL."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    try:
        import psycopg  # noqa: F401
    except ModuleNotFoundError:
        raise UsageError(
            "a PostgreSQL store needs the psycopg driver: pip install 'ragmeter[postgres]'"
        ) from None
    return create_engine(url, pool_pre_ping=True)
