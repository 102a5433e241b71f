"""Vectorised sign-flip (swap) patterns: the engine of the randomization tests.

A pattern assigns one bit to each of n paired units (queries or documents), in the canonical
order of the units: bit 1 keeps the pair as observed, bit 0 swaps A and B. Patterns are either
all 2ⁿ bit strings (exact enumeration; pattern p gives unit i the bit (p >> i) & 1) or sampled:
resample r takes ⌈n/64⌉ raw 64-bit words from ``default_rng(seed)``'s bit generator and unit i
gets bit i of their little-endian bytes. The stream is consumed row by row, so results do not
depend on how the rows are chunked, and every test with the same seed and n sees the same
patterns (which is what lets :func:`ragmeter.stats.compare` test all pairs at once and still give
exactly what one :func:`ragmeter.stats.randomization_test` per pair gives).

The kernel returns, per pattern and per column c, the *kept sum* S = Σ_{bit=1} x_ic. When every
x_ic is an integer and Σ|x_ic| ≤ 2⁵³, every partial sum is an exactly representable integer, so
the result is exact whatever the summation order: then a BLAS product is used for many columns.
Otherwise sums go through 256-entry lookup tables per byte of units, in a fixed order, which is
deterministic on every machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_EXACT_N", "Patterns", "exact_integer_columns", "iter_kept_sums", "unpack_bits"]

MAX_EXACT_N = 20
"""Largest n for which ``exact=True`` may enumerate all 2ⁿ patterns."""

_TWO_53 = float(2**53)
_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)  # (256, 8)
_MATMUL_MIN_COLUMNS = 4  # below this, per-column lookup tables are faster than a product


@dataclass(frozen=True)
class Patterns:
    """The sign patterns of one test: ``count`` rows of n bits, exact or sampled.

    ``seed`` is recorded even when enumeration makes it irrelevant (results always carry it).
    """

    n: int
    exact: bool
    count: int
    seed: int | None = None

    @classmethod
    def choose(cls, n: int, *, n_resamples: int, exact: bool | str, seed: int) -> Patterns:
        """Exact enumeration or sampling, by the rule of docs/stats.md."""
        if n < 1:
            raise ValueError("no paired units to resample")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed={seed!r} (expected a non-negative integer, e.g. 42)")
        if exact == "auto":
            use_exact = n < 63 and 2**n <= n_resamples
        elif exact is True:
            if n > MAX_EXACT_N:
                raise ValueError(
                    f"exact=True enumerates 2^n patterns and allows n <= {MAX_EXACT_N}, "
                    f"not n = {n} (use exact='auto' or exact=False to sample)"
                )
            use_exact = True
        elif exact is False:
            use_exact = False
        else:
            raise ValueError(f"exact={exact!r} (expected 'auto', True or False)")
        if use_exact:
            return cls(n, True, 2**n, int(seed))
        return cls(n, False, int(n_resamples), int(seed))

    @property
    def nbytes(self) -> int:
        return (self.n + 7) // 8

    def iter_bytes(
        self, chunk_rows: int, rows: tuple[int, int] | None = None
    ) -> Iterator[np.ndarray]:
        """Yield the patterns as uint8 arrays of shape (rows, nbytes), in order.

        ``rows=(start, stop)`` yields only patterns ``start`` to ``stop - 1``, bit for bit as
        the whole sequence has them: a sampled stream is advanced past the ``start`` rows it
        skips (``bit_generator.advance``), so a test's resamples can be counted in parts.
        """
        nbytes = self.nbytes
        first, stop = (0, self.count) if rows is None else rows
        if not 0 <= first <= stop <= self.count:
            raise ValueError(f"rows {first}..{stop} outside 0..{self.count}")
        if self.exact:
            shifts = (8 * np.arange(nbytes, dtype=np.uint64))[None, :]
            for start in range(first, stop, chunk_rows):
                p = np.arange(start, min(start + chunk_rows, stop), dtype=np.uint64)
                yield ((p[:, None] >> shifts) & np.uint64(255)).astype(np.uint8)
            return
        words = (self.n + 63) // 64
        bitgen = np.random.default_rng(self.seed).bit_generator
        if first:
            bitgen.advance(first * words)  # one raw 64-bit word per step of the stream
        for start in range(first, stop, chunk_rows):
            count = min(chunk_rows, stop - start)
            raw = np.ascontiguousarray(bitgen.random_raw(count * words), dtype="<u8")
            yield raw.view(np.uint8).reshape(count, words * 8)[:, :nbytes]


def unpack_bits(byte_rows: np.ndarray, n: int) -> np.ndarray:
    """Bytes (rows, nbytes) → booleans (rows, n): True keeps the pair, False swaps it."""
    return np.unpackbits(byte_rows, axis=1, bitorder="little", count=n).astype(bool)


def exact_integer_columns(x: np.ndarray) -> bool:
    """True when every kept sum of ``x``'s columns is exact in float64 in any order."""
    if x.size == 0:
        return True
    if not np.all(np.isfinite(x)) or not np.array_equal(x, np.rint(x)):
        return False
    return bool(np.abs(x).sum(axis=0).max() <= _TWO_53)


