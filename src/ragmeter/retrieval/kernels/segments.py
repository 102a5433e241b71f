"""Segment reductions: per-query sums, maxima and counts over rows grouped by query.

Float sums run left to right inside a query's segment, in rank order, exactly as trec_eval adds
them (:func:`seg_cumsum`), never as differences of a prefix sum across queries.
"""

from __future__ import annotations

import numpy as np


def _step_plan(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segment starts sorted by length (longest first) and, per step j, how many are longer."""
    order = np.argsort(-lens, kind="stable")
    s_starts = starts[order]
    s_lens = lens[order]
    maxlen = int(s_lens[0]) if s_lens.size else 0
    # active[j] = number of segments with length > j
    active = np.searchsorted(-s_lens, -np.arange(maxlen), side="left")
    return s_starts, active


def seg_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums within segments, added left to right (bit-identical to a C loop).

    ``starts`` has one entry per segment plus the end (``len(values)``).

    >>> seg_cumsum(np.array([0.1, 0.2, 0.3, 1.0, 2.0]), np.array([0, 3, 5])).tolist()
    [0.1, 0.30000000000000004, 0.6000000000000001, 1.0, 3.0]
    """
    out = np.array(values, dtype=np.float64, copy=True)
    lens = np.diff(starts)
    if out.size == 0:
        return out
    s_starts, active = _step_plan(starts[:-1], lens)
    for j in range(1, active.size):
        idx = s_starts[: active[j]] + j
        out[idx] = out[idx - 1] + out[idx]
    return out


def seg_suffix_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Maximum of ``values[i:end]`` within each segment (interpolated precision)."""
    out = np.array(values, dtype=np.float64, copy=True)
    lens = np.diff(starts)
    if out.size == 0:
        return out
    ends = starts[1:]
    order = np.argsort(-lens, kind="stable")
    s_ends = ends[order]
    s_lens = lens[order]
    active = np.searchsorted(-s_lens, -np.arange(int(s_lens[0])), side="left")
    for j in range(1, active.size):
        idx = s_ends[: active[j]] - 1 - j
        out[idx] = np.maximum(out[idx], out[idx + 1])
    return out


def seg_totals(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Left-to-right sum of each segment (0.0 for an empty one)."""
    cum = seg_cumsum(values, starts)
    lens = np.diff(starts)
    out = np.zeros(lens.size, dtype=np.float64)
    nz = lens > 0
    out[nz] = cum[starts[1:][nz] - 1]
    return out


def seg_index(starts: np.ndarray) -> np.ndarray:
    """The segment of each row (``starts`` includes the end)."""
    lens = np.diff(starts)
    return np.repeat(np.arange(lens.size, dtype=np.int64), lens)


def seg_position(starts: np.ndarray) -> np.ndarray:
    """0-based position of each row inside its segment."""
    total = int(starts[-1])
    lens = np.diff(starts)
    return np.arange(total, dtype=np.int64) - np.repeat(starts[:-1], lens)


_SHIFT = 1 << 40


def seg_count_le(
    keys_sorted: np.ndarray,
    seg: np.ndarray,
    starts: np.ndarray,
    limit: np.ndarray,
    target_seg: np.ndarray | None = None,
) -> np.ndarray:
    """How many rows of a segment have key ≤ limit (keys sorted within segments).

    By default one limit per segment; with ``target_seg``, one (segment, limit) pair per entry.
    """
    # ranks are < 2**40 and segments < 2**23: one int64 key orders (segment, rank)
    comb = seg.astype(np.int64) * _SHIFT + keys_sorted
    tseg = (
        np.arange(limit.size, dtype=np.int64) if target_seg is None else target_seg.astype(np.int64)
    )
    targets = tseg * _SHIFT + np.clip(limit, -1, _SHIFT - 1)
    return np.searchsorted(comb, targets, side="right") - starts[tseg]
