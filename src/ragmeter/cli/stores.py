"""The results store, as the commands that read it open it (``runs``, ``gate``, ``report``...)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import UsageError

if TYPE_CHECKING:  # the store pulls in SQLAlchemy: imported when a command opens one
    from ragmeter.store import Store

STORE_HELP = "Results store URL (sqlite:///PATH or postgresql://...); default sqlite:///.ragmeter/ragmeter.db."


@contextmanager
def command_errors(command: str) -> Iterator[None]:
    """Give every :class:`UsageError` raised inside the block the ``ragmeter COMMAND:`` prefix.

    The store and its URL parser are libraries and do not know which command called them, so
    their errors carry no command; this is the one place a command adds it (DESIGN.md, "Command
    line": where no file or line applies, an error reads ``ragmeter COMMAND: ...``).
    """
    try:
        yield
    except UsageError as exc:
        if exc.command is not None:
            raise
        raise UsageError(exc.message, command=command) from None


@contextmanager
def stored(url: str | None, command: str) -> Iterator[Store]:
    """An existing store, open for the block, whose errors carry the command's prefix."""
    with command_errors(command), open_existing_store(url, command) as handle:
        yield handle


def open_existing_store(url: str | None, command: str) -> Store:
    """Open a store for reading; a SQLite file that does not exist is an error, not created."""
    with command_errors(command):
        return _open_existing_store(url, command)


def _open_existing_store(url: str | None, command: str) -> Store:
    from ragmeter.store import DEFAULT_STORE, Store, normalize_url

    parsed = normalize_url(url if url is not None else DEFAULT_STORE)
    db = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if (
        db
        and db != ":memory:"
        and not db.startswith("file:")
        and not Path(db).expanduser().exists()
    ):
        raise UsageError(
            f"no results store at {db} (ragmeter run writes one; or pass --store URL)",
            command=command,
        )
    return Store(parsed.render_as_string(hide_password=False))
