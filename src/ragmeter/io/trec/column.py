"""An id column held as Python bytes, for inputs small enough to skip Arrow altogether.

``ragmeter trec`` on a small run spends most of its time starting up, and Arrow's import (with
the modules it pulls in) is a third of that start (docs/retrieval.md#speed). The small-file
parse (:mod:`ragmeter.io.trec.small`) therefore keeps ids as a list of ``bytes``; the kernels
read the same contiguous layout Arrow's binary arrays have (``offsets`` and ``data``) from it,
so the join, ranking and measures run the one code path they run on Arrow columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["BytesColumn", "is_bytes_column"]


class BytesColumn:
    """Immutable ids as ``bytes`` (one per row), with Arrow's binary layout on demand."""

    __slots__ = ("__dict__", "values")

    def __init__(self, values: Sequence[bytes]) -> None:
        self.values: list[bytes] = list(values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, row: int) -> bytes:
        return self.values[row]

    def __iter__(self) -> Any:
        return iter(self.values)

    @cached_property
    def offsets(self) -> np.ndarray:
        """int64 start of each value in :attr:`data`, and the end."""
        lens = np.fromiter(map(len, self.values), dtype=np.int64, count=len(self.values))
        out = np.zeros(lens.size + 1, dtype=np.int64)
        np.cumsum(lens, out=out[1:])
        return out

    @cached_property
    def data(self) -> np.ndarray:
        """Every value's bytes, back to back (uint8)."""
        return np.frombuffer(b"".join(self.values), dtype=np.uint8)

    def take(self, rows: Iterable[int]) -> BytesColumn:
        return BytesColumn(list(map(self.values.__getitem__, np.asarray(rows, np.int64).tolist())))

    def to_pylist(self) -> list[bytes]:
        return list(self.values)


def is_bytes_column(col: object) -> bool:
    return isinstance(col, BytesColumn)
