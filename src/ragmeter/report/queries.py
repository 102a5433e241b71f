"""Deprecated: the store's read queries moved to :mod:`ragmeter.store.read`, which owns every
query over the store schema. This name keeps old imports working."""

from __future__ import annotations

from typing import Any

from ragmeter.store import read as _read
from ragmeter.store.read import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Every other name of :mod:`ragmeter.store.read` (``SORTS``, ``list_runs``...)."""
    return getattr(_read, name)
