"""Comparing N systems on several metrics (docs/stats.md) and the UltraRAG view.

Every unordered pair of systems is tested on every metric, p-values are corrected within a
family (Holm per metric by default), and the report renders ranx's table: each system's mean
with the letters of the systems it beats significantly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.result import ordered_mean
from ragmeter.stats._common import (
    check_alpha,
    check_alternative,
    check_n_resamples,
    check_seed,
)
from ragmeter.stats._signflip import Patterns
from ragmeter.stats.compare_report import (
    LETTERS,
    RANX_SUPERSCRIPTS,
    RESERVED_NAMES,
    SUPERSCRIPTS,
    ComparisonReport,
    PairComparison,
    ultrarag_table,
)
from ragmeter.stats.corrections import CORRECTIONS, adjust
from ragmeter.stats.dispatch import canonical_test
from ragmeter.stats.paired import (
    MISSING_POLICIES,
    AlignmentReport,
    MissingPolicy,
    MissingQueriesError,
    Paired,
    _check_finite,
    _round,
    check_magnitude,
)
from ragmeter.stats.result import TestResult, versions
from ragmeter.stats_choices import CI_METHODS, CORRECTION_FAMILIES
from ragmeter.warnings import renamed_attributes

if TYPE_CHECKING:
    from ragmeter.result import Result

# The report and its renderings live in ``compare_report``; their names stay importable here.
__all__ = [
    "CORRECTION_FAMILIES",
    "LETTERS",
    "RANX_SUPERSCRIPTS",
    "RESERVED_NAMES",
    "SUPERSCRIPTS",
    "ComparisonReport",
    "PairComparison",
    "compare",
    "compare_systems",
    "scores_from_results",
    "ultrarag_table",
]


# -- inputs -------------------------------------------------------------------------------------
def scores_from_results(
    results: Mapping[str, Result], metrics: Sequence[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """``system → metric → sample id → value`` from each system's :class:`~ragmeter.Result`.

    Only scored rows (``ok``, ``missing_zeroed``) give values; other samples are missing and
    follow the ``missing`` policy of :func:`compare`. A metric may be named by any alias the
    registry resolves within the Result's task; the report shows the spelling asked for.
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system, result in results.items():
        names = list(metrics) if metrics is not None else result.metrics
        per: dict[str, dict[str, float]] = {}
        for name in names:
            canonical = name
            if name not in result.metrics:
                from ragmeter import registry

                try:
                    canonical = registry.resolve(name, task=result.task).canonical
                except registry.UnknownMetricError:
                    canonical = name
            if canonical not in result.metrics:
                raise InputError(
                    f"has no per-sample values for metric {name!r} (it has: "
                    f"{', '.join(result.metrics) or 'none'})",
                    location=f"system {system!r}",
                )
            per[name] = result.values(canonical)
        out[system] = per
    return out


def _align_systems(
    metric: str,
    per_system: Mapping[str, Mapping[str, float]],
    *,
    missing: MissingPolicy,
    fill_value: float | None,
) -> tuple[list[str], np.ndarray, dict[str, list[str]], list[str]]:
    """Align all systems on one query set: (ids, X (n × S), ids filled per system, dropped)."""
    checked = {s: _check_finite(v, f"{s}[{metric!r}]") for s, v in per_system.items()}
    union = sorted(set().union(*(set(v) for v in checked.values())))
    lacking = {s: sorted(set(union) - set(v)) for s, v in checked.items()}
    dropped: list[str] = []
    if missing == "error":
        bad = {s: ids for s, ids in lacking.items() if ids}
        if bad:
            raise MissingQueriesError([], [], location=f"metric {metric!r}", missing_by_system=bad)
        ids = union
    elif missing == "fill":
        if fill_value is None:
            raise ValueError("missing='fill' needs a fill_value (e.g. 0.0)")
        ids = union
    else:
        ids = sorted(set.intersection(*(set(v) for v in checked.values())))
        dropped = sorted(set(union) - set(ids))
    x = np.empty((len(ids), len(checked)))
    for j, v in enumerate(checked.values()):
        if missing == "fill":
            fv = float(fill_value)  # type: ignore[arg-type]
            x[:, j] = [v.get(i, fv) for i in ids]
        else:
            x[:, j] = list(map(v.__getitem__, ids))
    return ids, x, lacking, dropped


