"""numpy ↔ Arrow bridges that never import pandas.

pyarrow loads pandas (when installed) behind ``pa.array``, ``pa.scalar`` and
``Array.to_numpy``, which costs ~0.2 s; ``ragmeter trec`` keeps a lean start (see
benchmarks/README.md), so its hot path goes through buffers instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = [
    "binaries",
    "call",
    "from_numpy",
    "lazy_compute",
    "release_unused",
    "repeat_string",
    "strings",
    "to_numpy",
]

_NUMPY = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}
_ARROW = {np.dtype(v): k for k, v in _NUMPY.items()}


def _valid(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    mask = np.unpackbits(bits, bitorder="little")
    return mask[arr.offset : arr.offset + len(arr)].astype(bool)


def _one(arr: pa.Array, fill: float | int | None) -> np.ndarray:
    typ = arr.type
    if pa.types.is_boolean(typ):
        data = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        out = np.unpackbits(data, bitorder="little")[arr.offset : arr.offset + len(arr)].astype(
            bool
        )
    elif pa.types.is_dictionary(typ):
        return _one(arr.indices, fill)
    else:
        dtype = _NUMPY.get(typ)
        if dtype is None:
            raise TypeError(f"no numpy view for Arrow type {typ}")
        buf = arr.buffers()[1]
        out = (
            np.frombuffer(buf, dtype=dtype)[arr.offset : arr.offset + len(arr)]
            if buf is not None
            else np.zeros(len(arr), dtype=dtype)
        )
    valid = _valid(arr)
    if valid is not None:
        if fill is None:
            raise ValueError("the array has nulls and no fill value was given")
        out = np.where(valid, out, fill)
    return out


def to_numpy(arr: pa.Array | pa.ChunkedArray, *, fill: float | int | None = None) -> np.ndarray:
    """A numeric or boolean (chunked) Arrow array as numpy; nulls become ``fill``."""
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return _one(arr.chunk(0), fill)
        if arr.num_chunks == 0:
            dtype = _NUMPY.get(arr.type, np.bool_ if pa.types.is_boolean(arr.type) else np.int64)
            return np.zeros(0, dtype=dtype)
        return np.concatenate([_one(c, fill) for c in arr.chunks])
    return _one(arr, fill)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numeric numpy array as an Arrow array (no copy when contiguous)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), values.size, [None, pa.py_buffer(packed)])
    typ = _ARROW.get(values.dtype)
    if typ is None:
        raise TypeError(f"no Arrow type for numpy dtype {values.dtype}")
    return pa.Array.from_buffers(typ, values.size, [None, pa.py_buffer(values)])


def _varlen(values: Sequence[bytes], typ: pa.DataType) -> pa.Array:
    lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    large = offsets[-1] >= 2**31
    if large:
        typ = pa.large_string() if pa.types.is_string(typ) else pa.large_binary()
    else:
        offsets = offsets.astype(np.int32)
    data = b"".join(values)
    return pa.Array.from_buffers(
        typ, len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def repeat_string(value: str, count: int) -> pa.Array:
    """``count`` copies of one string as an Arrow string array (no Python list)."""
    raw = value.encode("utf-8")
    offsets = (np.arange(count + 1, dtype=np.int64) * len(raw)).astype(np.int32)
    return pa.Array.from_buffers(
        pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(raw * count)]
    )


def strings(values: Sequence[str]) -> pa.Array:
    """A list of str as an Arrow string array."""
    return _varlen([v.encode("utf-8") for v in values], pa.string())


def binaries(values: Sequence[bytes]) -> pa.Array:
    """A list of bytes as an Arrow binary array."""
    return _varlen(list(values), pa.binary())


def call(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow compute function ``name`` on ``args``, without importing ``pyarrow.compute``.

    ``pyarrow.compute`` builds a Python wrapper with a docstring for every kernel when it is
    imported (~20 ms, a tenth of ``ragmeter trec``'s start); ``pyarrow._compute`` holds the
    functions themselves. ``options`` are ``pyarrow._compute`` option objects.
    """
    from pyarrow._compute import call_function

    return call_function(name, list(args), options)


class _LazyCompute:
    """``pyarrow.compute``, imported on first use (for paths off ``ragmeter trec``'s hot path)."""

    def __getattr__(self, attr: str) -> Any:
        import pyarrow.compute

        return getattr(pyarrow.compute, attr)


lazy_compute: Any = _LazyCompute()


def release_unused() -> None:
    """Hand the memory Arrow's pool holds unused back to the OS (after a parse or a task it
    sets the process's peak otherwise), unless the process keeps it for its next task:
    ``RAGMETER_KEEP_FREED_MEMORY`` is set on the workers of ``--workers N``
    (docs/scaleout.md, "The LocalCluster's settings")."""
    if not os.environ.get("RAGMETER_KEEP_FREED_MEMORY"):
        pa.default_memory_pool().release_unused()
