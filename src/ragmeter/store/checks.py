"""Looking at a store URL before opening it, changing nothing (used by :class:`Store` and
``ragmeter run``): a folder is not a store, a store opened for reading must exist, and a store
about to be written must be reachable, readable, empty or a ragmeter store this version writes,
and (SQLite) writable by this user."""

from __future__ import annotations

import os
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.store.engine import (
    DEFAULT_STORE,
    display_url,
    make_engine,
    normalize_url,
    sqlite_path,
)
from ragmeter.store.errors import database_errors

__all__ = ["check_sqlite_file", "probe_store"]


def check_sqlite_file(url: Any, where: str, *, must_exist: bool) -> None:
    """A SQLite store is a file, never a folder; one opened for reading must exist already."""
    path = sqlite_path(url)
    if path is None:
        return
    if path.is_dir():
        raise UsageError(
            f"the store {where} is a folder (expected a SQLite file such as .ragmeter/ragmeter.db)"
        )
    if must_exist and not path.exists():
        raise UsageError(
            f"no results store at {path} (ragmeter run writes one; or pass --store URL)"
        )


def probe_store(url: str | os.PathLike[str] | None = None) -> None:
    """Check, changing nothing, that a store can be written at ``url`` before hours of work go
    into a run: an existing database must be reachable, readable and empty or a ragmeter store
    this version can write; a SQLite file that does not exist yet is fine (it is created)."""
    from ragmeter.store.migrations import read_version, refuse_foreign, refuse_newer

    parsed = normalize_url(url if url is not None else DEFAULT_STORE)
    where = display_url(parsed)
    check_sqlite_file(parsed, where, must_exist=False)
    path = sqlite_path(parsed)
    if path is not None and not path.exists():
        return
    if path is not None and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        raise UsageError(
            f"the store {where} is read-only (this user cannot write the file or its folder); "
            "nothing was written (--store picks another store, --no-store writes none)"
        )
    with database_errors(where):
        engine = make_engine(parsed, readonly=True, pool_size=1)
        try:
            with engine.connect() as conn:
                version = read_version(conn, where)
                if version is None:
                    refuse_foreign(conn, where)
                else:
                    refuse_newer(version, where)
        finally:
            engine.dispose()
