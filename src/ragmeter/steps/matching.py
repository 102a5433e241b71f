"""Matching executed steps to reference groups, and ``steps_score`` (docs/steps.md).

Groups are walked back to front. Each group is matched using only successful actual steps that
ran before every step matched by the later groups (the *fence*); a group that is not fully
matched stops the walk. Inside a group, default mode takes the optimal assignment: most
matched steps, then the largest total score, then the latest fence, then, for determinism, the
latest actual steps for the reference steps in reverse listed order. Compat modes reproduce
graphrag-eval's greedy choices.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ragmeter.steps.modes import V5, V6, check_compat
from ragmeter.steps.scoring import ActualStep, ReferenceStep, score_pair

__all__ = ["Match", "match_groups", "optimal_assignment", "steps_score", "walk_groups"]

EXHAUSTIVE_LIMIT = 10**6
"""Largest product of (candidates + 1) searched exhaustively."""


class Match(NamedTuple):
    """Reference step ``ref`` of group ``group`` matched to actual step ``actual`` (index)."""

    group: int
    ref: int
    actual: int
    score: float


Candidates = Sequence[Sequence[tuple[int, float]]]  # per reference step: (actual index, score > 0)


def _key(pairs: dict[int, tuple[int, float]], m: int) -> tuple:
    """The ranking key of an assignment {ref: (j, s)} of a group of ``m`` steps."""
    total = round(sum(s for _j, s in pairs.values()), 9)
    fence = min((j for j, _s in pairs.values()), default=-1)
    vector = tuple(pairs[r][0] if r in pairs else -1 for r in reversed(range(m)))
    return (len(pairs), total, fence, vector)


def _exhaustive(cands: Candidates) -> dict[int, tuple[int, float]]:
    """Depth-first search over the reference steps in reverse listed order, latest actual step
    first, pruned by an optimistic bound on the key (branch and bound, so still exact)."""
    m = len(cands)
    ordered = [sorted(c, key=lambda js: -js[0]) for c in cands]
    best_key: tuple | None = None
    best_pairs: dict[int, tuple[int, float]] = {}
    chosen: dict[int, tuple[int, float]] = {}
    used: set[int] = set()
    inf = float("inf")

    def bound(r: int, count: int, total: float, fence: float, prefix: tuple) -> bool:
        """True if the subtree below can still reach or beat the best key."""
        if best_key is None:
            return True
        extra = 0
        extra_total = 0.0
        for rr in range(r + 1):
            free = [s for j, s in ordered[rr] if j not in used]
            if free:
                extra += 1
                extra_total += max(free)
        optimistic = (count + extra, round(total + extra_total, 9), fence)
        head = best_key[:3]
        if optimistic != head:
            return optimistic > head
        return prefix >= best_key[3][: len(prefix)]

    def dfs(r: int, count: int, total: float, fence: float, prefix: tuple) -> None:
        nonlocal best_key, best_pairs
        if r < 0:
            key = _key(chosen, m)
            if best_key is None or key > best_key:
                best_key, best_pairs = key, dict(chosen)
            return
        if not bound(r, count, total, fence, prefix):
            return
        for j, s in ordered[r]:
            if j in used:
                continue
            used.add(j)
            chosen[r] = (j, s)
            dfs(r - 1, count + 1, total + s, min(fence, j), (*prefix, j))
            del chosen[r]
            used.discard(j)
        dfs(r - 1, count, total, fence, (*prefix, -1))

    dfs(m - 1, 0, 0.0, inf, ())
    return best_pairs


def _lsa(cands: Candidates) -> dict[int, tuple[int, float]]:
    """Keys 1–3 with ``linear_sum_assignment``, then key 4 by fixing steps one at a time."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    m = len(cands)
    columns = sorted({j for c in cands for j, _s in c})
    position = {j: n for n, j in enumerate(columns)}
    scores = np.zeros((m, len(columns)))
    for r, c in enumerate(cands):
        for j, s in c:
            scores[r, position[j]] = s
    weights = np.where(scores > 0, (m + 1) + scores, 0.0)
    column_index = np.asarray(columns)

    def best(min_j: int, fixed: dict[int, int]) -> tuple[int, float]:
        """(matched steps, total score) reachable with actual indices ≥ ``min_j``."""
        taken = [position[j] for j in fixed.values() if j >= 0]
        count = len(taken)
        total = float(sum(scores[r, position[j]] for r, j in fixed.items() if j >= 0))
        rows = [r for r in range(m) if r not in fixed]
        allowed = column_index >= min_j
        allowed[taken] = False
        cols = np.flatnonzero(allowed)
        if rows and len(cols):
            sub = weights[np.ix_(rows, cols)]
            ri, ci = linear_sum_assignment(sub, maximize=True)
            hit = sub[ri, ci] > 0
            count += int(hit.sum())
            total += float(scores[np.asarray(rows)[ri[hit]], cols[ci[hit]]].sum())
        return count, round(total, 9)

    target = best(-1, {})
    if target[0] == 0:
        return {}
    lo, hi = 0, len(columns) - 1  # the largest fence that still reaches the target
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if best(columns[mid], {}) == target:
            lo = mid
        else:
            hi = mid - 1
    fence = columns[lo]
    fixed: dict[int, int] = {}
    for r in reversed(range(m)):
        options = sorted((j for j, _s in cands[r] if j >= fence), reverse=True)
        for j in [*options, -1]:
            if j >= 0 and j in fixed.values():
                continue
            fixed[r] = j
            if best(fence, fixed) == target:
                break
        else:  # pragma: no cover - leaving the step unmatched keeps the target reachable
            raise AssertionError("no completion reaches the optimum")
    return {r: (j, float(scores[r, position[j]])) for r, j in fixed.items() if j >= 0}


