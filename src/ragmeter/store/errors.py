"""Database failures as one line naming the store and the cause (``docs/runner.md``, "Write
failures").

SQLAlchemy, sqlite3 and psycopg report a read-only file, a full disk, a missing privilege or an
unreachable server as exceptions with driver text, SQL and a link to SQLAlchemy's docs. The
commands print one line instead: which store, what went wrong in words a user can act on, and,
for a write, that nothing was written (every write is one transaction, rolled back on error).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError

from ragmeter.errors import UsageError

__all__ = ["database_errors", "describe", "is_database_error"]

# driver text → what it means for a user (the driver's words are kept after a colon)
_SQLITE_CAUSES = (
    (
        "file is not a database",
        "is not a ragmeter results store (not a SQLite file: file is not a database)",
    ),
    ("database disk image is malformed", "is damaged (database disk image is malformed)"),
    ("attempt to write a readonly database", "is read-only"),
    ("database or disk is full", "the disk is full"),
    ("disk i/o error", "disk I/O error"),
    ("unable to open database file", "cannot be opened (unable to open database file)"),
    ("readonly database", "is read-only"),
)


def is_database_error(exc: BaseException) -> bool:
    """True for an error raised by SQLAlchemy or a database driver (sqlite3, psycopg)."""
    if isinstance(exc, (SQLAlchemyError, sqlite3.Error)):
        return True
    return type(exc).__module__.split(".", 1)[0] == "psycopg"


def _driver_text(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip() or type(orig).__name__
    # psycopg adds the server's DETAIL/HINT lines, SQLAlchemy the SQL and a docs link
    first = text.splitlines()[0].strip()
    for prefix in ("connection failed: ", "(psycopg.OperationalError) "):
        if first.startswith(prefix):
            first = first[len(prefix) :]
    return first[:300]


def describe(exc: BaseException, where: str, *, writing: bool) -> str:
    """The one-line message for a database error on the store ``where``."""
    text = _driver_text(exc)
    low = text.lower()
    if isinstance(exc, OSError) and not is_database_error(exc):
        cause = exc.strerror or text
        target = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        what = "cannot write to" if writing else "cannot read"
        return f"{what} the store {where}: {cause}{target}"
    if (
        (
            "connection" in low
            and any(
                k in low
                for k in ("refused", "timeout", "timed out", "could not", "failed", "no route")
            )
        )
        or "could not translate host name" in low
        or "name or service not known" in low
    ):
        return f"cannot connect to the store {where} ({text})"
    for needle, meaning in _SQLITE_CAUSES:
        if needle in low:
            sep = " " if meaning.startswith(("is ", "cannot ")) else ": "
            message = f"the store {where}{sep}{meaning}"
            if needle not in meaning.lower():
                message += f" ({text})"
            if writing and "not a ragmeter" not in meaning:
                message += "; nothing was written"
            return message
    if "permission denied" in low or "must be owner" in low or "read-only transaction" in low:
        what = "cannot write to" if writing else "cannot read"
        tail = "; nothing was written" if writing else ""
        return f"{what} the store {where} ({text}){tail}"
    if writing:
        return f"cannot write to the store {where} ({text}); nothing was written"
    return f"cannot read the store {where} ({text})"


@contextmanager
def database_errors(where: str, *, writing: bool = False) -> Iterator[None]:
    """Turn database errors raised inside the block into one-line :class:`UsageError`\\ s.

    The transaction the error interrupted has already been rolled back by the ``with
    conn.begin()`` that opened it; this only rewords the failure.
    """
    try:
        yield
    except UsageError:
        raise
    except Exception as exc:
        if not (is_database_error(exc) or (writing and isinstance(exc, OSError))):
            raise
        raise UsageError(describe(exc, where, writing=writing)) from None
