"""Pure helpers behind the report and dashboard: no store, no templates, no I/O.

Each function turns numbers read from the store into what a page shows: the best value of a
row, the interpolated precision-recall curve, NER errors by kind, a confusion matrix with its
top confusions, histogram bins, and an ad-hoc paired t-test from sufficient statistics with a
Holm correction for the compare page.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "INVALID_LABEL",
    "best_flags",
    "bin_edges",
    "ci_reason",
    "confusion_from_pairs",
    "holm",
    "iprec_point",
    "ner_error_kinds",
    "paired_t",
    "top_confusions",
]

INVALID_LABEL = "__INVALID__"
"""The extraction engine's sentinel for a predicted label outside the label set."""


@functools.lru_cache(maxsize=4096)
def iprec_point(metric: str) -> float | None:
    """The recall level of an interpolated-precision metric name, else ``None``.

    The name is read by the retrieval grammar through the registry, so every spelling it
    resolves to one point counts: the canonical ``IPrec@r``, trec_eval's ``iprec_at_recall_r``
    and ``iprec_at_recall.r``. Pages ask once per metric row, hence the cache.

    >>> iprec_point("IPrec@0.3"), iprec_point("iprec_at_recall_1.00"), iprec_point("P@5")
    (0.3, 1.0, None)
    >>> iprec_point("answers.f1"), iprec_point("iprec_at_recall"), iprec_point("IPrec@1.5")
    (None, None, None)
    """
    from ragmeter import registry
    from ragmeter.errors import UsageError

    try:
        hit = registry.resolve(metric, task="retrieval")
    except UsageError:  # unknown, several points, or no retrieval engine in this build
        return None
    if hit.definition.name != _IPREC_FAMILY or "r" not in hit.params:
        return None
    r = float(hit.params["r"])
    # trec_eval takes any real point, but a precision-recall curve runs over recall 0..1
    return r if 0.0 <= r <= 1.0 else None


_IPREC_FAMILY = "IPrec@r"
"""The registry's entry of trec_eval's ``iprec_at_recall`` family."""


def best_flags(values: Sequence[float | None], direction: str) -> list[bool]:
    """Which cells of a row hold the best value (ties all marked).

    Nothing is marked when fewer than two values are defined, when they are all equal, or when
    the metric has no direction.

    >>> best_flags([0.5, 0.7, None, 0.7], "higher")
    [False, True, False, True]
    >>> best_flags([3.0, 2.0], "lower")
    [False, True]
    >>> best_flags([0.5, 0.5], "higher"), best_flags([0.5, None], "higher")
    ([False, False], [False, False])
    """
    defined = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if direction not in ("higher", "lower") or len(defined) < 2 or min(defined) == max(defined):
        return [False] * len(values)
    best = max(defined) if direction == "higher" else min(defined)
    return [isinstance(v, (int, float)) and not isinstance(v, bool) and v == best for v in values]