def compare(
    scores: Mapping[str, Mapping[str, Mapping[str, float]] | Result],
    *,
    metrics: Sequence[str] | None = None,
    test: str | None = None,
    correction: str | None = None,
    family: str = "per_metric",
    alpha: float | None = None,
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    seed: int = 42,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    ci: str | None = None,
    confidence: float = 0.95,
    ranx_compat: bool = False,
    rounding_digits: int = 3,
    exact: bool | str = "auto",
    two_sided: str = "abs",
    decimals: int | None = 12,
    directions: Mapping[str, str] | None = None,
    run_tests: Callable[..., dict[tuple[str, int, int], TestResult]] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ComparisonReport:
    """Compare N systems pairwise on every metric, with a multiple-comparison correction.

    ``scores`` maps each system (in display order) to ``metric → query id → score`` (or to a
    :class:`~ragmeter.Result`, read with :func:`scores_from_results`). For each metric, all
    systems are aligned on one query set (``missing``); every unordered pair {i, j}, in input
    order, is tested (``test``: ``"randomization"`` by default, ``"t"``, ``"wilcoxon"`` or
    ``"bootstrap"``); p-values are corrected (``correction``, Holm by default) within each metric
    (``family="per_metric"``) or over all pairs × metrics (``"all"``); a pair is significant iff
    its adjusted p ≤ α. W/T/L count d > 0, d = 0 and d < 0 on the rounded differences.

    ``ranx_compat=True`` reproduces ``ranx.compare(..., stat_test="student")``: two-sided paired
    t-test, no correction, α = 0.01 unless given. Randomization tests of every pair share the
    seeded sign patterns and run as one vectorised product, giving exactly what one
    :func:`~ragmeter.stats.randomization_test` per pair gives.

    ``on_progress(done, total)`` is called after each (metric, pair) test; it may raise to stop
    the comparison (a cancelled MCP call does).

    >>> r = compare({"bm25": {"ndcg@10": {"q1": .5, "q2": .4, "q3": .6}},
    ...              "dense": {"ndcg@10": {"q1": .6, "q2": .5, "q3": .7}}})
    >>> p = r.pair("dense", "bm25", "ndcg@10")
    >>> round(p.result.mean_diff, 12), p.p_value, p.win_tie_loss
    (0.1, 0.25, {'W': 3, 'T': 0, 'L': 0})
    """
    from ragmeter.result import Result

    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise ValueError("compare needs a mapping of at least 2 systems to their scores")
    if any(isinstance(v, Result) for v in scores.values()):
        results = {s: v for s, v in scores.items() if isinstance(v, Result)}
        if len(results) != len(scores):
            raise TypeError("pass either Results or score mappings for every system, not a mix")
        scores = scores_from_results(results, metrics)
    systems = [str(s) for s in scores]
    if len(set(systems)) != len(systems):
        raise ValueError("system names must be unique")
    for s in systems:
        if s in RESERVED_NAMES:
            raise ValueError(
                f"system name {s!r} is reserved by the report's dict layout (rename the system)"
            )
    test_name = (
        canonical_test(test) if test is not None else ("t" if ranx_compat else "randomization")
    )
    corr = correction if correction is not None else ("none" if ranx_compat else "holm")
    corr = {"fdr_bh": "bh", "fdr_by": "by"}.get(corr, corr)
    if corr not in CORRECTIONS:
        raise ValueError(f"correction={correction!r} (expected one of {', '.join(CORRECTIONS)})")
    if family not in CORRECTION_FAMILIES:
        raise ValueError(f"family={family!r} (expected one of {', '.join(CORRECTION_FAMILIES)})")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} (expected one of {', '.join(MISSING_POLICIES)})")
    a_level = check_alpha(alpha if alpha is not None else (0.01 if ranx_compat else 0.05))
    check_alternative(alternative)
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    if ci is not None and ci not in CI_METHODS:
        raise ValueError(f"ci={ci!r} (expected None, 'bca', 'percentile' or 'basic')")
    first = scores[systems[0]]
    metric_names = list(metrics) if metrics is not None else list(first)
    if not metric_names:
        raise ValueError("no metrics to compare")
    if len(set(metric_names)) != len(metric_names):
        raise ValueError("metric names must be unique")
    for s, per in scores.items():
        absent = [m for m in metric_names if m not in per]
        if absent:
            raise InputError(
                f"has no values for metric {absent[0]!r} "
                f"(it has: {', '.join(map(str, per)) or 'none'})",
                location=f"system {s!r}",
            )

    aligned: dict[str, tuple[list[str], np.ndarray, dict[str, list[str]], list[str]]] = {}
    for m in metric_names:
        aligned[m] = _align_systems(
            m, {s: scores[s][m] for s in systems}, missing=missing, fill_value=fill_value
        )

    index_pairs = list(itertools.combinations(range(len(systems)), 2))
    paired: dict[tuple[str, int, int], Paired] = {}
    for m in metric_names:
        ids, x, lacking, dropped = aligned[m]
        if len(ids) < 2:
            raise InputError(
                f"only {len(ids)} queries are scored by every system (a paired test needs 2)",
                location=f"metric {m!r}",
            )
        for k, s in enumerate(systems):
            check_magnitude(x[:, k], ids, f"system {s!r}, metric {m!r}")
        for i, j in index_pairs:
            report = AlignmentReport(
                missing,
                "id",
                tuple(lacking[systems[i]]) if missing != "intersect" else (),
                tuple(lacking[systems[j]]) if missing != "intersect" else (),
                tuple(dropped),
                float(fill_value) if missing == "fill" and fill_value is not None else None,
            )
            paired[(m, i, j)] = Paired(
                tuple(ids), x[:, i], x[:, j], _round(x[:, i] - x[:, j], decimals), report, decimals
            )

    # run_tests: where the tests run (an executor's test blocks; default in this process)
    results = (run_tests or _run_tests)(
        paired,
        test=test_name,
        alternative=alternative,
        alpha=a_level,
        n_resamples=n_resamples,
        seed=seed,
        exact=exact,
        two_sided=two_sided,
        ci=ci,
        confidence=confidence,
        on_progress=on_progress,
    )

    keys = [(m, i, j) for m in metric_names for i, j in index_pairs]
    families = (
        [[k for k in keys if k[0] == m] for m in metric_names] if family == "per_metric" else [keys]
    )
    for fam in families:
        adj = adjust([results[k].p_value for k in fam], corr, a_level)
        for k, p_adj in zip(fam, adj.p_adjusted, strict=True):
            results[k] = results[k].with_adjustment(
                p_adj, method=corr, family=family, m=len(fam), alpha=a_level
            )

    pairs = []
    for m, i, j in keys:
        d = paired[(m, i, j)].d
        wtl = {
            "W": int(np.count_nonzero(d > 0)),
            "T": int(np.count_nonzero(d == 0)),
            "L": int(np.count_nonzero(d < 0)),
        }
        pairs.append(PairComparison(m, systems[i], systems[j], results[(m, i, j)], wtl))

    means = {
        s: {m: ordered_mean(aligned[m][1][:, j]) for m in metric_names}
        for j, s in enumerate(systems)
    }
    settings = {
        "test": test_name,
        "correction": corr,
        "family": family,
        "alpha": a_level,
        "alternative": alternative,
        "n_resamples": n_resamples,
        "seed": int(seed),
        "exact": exact,
        "two_sided": two_sided,
        "missing": missing,
        "fill_value": fill_value,
        "ci": ci,
        "confidence": confidence,
        "ranx_compat": bool(ranx_compat),
        "rounding_digits": int(rounding_digits),
        "decimals": decimals,
        "directions": dict(directions or {}),
        "versions": versions(),
    }
    alignment = {
        m: {
            "policy": missing,
            "n_queries": len(aligned[m][0]),
            "missing_by_system": {s: v for s, v in aligned[m][2].items() if v},
            "dropped": aligned[m][3],
        }
        for m in metric_names
    }
    return ComparisonReport(
        tuple(systems),
        tuple(metric_names),
        means,
        {m: len(aligned[m][0]) for m in metric_names},
        tuple(pairs),
        settings,
        alignment,
    )