def _tables(x: np.ndarray, nbytes: int) -> np.ndarray:
    """Per column, per byte of units, the kept sum of each of the 256 byte values.

    Shape (P, nbytes * 256); built by adding the 8 bit positions in a fixed order.
    """
    n, p = x.shape
    pad = np.zeros((nbytes * 8, p))
    pad[:n] = x
    d8 = pad.reshape(nbytes, 8, p)
    table = np.zeros((p, nbytes, 256))
    for bit in range(8):
        table += d8[:, bit, :].T[:, :, None] * _BITS[:, bit][None, None, :]
    return table.reshape(p, nbytes * 256)


def iter_kept_sums(
    x: np.ndarray,
    patterns: Patterns,
    *,
    exact_integers: bool | None = None,
    rows: tuple[int, int] | None = None,
) -> Iterator[np.ndarray]:
    """Yield, chunk by chunk, the kept sums Σ_{bit=1} x[i, c] of every pattern: (rows, P).

    ``x`` has shape (n, P), one column per paired comparison, rows in canonical unit order.
    ``rows=(start, stop)`` covers only those patterns. A pattern's sums do not depend on the
    chunk it is in (exact integers, or per-row table sums in a fixed order), so counts over
    parts of the rows add up to the counts over all of them.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    n, p = x.shape
    if n != patterns.n:
        raise ValueError(f"{n} units for patterns of {patterns.n}")
    if exact_integers is None:
        exact_integers = exact_integer_columns(x)
    nbytes = patterns.nbytes
    if exact_integers and p >= _MATMUL_MIN_COLUMNS:
        # about 8 MiB of float64 patterns per product: a chunk that stays in the cache is
        # 17-39% cheaper than one of 32 MiB (n 6,980 and 2,000, benchmarks/README.md), also
        # with two processes sharing the cache; exact integer sums do not depend on the chunk
        chunk = max(64, min(4096, (1 << 20) // max(n, 1)))
        for byte_rows in patterns.iter_bytes(chunk, rows):
            flips = np.unpackbits(byte_rows, axis=1, bitorder="little", count=n)
            yield flips.astype(np.float64) @ x
        return
    tables = _tables(x, nbytes)
    offsets = (np.arange(nbytes, dtype=np.intp) * 256)[None, :]
    chunk = max(64, min(8192, (1 << 21) // max(nbytes, 1)))
    for byte_rows in patterns.iter_bytes(chunk, rows):
        flat = byte_rows.astype(np.intp) + offsets
        out = np.empty((len(byte_rows), p))
        for c in range(p):
            out[:, c] = tables[c][flat].sum(axis=1)
        yield out