def optimal_assignment(cands: Candidates, *, method: str = "auto") -> dict[int, tuple[int, float]]:
    """The optimal assignment of one group (docs/steps.md): reference index → (actual index, score).

    ``cands[r]`` lists the actual steps reference step ``r`` may take, with positive scores.
    ``method`` is ``"auto"`` (exhaustive when the search space is at most 10⁶, else
    ``linear_sum_assignment``), ``"exhaustive"`` or ``"lsa"``.

    >>> optimal_assignment([[(0, 1.0), (1, 1.0)], [(1, 1.0)]])
    {1: (1, 1.0), 0: (0, 1.0)}
    """
    if method == "auto":
        size = 1
        for c in cands:
            size *= len(c) + 1
            if size > EXHAUSTIVE_LIMIT:
                method = "lsa"
                break
        else:
            method = "exhaustive"
    return _exhaustive(cands) if method == "exhaustive" else _lsa(cands)


ScoreFn = Callable[[int, int, int], float]  # (group, ref, actual index) -> score


def walk_groups(
    group_sizes: Sequence[int],
    actual: Sequence[ActualStep],
    score: ScoreFn,
    mode: str,
    *,
    method: str = "auto",
) -> list[Match]:
    """Match actual steps to groups; ``score`` is cached by the caller."""
    n = len(group_sizes)
    matches: list[Match] = []
    if n == 0:
        return matches
    if mode == V5:
        g = n - 1
        used: set[int] = set()
        for r in range(group_sizes[g]):
            for a in reversed(actual):
                if a.index in used or not a.success:
                    continue
                s = score(g, r, a.index)
                if s > 0.0:
                    matches.append(Match(g, r, a.index, s))
                    used.add(a.index)
                    break
        return matches
    limit = len(actual)
    for g in reversed(range(n)):
        size = group_sizes[g]
        eligible = [a.index for a in actual[:limit] if a.success]
        if mode == V6:
            found: list[Match] = []
            used = set()
            for r in reversed(range(size)):
                for j in reversed(eligible):
                    if j in used:
                        continue
                    s = score(g, r, j)
                    if s > 0.0:
                        found.append(Match(g, r, j, s))
                        used.add(j)
                        break
        else:
            cands = [
                [(j, s) for j in reversed(eligible) if (s := score(g, r, j)) > 0.0]
                for r in range(size)
            ]
            pairs = optimal_assignment(cands, method=method)
            found = [Match(g, r, pairs[r][0], pairs[r][1]) for r in sorted(pairs, reverse=True)]
        matches.extend(found)
        if len(found) < size:
            break
        limit = min(mt.actual for mt in found)
    return matches


def match_groups(
    reference_groups: Sequence[Sequence[Mapping[str, Any]]],
    actual_steps: Sequence[Mapping[str, Any]],
    *,
    compat: str | None = None,
) -> list[Match]:
    """Match executed steps to the reference groups of one question.

    Returns ``Match(group, ref, actual, score)`` tuples (real 0-based group indices in all
    modes), groups from last to first and, within a group, reference steps in reverse listed
    order, which is the order upstream accumulates scores in.

    >>> groups = [[{"name": "a", "output": "A"}], [{"name": "b", "output": "B"}]]
    >>> steps = [{"id": "1", "name": "a", "status": "success", "output": "A"},
    ...          {"id": "2", "name": "b", "status": "success", "output": "B"}]
    >>> [tuple(m) for m in match_groups(groups, steps)]
    [(1, 0, 1, 1.0), (0, 0, 0, 1.0)]
    """
    mode = check_compat(compat)
    refs = [[ReferenceStep(s) for s in group] for group in reference_groups]
    actual = [ActualStep(s, j) for j, s in enumerate(actual_steps)]
    from ragmeter.warnings import warn

    cache: dict[tuple[int, int, int], float] = {}

    def score(g: int, r: int, j: int) -> float:
        key = (g, r, j)
        if key not in cache:
            cache[key] = score_pair(refs[g][r], actual[j], mode, warn)
        return cache[key]

    return walk_groups([len(g) for g in refs], actual, score, mode)


def steps_score(
    reference_groups: Sequence[Sequence[Any]],
    matches: Sequence[tuple[int, int, int, float]],
    *,
    compat: str | None = None,
) -> float:
    """Mean over groups of the group score ``Σ s / |G_g|`` (the last group only in v5).

    .. math:: \\mathrm{steps\\_score} = \\frac{1}{n}\\sum_{g=0}^{n-1}
              \\frac{1}{|G_g|}\\sum_{(g, r, j, s)\\in M} s

    Scores add in the order of ``matches`` and groups in index order, starting from the
    integer 0, as upstream does (this fixes the float result exactly).

    >>> steps_score([[{}], [{}]], [(1, 0, 0, 0.6)])
    0.3
    >>> steps_score([[{}], [{}]], [(1, 0, 0, 0.6)], compat="graphrag-eval-5")
    0.6
    """
    mode = check_compat(compat)
    n = len(reference_groups)
    if n == 0:
        raise ValueError("steps_score needs at least one reference group")
    by_group: dict[int, float] = defaultdict(float)
    for g, _r, _j, s in matches:
        by_group[g] += s
    if mode == V5:
        return by_group[n - 1] / len(reference_groups[n - 1])
    total: float = 0
    for g in range(n):
        total += by_group[g] / len(reference_groups[g])
    return total / n
