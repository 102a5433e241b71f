"""The results store, as the commands that read it open it (``runs``, ``gate``, ``report``...)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store pulls in SQLAlchemy: imported when a command opens one
    from ragmeter.store import Store

STORE_HELP = "Results store URL (sqlite:///PATH or postgresql://...); default sqlite:///.ragmeter/ragmeter.db."


def open_existing_store(url: str | None, command: str) -> Store:
    """Open a store for reading; a SQLite file that does not exist is an error, not created."""
    from ragmeter.errors import UsageError
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
