"""Sorts of integer codes that give exactly numpy's stable results, faster.

numpy's default sort of an int64 array runs a vectorised (SIMD) quicksort, several times faster
than its stable argsort (a merge or radix sort of indices) and than ``np.unique`` with first
indices (which argsorts stably). A stable order of small non-negative keys is the plain sort of
``key << bits | row``: equal keys then come in row order, which is what stability means. A first
index per distinct value is the smallest row of its group, whatever order an unstable argsort
left the group in.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sort_with_rows", "stable_argsort", "unique_first_inverse"]


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of an integer array, as int64."""
    n = keys.size
    if n < 2:
        return np.argsort(keys, kind="stable").astype(np.int64)
    if not (keys[1:] < keys[:-1]).any():  # already in order (a run written by rank)
        return np.arange(n, dtype=np.int64)
    low, high = int(keys.min()), int(keys.max())
    row_bits = (n - 1).bit_length()
    if (high - low).bit_length() + row_bits > 63:
        return np.argsort(keys, kind="stable").astype(np.int64)
    packed = keys.astype(np.int64)
    if low:
        packed -= low
    packed <<= row_bits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    packed &= (1 << row_bits) - 1
    return packed


def unique_first_inverse(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(codes, return_index=True, return_inverse=True)`` of a 1-D array: the sorted
    distinct values, the first row of each, and each row's index among them (int64)."""
    n = codes.size
    if n == 0:
        return codes[:0].copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    heads = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if n > 16 and heads.size * 4 < n:
        # grouped rows (the qids of a file sorted by query): the distinct values of the groups'
        # first rows, each group's rows then taking its value's index
        heads = np.concatenate(([0], heads))
        values, first, inverse = unique_first_inverse(codes[heads])
        lengths = np.diff(np.append(heads, n))
        return values, heads[first], np.repeat(inverse, lengths)
    by_words = sort_with_rows(codes)
    if by_words is not None:
        ordered, perm = by_words
    else:
        perm = np.argsort(codes)
        ordered = codes[perm]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    inverse = np.empty(n, dtype=np.int64)
    inverse[perm] = np.cumsum(new) - 1
    return ordered[starts], np.minimum.reduceat(perm, starts).astype(np.int64), inverse


_SIGN = np.uint64(1 << 63)


def sort_with_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(``codes`` sorted, the permutation that sorts them, equal codes in row order) of 64-bit
    integer codes, by one sort of words holding a code's high bits above its row; None when
    two different codes share those bits (an argsort then decides). The row takes
    b = ⌈log2 n⌉ bits, so for n random 64-bit codes the chance is about n² / 2^(65 − b): 1 in
    3,500 at n = 200,000.

    numpy's plain sort of 64-bit integers is vectorised and two to three times faster than its
    argsort, which is what this replaces on the judged documents and the join's pair mixes.
    """
    n = codes.size
    bits = max((n - 1).bit_length(), 1)
    if n < 2 or bits > 32:
        return None
    words = codes.view(np.uint64)
    if codes.dtype == np.int64:
        words = words ^ _SIGN  # signed order as unsigned
    else:
        words = words.copy()
    words >>= np.uint64(bits)
    words <<= np.uint64(bits)
    words |= np.arange(n, dtype=np.uint64)
    words.sort()
    perm = (words & np.uint64((1 << bits) - 1)).astype(np.int64)
    words >>= np.uint64(bits)
    ordered = codes[perm]
    if ((words[1:] == words[:-1]) & (ordered[1:] != ordered[:-1])).any():
        return None
    return ordered, perm