compare_systems = compare
"""Alias of :func:`compare` (the name the runner and the issue use)."""


def _run_tests(
    paired: Mapping[tuple[str, int, int], Paired],
    *,
    test: str,
    alternative: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    exact: bool | str,
    two_sided: str,
    ci: str | None,
    confidence: float,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[tuple[str, int, int], TestResult]:
    out: dict[tuple[str, int, int], TestResult] = {}

    def tick() -> None:
        if on_progress is not None:
            on_progress(len(out), len(paired))

    if test == "randomization":
        from ragmeter.stats.randomization import signflip_pvalues

        for group in randomization_groups(paired, n_resamples=n_resamples, exact=exact, seed=seed):
            got: Sequence[float] = ()
            if group.live:
                got = signflip_pvalues(
                    group.matrix(paired),
                    group.patterns,
                    alternative=alternative,
                    two_sided=two_sided,
                    decimals=group.decimals,
                )
            for key, result in randomization_results(
                paired,
                group,
                got,
                alternative=alternative,
                two_sided=two_sided,
                exact=exact,
                alpha=alpha,
                n_resamples=n_resamples,
                seed=seed,
                ci=ci,
                confidence=confidence,
            ):
                out[key] = result
                tick()
        return out
    from ragmeter.stats.dispatch import paired_test

    for key, p in paired.items():
        options: dict[str, Any] = {"alternative": alternative, "alpha": alpha, "ci": ci}
        if test in ("t", "bootstrap", "wilcoxon"):
            options["confidence"] = confidence
        if test != "t" or ci is not None:
            options.update(n_resamples=n_resamples, seed=seed)
        if test == "bootstrap":
            options["method"] = ci or "bca"
            options.pop("ci")
        out[key] = paired_test(p, test=test, **options)
        tick()
    return out


@dataclass(frozen=True)
class SignFlipGroup:
    """Randomization tests that share their sign patterns: same n and rounding, hence the same
    ``default_rng(seed)`` stream. ``live`` are the tests with a non-zero difference."""

    patterns: Patterns
    decimals: int | None
    keys: tuple[tuple[str, int, int], ...]
    live: tuple[tuple[str, int, int], ...]

    def matrix(self, paired: Mapping[tuple[str, int, int], Paired]) -> np.ndarray:
        """The differences of the live tests, one column each: (n, len(live))."""
        return np.column_stack([paired[k].d for k in self.live])


def randomization_groups(
    paired: Mapping[tuple[str, int, int], Paired], *, n_resamples: int, exact: bool | str, seed: int
) -> list[SignFlipGroup]:
    """The tests of ``paired`` grouped by (n, decimals), in first-seen order: one set of sign
    patterns serves a whole group."""
    by_shape: dict[tuple[int, int | None], list[tuple[str, int, int]]] = {}
    for key, p in paired.items():
        by_shape.setdefault((p.n, p.decimals), []).append(key)
    return [
        SignFlipGroup(
            Patterns.choose(n, n_resamples=n_resamples, exact=exact, seed=seed),
            decimals,
            tuple(keys),
            tuple(k for k in keys if np.any(paired[k].d)),
        )
        for (n, decimals), keys in by_shape.items()
    ]


def randomization_results(
    paired: Mapping[tuple[str, int, int], Paired],
    group: SignFlipGroup,
    live_pvalues: Sequence[float],
    *,
    alternative: str,
    two_sided: str,
    exact: bool | str,
    alpha: float,
    n_resamples: int,
    seed: int,
    ci: str | None,
    confidence: float,
) -> Iterator[tuple[tuple[str, int, int], TestResult]]:
    """The group's results, in its key order, from the p-values of its live tests."""
    from ragmeter.stats.randomization import build_result

    pvals: dict[tuple[str, int, int], float] = dict.fromkeys(group.keys, 1.0)
    pvals.update({k: float(v) for k, v in zip(group.live, live_pvalues, strict=True)})
    for k in group.keys:
        interval = None
        if ci is not None:
            from ragmeter.stats.bootstrap import bootstrap_ci

            interval = bootstrap_ci(
                paired[k], method=ci, confidence=confidence, n_resamples=n_resamples, seed=seed
            )
        yield (
            k,
            build_result(
                paired[k],
                p_value=pvals[k],
                patterns=group.patterns,
                statistic=float(np.mean(paired[k].d)),
                alternative=alternative,
                two_sided=two_sided,
                exact=exact,
                alpha=alpha,
                ci=interval,
            ),
        )


# the old name of CORRECTION_FAMILIES warns (it also names the retrieval measure families)
__getattr__ = renamed_attributes(__name__, {"FAMILIES": "CORRECTION_FAMILIES"}, globals())