def bin_edges(lo: float, hi: float, bins: int) -> list[float]:
    """``bins + 1`` equally spaced edges from ``lo`` to ``hi`` (one unit wide if they coincide).

    >>> bin_edges(0.0, 1.0, 4)
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> bin_edges(2.0, 2.0, 2)
    [2.0, 2.5, 3.0]
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    if not hi > lo:
        hi = lo + 1.0
    width = (hi - lo) / bins
    return [lo + i * width for i in range(bins)] + [hi]


def confusion_from_pairs(
    counts: Iterable[tuple[str, str, int]], labels: Sequence[str] | None = None
) -> tuple[list[str], list[list[int]]]:
    """A square confusion matrix (rows gold, columns predicted) from ``(gold, pred, count)``.

    ``labels`` gives the order (the engine's ``labels_used``); labels it does not list are
    appended in sorted order, and the invalid-label sentinel always comes last.

    >>> confusion_from_pairs([("M", "M", 3), ("M", "A", 1), ("A", "A", 2)])
    (['A', 'M'], [[2, 0], [1, 3]])
    >>> confusion_from_pairs([("M", "__INVALID__", 1)], ["M", "L"])[0]
    ['M', 'L', '__INVALID__']
    """
    cells: dict[tuple[str, str], int] = {}
    seen: set[str] = set()
    for gold, pred, n in counts:
        cells[(gold, pred)] = cells.get((gold, pred), 0) + int(n)
        seen.update((gold, pred))
    order = [lab for lab in (labels or ()) if lab != INVALID_LABEL]
    order += sorted(seen - set(order) - {INVALID_LABEL})
    if INVALID_LABEL in seen:
        order.append(INVALID_LABEL)
    index = {lab: i for i, lab in enumerate(order)}
    matrix = [[0] * len(order) for _ in order]
    for (gold, pred), n in cells.items():
        matrix[index[gold]][index[pred]] += n
    return order, matrix


def top_confusions(
    labels: Sequence[str], matrix: Sequence[Sequence[int]], k: int = 10
) -> list[dict[str, Any]]:
    """Off-diagonal cells by count (descending), then gold, then predicted label (ascending),
    the order of ``top_confusions`` in ``docs/extraction.md``; each with its share of the gold
    label's items.

    >>> top_confusions(["A", "M"], [[2, 1], [3, 4]])
    [{'gold': 'M', 'pred': 'A', 'count': 3, 'share': 0.42857142857142855}, \
{'gold': 'A', 'pred': 'M', 'count': 1, 'share': 0.3333333333333333}]
    """
    out = []
    for i, gold in enumerate(labels):
        row_total = sum(matrix[i])
        for j, pred in enumerate(labels):
            n = matrix[i][j]
            if i != j and n:
                out.append({"gold": gold, "pred": pred, "count": n, "share": n / row_total})
    out.sort(key=lambda c: (-c["count"], c["gold"], c["pred"]))
    return out[:k]


NER_KINDS = (
    ("correct", "correct (boundaries and type)"),
    ("missed", "missed (no prediction overlaps the gold entity)"),
    ("spurious", "spurious (no gold entity overlaps the prediction)"),
    ("wrong_type", "wrong type, boundaries right"),
    ("wrong_boundary", "wrong boundaries, type right"),
    ("wrong_both", "wrong boundaries and type"),
    ("wrong_boundary_any", "wrong boundaries (type right or wrong)"),
    ("wrong_type_any", "wrong type (boundaries right or wrong)"),
)
"""The NER error kinds the report can show, with their labels (only defined ones are shown)."""


def ner_error_kinds(counts: Mapping[str, Mapping[str, float]]) -> dict[str, int] | None:
    """NER outcomes by kind from the per-schema SemEval counts (``COR``, ``INC``, ``MIS``...).

    ``counts`` maps a schema (``strict``, ``exact``, ``partial``, ``type``) to its counts summed
    over documents. Missed and spurious are the unmatched gold spans and predictions (the same
    under every schema: matching pairs every overlap it can, ``docs/extraction.md``,
    "SemEval-2013 schemas"). Of the matched pairs, ``strict`` counts the fully correct ones;
    ``exact`` (or ``partial``) COR adds those with the right boundaries whatever the type, so
    their difference is "wrong type";
    ``type`` COR adds those with the right type that overlap, so its difference is "wrong
    boundaries"; the rest of strict INC is both. Without ``type`` (or without ``exact`` and
    ``partial``) the split is coarser and labelled so. ``None`` without a strict schema.

    >>> ner_error_kinds({
    ...     "strict": {"COR": 6, "INC": 4, "MIS": 2, "SPU": 1},
    ...     "exact": {"COR": 8}, "type": {"COR": 7}})
    {'correct': 6, 'missed': 2, 'spurious': 1, 'wrong_type': 2, 'wrong_boundary': 1, \
'wrong_both': 1}
    >>> ner_error_kinds({"strict": {"COR": 6, "INC": 4, "MIS": 2, "SPU": 1},
    ...                  "partial": {"COR": 8, "PAR": 2}})
    {'correct': 6, 'missed': 2, 'spurious': 1, 'wrong_type': 2, 'wrong_boundary_any': 2}
    """
    strict = counts.get("strict")
    if not strict:
        return None
    cor, inc = int(strict.get("COR", 0)), int(strict.get("INC", 0))
    out = {
        "correct": cor,
        "missed": int(strict.get("MIS", 0)),
        "spurious": int(strict.get("SPU", 0)),
    }
    boundary_ok = counts.get("exact") or counts.get("partial")
    type_ok = counts.get("type")
    wrong_type = int(boundary_ok.get("COR", 0)) - cor if boundary_ok else None
    wrong_boundary = int(type_ok.get("COR", 0)) - cor if type_ok else None
    if wrong_type is not None and wrong_boundary is not None:
        out.update(
            wrong_type=wrong_type,
            wrong_boundary=wrong_boundary,
            wrong_both=inc - wrong_type - wrong_boundary,
        )
    elif wrong_type is not None:
        out.update(wrong_type=wrong_type, wrong_boundary_any=inc - wrong_type)
    elif wrong_boundary is not None:
        out.update(wrong_boundary=wrong_boundary, wrong_type_any=inc - wrong_boundary)
    else:
        out["wrong_type_any"] = inc  # strict alone cannot tell type from boundary errors
    return out


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (``None`` entries are left out of the family).

    p̃₍ᵢ₎ = maxⱼ≤ᵢ min(1, (m − j + 1)·p₍ⱼ₎) over the sorted p-values, as statsmodels'
    ``multipletests(method="holm")``.

    >>> holm([0.01, 0.04, None, 0.03])
    [0.03, 0.06, None, 0.06]
    """
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])  # type: ignore[arg-type, return-value]
    m = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def paired_t(
    n: int, sum_d: float, sum_d2: float, *, alpha: float = 0.05
) -> dict[str, float | int | str | None]:
    """A two-sided paired t-test from sufficient statistics of the differences d = b − a.

    mean = Σd/n, s² = (Σd² − (Σd)²/n)/(n − 1), t = mean/(s/√n) with n − 1 degrees of freedom,
    d_z = mean/s, and the (1 − alpha) confidence interval mean ± t₁₋α/₂·s/√n. Returns the same
    numbers as ``scipy.stats.ttest_rel`` on the samples. Degenerate cases (n < 2, no variance)
    give ``None`` values and a ``reason``.

    >>> r = paired_t(4, 0.4, 0.06)
    >>> round(r["statistic"], 6), round(r["p_value"], 6), round(r["effect_size"], 6)
    (2.44949, 0.091721, 1.224745)
    """
    from scipy import stats as sst

    out: dict[str, float | int | str | None] = {
        "n": n,
        "mean_diff": sum_d / n if n else None,
        "statistic": None,
        "p_value": None,
        "ci_low": None,
        "ci_high": None,
        "effect_size": None,
        "reason": None,
    }
    if n < 2:
        out["reason"] = "fewer than 2 paired samples"
        return out
    mean = sum_d / n
    ss = sum_d2 - sum_d * sum_d / n
    # Σd² − (Σd)²/n cancels when every difference is (nearly) the same: treat as no variance
    if ss <= 1e-12 * max(sum_d2, 1e-300):
        out["reason"] = "the differences have no variance"
        return out
    sd = math.sqrt(ss / (n - 1))
    se = sd / math.sqrt(n)
    t = mean / se
    df = n - 1
    out["statistic"] = t
    out["p_value"] = float(min(1.0, 2.0 * sst.t.sf(abs(t), df)))
    half = float(sst.t.ppf(1.0 - alpha / 2.0, df)) * se
    out["ci_low"], out["ci_high"] = mean - half, mean + half
    out["effect_size"] = mean / sd
    return out


