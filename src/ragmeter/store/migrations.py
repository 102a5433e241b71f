"""Schema versions and migrations of the results store.

The version lives in ``ragmeter_meta`` (``schema_version``). A new store is created at the latest
version; an older one is upgraded by applying :data:`MIGRATIONS` in order, each in the same
transaction as the version bump, so an interrupted upgrade leaves the old version intact. A store
written by a newer ragmeter is refused with a clear error instead of being misread. Concurrent
openers serialise on the write lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), so
two processes creating or upgrading one store at once do not trip over each other.

Only a database that is empty or already a ragmeter store is ever given the schema: an
application's database, the judge cache or any other file with tables of its own is refused,
and :func:`check_schema` (the commands that only read) creates and upgrades nothing at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection, Engine

from ragmeter._version import __version__
from ragmeter.errors import InputError, UsageError
from ragmeter.store import schema

__all__ = ["MIGRATIONS", "Migration", "check_schema", "ensure_schema", "read_version"]

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


NOT_A_STORE = "is not a ragmeter results store"


def read_version(conn: Connection, where: str = "the store") -> int | None:
    """The store's schema version, or ``None`` when the database has no ``ragmeter_meta``."""
    if not inspect(conn).has_table(schema.meta.name):
        return None
    row = conn.execute(
        select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")
    ).first()
    if row is None:
        raise UsageError(
            f"the store {where} is damaged: ragmeter_meta has no schema_version "
            "(expected a whole number)"
        )
    try:
        version = int(str(row[0]).strip())
    except ValueError:
        version = 0
    if version < 1:
        raise UsageError(
            f"the store {where} is damaged: schema_version {str(row[0])[:40]!r} in "
            "ragmeter_meta is not a schema version (expected a whole number from 1)"
        )
    return version


def _foreign(conn: Connection, where: str) -> UsageError | None:
    """The error for a database that holds tables but is not a ragmeter store, else None."""
    names = sorted(inspect(conn).get_table_names())
    if not names:
        return None
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return UsageError(
        f"the store {where} {NOT_A_STORE} (it has tables {shown} but no ragmeter_meta; "
        "expected a ragmeter store or an empty database)"
    )


def refuse_foreign(conn: Connection, where: str) -> None:
    """Raise when a database without ragmeter_meta holds tables of another application."""
    foreign = _foreign(conn, where)
    if foreign is not None:
        raise foreign


def refuse_newer(version: int, where: str) -> None:
    """Raise when the store was written by a newer ragmeter."""
    _check_not_newer(version, where)


def check_schema(conn: Connection, where: str) -> int:
    """The version of an existing store, for reading: nothing is created or upgraded.

    An older version is read as it is (every migration so far only adds an index); an empty
    database or one of another application is an error.
    """
    version = read_version(conn, where)
    if version is None:
        raise _foreign(conn, where) or UsageError(
            f"the store {where} {NOT_A_STORE} (the database is empty; ragmeter run creates "
            "the store)"
        )
    _check_not_newer(version, where)
    missing = [t for t in schema.metadata.sorted_tables if not inspect(conn).has_table(t.name)]
    if missing:
        raise UsageError(
            f"the store {where} is damaged: table {missing[0].name} is missing "
            f"(schema version {version} has {len(schema.metadata.tables)} tables)"
        )
    return version


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
        current = read_version(conn, where)
        conn.rollback()
    if current == schema.SCHEMA_VERSION:
        return current
    if current is not None:
        _check_not_newer(current, where)
    with engine.connect().execution_options(ragmeter_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_ADVISORY_LOCK})")
        current = read_version(conn, where)  # another process may have got there first
        if current is None:
            foreign = _foreign(conn, where)
            if foreign is not None:
                raise foreign
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
