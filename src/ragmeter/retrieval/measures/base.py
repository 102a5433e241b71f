"""What every measure family reads: the judged rows of a ranking, seen at one relevance level.

A :class:`Context` wraps a :class:`~ragmeter.retrieval.kernels.Ranking` and a relevance level
and caches what several measures share (the relevant rows, R, N, hits at cutoffs). Measure
functions (the ``kernel`` of a :class:`~ragmeter.retrieval.measures.family.Family`) take
``(ctx, measure)`` and return one value per evaluated query, in qid order.

The segment helpers are imported from :mod:`ragmeter.retrieval.kernels` on first use: that module
pulls pyarrow, and the measure declarations next to the kernels are read by the name grammar and
the metrics registry, which must stay light.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragmeter.retrieval.kernels import Ranking

__all__ = [
    "Context",
    "log2_table",
    "seg_count_le",
    "seg_cumsum",
    "seg_index",
    "seg_position",
    "seg_suffix_max",
    "seg_totals",
]


def seg_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_cumsum

    return seg_cumsum(values, starts)


def seg_suffix_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_suffix_max

    return seg_suffix_max(values, starts)


def seg_totals(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_totals

    return seg_totals(values, starts)


def seg_index(starts: np.ndarray) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_index

    return seg_index(starts)


def seg_position(starts: np.ndarray) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_position

    return seg_position(starts)


def seg_count_le(
    keys_sorted: np.ndarray,
    seg: np.ndarray,
    starts: np.ndarray,
    limit: np.ndarray,
    target_seg: np.ndarray | None = None,
) -> np.ndarray:
    from ragmeter.retrieval.kernels import seg_count_le

    return seg_count_le(keys_sorted, seg, starts, limit, target_seg)


def log2_table(values: np.ndarray) -> np.ndarray:
    """``log2`` of each value through the C library (``math.log2``), as trec_eval computes it.

    numpy's vectorised log2 may differ from libm in the last bit; the distinct arguments are
    few (ranks), so each is computed once with ``math.log2``.
    """
    if values.size == 0:
        return np.zeros(0, dtype=np.float64)
    if values.dtype.kind in "iu":
        lo, hi = int(values.min()), int(values.max())
        if lo > 0 and hi - lo <= 4 * values.size + 4096:
            # integer arguments (ranks): one log per value of their range, gathered by offset,
            # instead of np.unique's sort of every value
            logs = np.fromiter(
                (math.log2(float(x)) for x in range(lo, hi + 1)),
                dtype=np.float64,
                count=hi - lo + 1,
            )
            return logs[values - lo]
    uniq, inv = np.unique(values, return_inverse=True)
    logs = np.fromiter(
        (math.log2(float(x)) for x in uniq.tolist()), dtype=np.float64, count=uniq.size
    )
    return logs[inv].reshape(values.shape)


class Context:
    """One ranking seen at one relevance level ``level`` (``-l`` or a measure's ``rel=``)."""

    def __init__(self, ranking: Ranking, level: int, *, num_docs_in_coll: int = 0) -> None:
        self.r = ranking
        self.level = level
        self.num_docs_in_coll = num_docs_in_coll
        self.E = ranking.num_queries

    # -- rows ---------------------------------------------------------------------------------
    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.r.grade >= self.level

    @cached_property
    def is_nonrel(self) -> np.ndarray:
        """Judged non-relevant: 0 ≤ grade < level."""
        return (self.r.grade >= 0) & (self.r.grade < self.level)

    @cached_property
    def is_unj(self) -> np.ndarray:
        """Pooled but unjudged: a qrels line with a negative grade."""
        return self.r.grade < 0

    @cached_property
    def row_pos(self) -> np.ndarray:
        """0-based position of each judged row among its query's judged rows."""
        return seg_position(self.r.starts)

    def before(self, mask: np.ndarray) -> np.ndarray:
        """For each judged row, how many rows of its query above it satisfy ``mask``."""
        cum = np.cumsum(mask, dtype=np.int64)
        excl = cum - mask
        base = np.concatenate(([0], cum))[self.r.starts[:-1]]
        return excl - np.repeat(base, np.diff(self.r.starts))

    # -- relevant rows --------------------------------------------------------------------------
    @cached_property
    def rel_q(self) -> np.ndarray:
        return self.r.q[self.is_rel]

    @cached_property
    def rel_rank(self) -> np.ndarray:
        return self.r.rank[self.is_rel]

    @cached_property
    def rel_starts(self) -> np.ndarray:
        return np.searchsorted(self.rel_q, np.arange(self.E + 1)).astype(np.int64)

    @cached_property
    def rel_j(self) -> np.ndarray:
        """1-based ordinal of each relevant retrieved row inside its query."""
        return seg_position(self.rel_starts) + 1

    @cached_property
    def hits_n(self) -> np.ndarray:
        """Relevant retrieved documents per query (num_rel_ret)."""
        return np.diff(self.rel_starts)

    def hits(self, k: np.ndarray | int) -> np.ndarray:
        """Relevant documents among ranks 1..min(k, n), per query (k may vary per query)."""
        limit = np.broadcast_to(np.asarray(k, dtype=np.int64), (self.E,))
        return seg_count_le(self.rel_rank, self.rel_q, self.rel_starts, limit)

    # -- qrels side -------------------------------------------------------------------------------
    @cached_property
    def qrel_q(self) -> np.ndarray:
        return seg_index(self.r.qrel_starts)

    def _qcount(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.qrel_q[mask], minlength=self.E).astype(np.int64)

    @cached_property
    def R(self) -> np.ndarray:
        """Relevant documents per query: qrels lines with grade ≥ level."""
        return self._qcount(self.r.qrel_grades >= self.level)

    @cached_property
    def N(self) -> np.ndarray:
        """Judged non-relevant documents per query: qrels lines with 0 ≤ grade < level."""
        g = self.r.qrel_grades
        return self._qcount((g >= 0) & (g < self.level))

    @property
    def n(self) -> np.ndarray:
        return self.r.n

    @property
    def missing(self) -> np.ndarray:
        return self.r.missing

    def per_rel_query(self, values: np.ndarray) -> np.ndarray:
        """Broadcast a per-query array to the relevant rows."""
        return values[self.rel_q]


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den where den ≠ 0, else 0 (trec_eval's rule for empty denominators)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


MIN_GEO_MEAN = 1e-5


def log_floor(values: np.ndarray) -> np.ndarray:
    """ln(max(v, 1e-5)) per value, through libm (``math.log``) as trec_eval's gm_* measures."""
    floored = np.maximum(values, MIN_GEO_MEAN)
    return np.fromiter(
        (math.log(x) for x in floored.tolist()), dtype=np.float64, count=floored.size
    )
