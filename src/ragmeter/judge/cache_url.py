"""How a judge cache is named: a SQLite file path, ``sqlite:///PATH``, or a ``postgresql://`` URL
(docs/judge.md, "The cache on PostgreSQL"); and how it is shown, never with a password."""

from __future__ import annotations

import os
import re

from ragmeter.errors import UsageError

__all__ = ["is_cache_url", "shown_cache"]

_SCHEME = re.compile(r"\A([A-Za-z][A-Za-z0-9+.-]*)://")


def is_cache_url(target: object) -> bool:
    """True when ``target`` names a PostgreSQL cache (``postgresql://``, ``postgresql+psycopg://``)
    rather than a SQLite file; any other ``scheme://`` is refused with one line.

    >>> is_cache_url("postgresql://cache-host/ragmeter"), is_cache_url(".ragmeter/c.sqlite")
    (True, False)
    """
    if not isinstance(target, str):
        return False
    m = _SCHEME.match(target.strip())
    if m is None:
        return False
    scheme = m.group(1).lower()
    if scheme == "postgresql" or scheme.startswith("postgresql+"):
        return True
    if scheme == "sqlite":
        return False
    raise UsageError(
        f"unsupported judge cache {shown_cache(target)!r} (expected a file path or "
        "postgresql://HOST/DATABASE)"
    )


def _sqlite_file(target: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """A ``sqlite:///PATH`` URL is the file PATH, as with the results store."""
    if isinstance(target, str) and target.strip().lower().startswith("sqlite:///"):
        return target.strip()[len("sqlite:///") :]
    return target


def shown_cache(target: str | os.PathLike[str] | None) -> str:
    """The cache as messages, summaries and metadata show it: a URL without its password."""
    if target is None:
        return ":memory:"
    text = os.fspath(target)
    if _SCHEME.match(text.strip()):
        from ragmeter.store.engine import display_url

        return display_url(text.strip())
    return text
