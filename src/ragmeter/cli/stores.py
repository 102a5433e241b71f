"""The results store, as the commands that read it open it (``runs``, ``gate``, ``report``...).

Reading commands open the store read-only: they never create a store, add tables to a database
that is not one, switch SQLite's journal mode or run a migration (docs/runner.md, "The results
store"). Every store failure inside a command becomes one line with the command's prefix.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ragmeter.errors import UsageError

if TYPE_CHECKING:  # the store pulls in SQLAlchemy: imported when a command opens one
    from ragmeter.store import Store

STORE_HELP = "Results store URL (sqlite:///PATH or postgresql://...); default sqlite:///.ragmeter/ragmeter.db."


@contextmanager
def command_errors(command: str, store_url: str | None = None) -> Iterator[None]:
    """Give every :class:`UsageError` raised inside the block the ``ragmeter COMMAND:`` prefix.

    The store and its URL parser are libraries and do not know which command called them, so
    their errors carry no command; this is the one place a command adds it
    (docs/conventions.md, "Errors and exit codes": where no file or line applies, an error
    reads ``ragmeter COMMAND: ...``). With
    ``store_url``, a database error inside the block (a store damaged or unreachable after it
    was opened) is reported the same way instead of as a traceback.
    """
    from contextlib import nullcontext

    try:
        if store_url is None:
            guard = nullcontext()
        else:
            from ragmeter.store.errors import database_errors

            guard = database_errors(store_url)
        with guard:
            yield
    except UsageError as exc:
        if exc.command is not None:
            raise
        raise UsageError(exc.message, command=command) from None


@contextmanager
def stored(url: str | None, command: str, *, write: bool = False) -> Iterator[Store]:
    """An existing store, open for the block (read-only unless ``write``), whose errors carry
    the command's prefix."""
    handle = open_existing_store(url, command, write=write)
    with command_errors(command, handle.url), handle:
        yield handle


def open_existing_store(
    url: str | None, command: str, *, write: bool = False, pool_size: int = 5
) -> Store:
    """Open an existing store (read-only unless ``write``); a SQLite file that does not exist
    is an error, never created."""
    with command_errors(command):
        from ragmeter.store import DEFAULT_STORE, Store, normalize_url

        parsed = normalize_url(url if url is not None else DEFAULT_STORE)
        if write:
            from ragmeter.store.engine import sqlite_path

            path = sqlite_path(parsed)
            if path is not None and not path.exists():
                raise UsageError(
                    f"no results store at {path} (ragmeter run writes one; or pass --store URL)"
                )
            return Store(parsed.render_as_string(hide_password=False))
        return Store(
            parsed.render_as_string(hide_password=False), readonly=True, pool_size=pool_size
        )
