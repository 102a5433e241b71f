"""Opening a judge cache by its path or URL: a SQLite file, or a ``postgresql://`` URL.

The two backends are separate classes with one interface (docs/judge.md, "The cache on
PostgreSQL"); this module is the one place that chooses between them, so that neither
backend's module imports the other.
"""

from __future__ import annotations

import os

from ragmeter.judge.cache import JudgeCache
from ragmeter.judge.cache_reader import CacheReader
from ragmeter.judge.cache_url import is_cache_url

__all__ = ["open_cache", "open_reader"]


def open_cache(target: str | os.PathLike[str] | None, *, store_requests: bool = True) -> JudgeCache:
    """The judge cache at ``target`` (a SQLite file, a ``postgresql://`` URL, or ``None`` for
    one kept in memory)."""
    if is_cache_url(target):
        from ragmeter.judge.cache_pg import PgJudgeCache

        return PgJudgeCache(target, store_requests=store_requests)
    return JudgeCache(target, store_requests=store_requests)


def open_reader(target: str | os.PathLike[str]) -> CacheReader:
    """Read-only lookups in the judge cache at ``target`` (a SQLite file or a URL)."""
    if is_cache_url(target):
        from ragmeter.judge.cache_pg import PgCacheReader

        return PgCacheReader(target)
    return CacheReader(target)
