"""Schema versions and migrations of the results store.

The version lives in ``ragmeter_meta`` (``schema_version``). A new store is created at the latest
version; an older one is upgraded by applying :data:`MIGRATIONS` in order, each in the same
transaction as the version bump, so an interrupted upgrade leaves the old version intact. A store
written by a newer ragmeter is refused with a clear error instead of being misread. Concurrent
openers serialise on the write lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so
two processes creating or upgrading one store at once do not trip over each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection, Engine

from ragmeter._version import __version__
from ragmeter.errors import InputError
from ragmeter.store import schema

__all__ = ["MIGRATIONS", "Migration", "ensure_schema", "read_version"]

_ADVISORY_LOCK = 0x7261676D  # "ragm": serialises schema changes on PostgreSQL


@dataclass(frozen=True)
class Migration:
    """Upgrade a store from ``version - 1`` to ``version``."""

    version: int
    summary: str
    apply: Callable[[Connection], None]


def _index_samples_by_value(conn: Connection) -> None:
    # plain DDL, not the Index of schema.py: a migration stays what it was when it shipped
    conn.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_samples_value "
        "ON samples (run_key, task, metric, value, sample_id)"
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        2,
        "index samples by (run, task, metric, value) for the report and dashboard",
        _index_samples_by_value,
    ),
)
"""Upgrades, oldest first. Version 1 is the initial schema; a new store is created at the
latest version directly."""


def read_version(conn: Connection) -> int | None:
    """The store's schema version, or ``None`` for an empty database."""
    if not inspect(conn).has_table(schema.meta.name):
        return None
    row = conn.execute(
        select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")
    ).first()
    return int(row[0]) if row else None


def _set_version(conn: Connection, version: int, *, insert: bool) -> None:
    table = schema.meta
    if insert:
        conn.execute(table.insert().values(key="schema_version", value=str(version)))
    else:
        conn.execute(
            table.update().where(table.c.key == "schema_version").values(value=str(version))
        )


def _check_not_newer(version: int, where: str) -> None:
    if version > schema.SCHEMA_VERSION:
        raise InputError(
            f"the store has schema version {version}, written by a newer ragmeter; ragmeter "
            f"{__version__} reads versions up to {schema.SCHEMA_VERSION} (upgrade ragmeter)",
            path=where,
        )


def ensure_schema(engine: Engine, where: str) -> int:
    """Create or upgrade the schema; return the version. ``where`` names the store in errors."""
    with engine.connect() as conn:
        current = read_version(conn)
        conn.rollback()
    if current == schema.SCHEMA_VERSION:
        return current
    if current is not None:
        _check_not_newer(current, where)
    with engine.connect().execution_options(ragmeter_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK})")
        current = read_version(conn)  # another process may have got there first
        if current is None:
            if inspect(conn).has_table(schema.runs.name):
                raise InputError(
                    "this database has a 'runs' table but no ragmeter schema version "
                    "(expected a ragmeter results store or an empty database)",
                    path=where,
                )
            schema.metadata.create_all(conn)
            _set_version(conn, schema.SCHEMA_VERSION, insert=True)
            return schema.SCHEMA_VERSION
        _check_not_newer(current, where)
        for migration in MIGRATIONS:
            if current < migration.version <= schema.SCHEMA_VERSION:
                migration.apply(conn)
                _set_version(conn, migration.version, insert=False)
                current = migration.version
        if current != schema.SCHEMA_VERSION:
            raise InputError(
                f"no migration from schema version {current} to {schema.SCHEMA_VERSION}",
                path=where,
            )
        return current