NO_CI_SETTING = "no CI (set compare.ci: bca)"


def ci_reason(comparison: Mapping[str, Any], config: Mapping[str, Any] | None) -> str | None:
    """Why a stored comparison has no CI of its difference, or ``None`` when it has one.

    The runner computes a bootstrap CI only when ``compare.ci`` is set (``docs/runner.md``,
    "Comparisons with the baseline"; off by default); else the reason the test gave (e.g. no
    variance), else a generic one.

    >>> ci_reason({"ci_low": None, "ci_high": None}, {"compare": {"test": "t"}})
    'no CI (set compare.ci: bca)'
    >>> ci_reason({"ci_low": None, "ci_high": None, "reason": "all differences are 0"},
    ...           {"compare": {"ci": "bca"}})
    'no CI: all differences are 0'
    >>> ci_reason({"ci_low": -0.1, "ci_high": 0.2}, None) is None
    True
    """
    if comparison.get("ci_low") is not None and comparison.get("ci_high") is not None:
        return None
    setting = (config or {}).get("compare") if isinstance(config, Mapping) else None
    if not isinstance(setting, Mapping) or not setting.get("ci"):
        return NO_CI_SETTING
    reason = comparison.get("reason")
    return f"no CI: {reason}" if reason else "no CI: the bootstrap gave none"
