"""Optimal one-to-one matching of overlapping spans (docs/extraction.md#ner).

Within each document, candidate pairs are the overlapping (gold, prediction) pairs. A matching
uses each span at most once and maximizes, lexicographically, (1) the total credit, (2) the
number of pairs and (3) the total IoU. Every optimal matching gives the same counts; the pairing
itself is fixed by solving on spans sorted by ``(start, end, label)``.

The kernel is vectorized: pairs whose gold and prediction overlap nothing else are matched
directly; components with one gold span or one prediction (a "star") take their best pair by a
lexicographic sort; only the remaining components, which are rare, go through
``scipy.optimize.linear_sum_assignment`` one by one.

>>> import numpy as np
>>> # gold [0,10) [12,20); predictions [0,4) [5,15): both gold spans can be matched
>>> pg, pp, inter = candidate_pairs(
...     np.array([0, 0]), np.array([0, 12]), np.array([10, 20]),
...     np.array([0, 0]), np.array([0, 5]), np.array([4, 15]))
>>> pg.tolist(), pp.tolist()
([0, 0, 1], [0, 1, 1])
>>> match(2, 2, pg, pp, np.zeros(3, np.int64), np.array([0.4, 0.5, 0.3])).tolist()
[True, False, True]
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["candidate_pairs", "match"]


def candidate_pairs(
    gd: np.ndarray,
    gs: np.ndarray,
    ge: np.ndarray,
    pd: np.ndarray,
    ps: np.ndarray,
    pe: np.ndarray,
    *,
    min_overlap: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlapping (gold index, prediction index, intersection length) triples.

    Both sides must be sorted by (document, start, end). Spans overlap iff
    ``p.start < g.end and g.start < p.end`` in the same document; with ``min_overlap = θ > 0``
    a pair also needs ``|g ∩ p| / |g| >= θ`` (compared exactly, in integers).
    """
    n_g, n_p = len(gs), len(ps)
    empty = np.zeros(0, dtype=np.int64)
    if n_g == 0 or n_p == 0:
        return empty, empty, empty
    big = int(max(ge.max(), pe.max())) + 1
    gkey_start = gd * big + gs
    gkey_end = np.maximum.accumulate(gd * big + ge)
    # candidates of p: gold with start < p.end (hi) and running max end > p.start (lo)
    lo = np.searchsorted(gkey_end, pd * big + ps, side="right")
    hi = np.searchsorted(gkey_start, pd * big + pe, side="left")
    cnt = np.maximum(hi - lo, 0)
    total = int(cnt.sum())
    if total == 0:
        return empty, empty, empty
    pp = np.repeat(np.arange(n_p, dtype=np.int64), cnt)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    pg = np.repeat(lo, cnt) + offsets
    keep = ge[pg] > ps[pp]
    pg, pp = pg[keep], pp[keep]
    inter = np.minimum(ge[pg], pe[pp]) - np.maximum(gs[pg], ps[pp])
    if min_overlap > 0:
        theta = Fraction(str(min_overlap))
        keep = inter * theta.denominator >= (ge[pg] - gs[pg]) * theta.numerator
        pg, pp, inter = pg[keep], pp[keep], inter[keep]
    return pg, pp, inter


def match(
    n_g: int,
    n_p: int,
    pg: np.ndarray,
    pp: np.ndarray,
    credit2: np.ndarray,
    iou: np.ndarray,
) -> np.ndarray:
    """Which candidate pairs an optimal matching uses (boolean mask over the pairs).

    ``credit2`` is twice the credit of each pair (COR 2, PAR 1, INC 0), so that it is an
    integer; ``iou`` breaks the remaining ties. Pairs must be ordered by prediction, then gold
    (as :func:`candidate_pairs` returns them).
    """
    m = len(pg)
    matched = np.zeros(m, dtype=bool)
    if m == 0:
        return matched
    deg_g = np.bincount(pg, minlength=n_g)
    deg_p = np.bincount(pp, minlength=n_p)
    simple = (deg_g[pg] == 1) & (deg_p[pp] == 1)
    matched[simple] = True  # every pair adds to |M| without taking credit from another pair
    rest = np.flatnonzero(~simple)
    if rest.size == 0:
        return matched

    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rg, rp = pg[rest], pp[rest]
    ug, ig = np.unique(rg, return_inverse=True)
    up, ip = np.unique(rp, return_inverse=True)
    ng, npred = len(ug), len(up)
    nodes = ng + npred
    graph = coo_matrix(
        (np.ones(rest.size, dtype=np.int8), (ig, ng + ip)), shape=(nodes, nodes)
    ).tocsr()
    _, label = connected_components(graph, directed=False)
    comp = label[ig]
    n_comp = int(label.max()) + 1
    golds_in = np.bincount(label[:ng], minlength=n_comp)
    preds_in = np.bincount(label[ng:], minlength=n_comp)
    star = (golds_in[comp] == 1) | (preds_in[comp] == 1)

    if star.any():
        s_idx = rest[star]
        s_comp = comp[star]
        # best pair per component: highest credit, then highest IoU, then first in sorted order
        order = np.lexsort((s_idx, -iou[s_idx], -credit2[s_idx], s_comp))
        sc = s_comp[order]
        first = np.ones(len(sc), dtype=bool)
        first[1:] = sc[1:] != sc[:-1]
        matched[s_idx[order][first]] = True

    if (~star).any():
        from scipy.optimize import linear_sum_assignment

        g_idx = rest[~star]
        g_comp = comp[~star]
        order = np.argsort(g_comp, kind="stable")
        g_idx, g_comp = g_idx[order], g_comp[order]
        bounds = np.flatnonzero(np.diff(g_comp)) + 1
        for block in np.split(g_idx, bounds):
            bg, bp = pg[block], pp[block]
            rows, ri = np.unique(bg, return_inverse=True)
            cols, ci = np.unique(bp, return_inverse=True)
            k = min(len(rows), len(cols))
            w2 = 2.0 * (k + 1)
            w1 = 4.0 * (k + 1) * w2
            weights = np.zeros((len(rows), len(cols)))
            weights[ri, ci] = credit2[block] * w1 + w2 + iou[block]
            pair_at = np.full((len(rows), len(cols)), -1, dtype=np.int64)
            pair_at[ri, ci] = block
            r, c = linear_sum_assignment(weights, maximize=True)
            chosen = pair_at[r, c]
            matched[chosen[chosen >= 0]] = True
    return matched
