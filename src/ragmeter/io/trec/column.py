"""Id columns held outside Arrow, for inputs parsed without it.

``ragmeter trec`` on a small or medium run spends much of its time starting up, and Arrow's
import (with the modules it pulls in) is a large share of that start (docs/retrieval.md#speed).
The small-file parse (:mod:`ragmeter.io.trec.small`) keeps ids as a list of ``bytes``
(:class:`BytesColumn`); the parse of regular files (:mod:`ragmeter.io.trec.regular`) keeps them
as spans of the file's buffer (:class:`SpanColumn`). The kernels read both through
:meth:`BytesColumn.spans`, as they read an Arrow binary array's offsets and data, so the join,
ranking and measures run the one code path they run on Arrow columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

__all__ = ["BytesColumn", "SpanColumn", "is_bytes_column"]


class BytesColumn:
    """Immutable ids as ``bytes`` (one per row), with Arrow's binary layout on demand."""

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

    def spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(int64 start, int64 end, uint8 buffer): each id is ``buffer[start:end]``."""
        offs = self.offsets
        return offs[:-1], offs[1:], self.data


class SpanColumn(BytesColumn):
    """Ids as spans of one buffer (a whole file, read by :mod:`ragmeter.io.trec.regular`):
    nothing is copied until an id's bytes are asked for, and a take only takes spans.

    The buffer holds no NUL byte and extends at least 8 bytes past every span, so that a word
    read at any id's start stays inside it (the kernels read ids 8 bytes at a time).
    """

    def __init__(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.buf = buf
        self.starts = starts
        self.ends = ends

    @cached_property
    def values(self) -> list[bytes]:  # type: ignore[override]
        raw = self.buf.tobytes()
        return [raw[a:b] for a, b in zip(self.starts.tolist(), self.ends.tolist(), strict=True)]

    def __len__(self) -> int:
        return self.starts.size

    def __getitem__(self, row: int) -> bytes:
        return self.buf[self.starts[row] : self.ends[row]].tobytes()

    def take(self, rows: Iterable[int]) -> SpanColumn:
        rows = np.asarray(rows, np.int64)
        return SpanColumn(self.buf, self.starts[rows], self.ends[rows])

    def spans(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.starts, self.ends, self.buf


def is_bytes_column(col: object) -> bool:
    return isinstance(col, BytesColumn)
