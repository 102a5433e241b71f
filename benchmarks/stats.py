"""Speed of ragmeter.stats against its anchors (issue 5 targets).

    python -m benchmarks.stats [--repeat 5] [--quick]

1. A seeded randomization test, 10,000 resamples over 7,000 paired queries (target < 1 s).
   Anchors: scipy.stats.permutation_test on the same input (vectorised, same resample count,
   batches of 1,000 to keep memory near ragmeter's) and ranx's numba Fisher randomization test.
2. Comparing 10 systems on 5 metrics, randomization test with Holm correction (target < 10 s).
   Anchors: scipy.stats.permutation_test per pair plus statsmodels' Holm, and the significance
   step of ``ranx.compare(stat_test="fisher")`` (every ordered pair, so 90 × 5 tests, no
   correction). The anchors take minutes, so by default they are timed on 6 pairs and
   extrapolated linearly to all 225 (``--anchor-pairs 0`` runs them in full).

Times are medians over ``--repeat`` runs in this process; ratio = anchor / ragmeter. The data
are generated (numpy default_rng(0)): per-query scores with ties and zeros, as real metrics have.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

N_QUERIES = 7000
N_RESAMPLES = 10_000
N_SYSTEMS = 10
METRICS = ("nDCG@10", "RR", "P@10", "AP", "R@100")


def make_scores(
    n_queries: int, n_systems: int, seed: int = 0
) -> dict[str, dict[str, dict[str, float]]]:
    """system → metric → query id → score, with realistic ties (discrete metrics, zeros)."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:05d}" for i in range(n_queries)]
    difficulty = rng.beta(2, 2, n_queries)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for s in range(n_systems):
        skill = 0.004 * (s // 2)  # systems come in pairs of equal skill: some nulls are true
        base = np.clip(difficulty + skill + rng.normal(0, 0.15, n_queries), 0, 1)
        metrics = {
            "nDCG@10": np.round(base, 4),
            "RR": 1.0 / np.maximum(1, np.round((1 - base) * 10)),
            "P@10": np.round(base * 10) / 10,
            "AP": np.round(base**1.3, 4),
            "R@100": np.round(np.clip(base + 0.2, 0, 1) * 20) / 20,
        }
        out[f"sys{s}"] = {m: dict(zip(ids, v.tolist(), strict=True)) for m, v in metrics.items()}
    return out


def median_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def bench_randomization(repeat: int, n_queries: int) -> None:
    from scipy import stats as sps

    from ragmeter.stats import randomization_test

    scores = make_scores(n_queries, 2)
    a = scores["sys1"]["nDCG@10"]
    b = scores["sys0"]["nDCG@10"]
    av = np.array([a[k] for k in sorted(a)])
    bv = np.array([b[k] for k in sorted(b)])

    t_rm, r = median_time(
        lambda: randomization_test(a, b, n_resamples=N_RESAMPLES, seed=42), repeat
    )

    def mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    t_sp, ref = median_time(
        lambda: sps.permutation_test(
            (av, bv),
            mean_diff,
            permutation_type="samples",
            vectorized=True,
            n_resamples=N_RESAMPLES,
            batch=1000,
            rng=np.random.default_rng(42),
        ),
        repeat,
    )
    print(f"randomization test, {n_queries} paired queries, {N_RESAMPLES} resamples (seeded)")
    print(f"  ragmeter randomization_test       {t_rm:8.3f} s   p = {r.p_value:.4g}")  # type: ignore[attr-defined]
    print(
        f"  scipy permutation_test            {t_sp:8.3f} s   p = {ref.pvalue:.4g}"  # type: ignore[attr-defined]
        f"   ratio {t_sp / t_rm:6.1f}x"
    )
    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError:  # pragma: no cover - ranx is a dev dependency
        return
    fisher_randomization_test(av[:50], bv[:50], 10, 0.05, 42)  # numba compile, not timed
    t_rx, (p_rx, _) = median_time(
        lambda: fisher_randomization_test(av, bv, N_RESAMPLES, 0.05, 42), repeat
    )
    print(
        f"  ranx fisher_randomization_test    {t_rx:8.3f} s   p = {p_rx:.4g}"
        f"   ratio {t_rx / t_rm:6.1f}x  (numba, parallel, not reproducible)"
    )


def bench_compare(repeat: int, n_queries: int, anchor_pairs: int | None) -> None:
    from scipy import stats as sps
    from statsmodels.stats.multitest import multipletests

    from ragmeter.stats import compare

    scores = make_scores(n_queries, N_SYSTEMS)
    t_rm, rep = median_time(
        lambda: compare(scores, test="randomization", correction="holm", n_resamples=9999, seed=42),
        repeat,
    )
    n_pairs = len(rep.pairs)  # type: ignore[attr-defined]
    n_sig = sum(p.significant for p in rep.pairs)  # type: ignore[attr-defined]
    print(
        f"compare {N_SYSTEMS} systems x {len(METRICS)} metrics, {n_queries} queries, "
        "randomization 9999 + Holm"
    )
    print(
        f"  ragmeter compare ({n_pairs} pair tests)          {t_rm:8.3f} s   "
        f"{n_sig} of {n_pairs} significant"
    )

    names = list(scores)
    arrays = {
        s: {m: np.array([scores[s][m][k] for k in sorted(scores[s][m])]) for m in METRICS}
        for s in names
    }
    jobs = [(m, i, j) for m in METRICS for i in range(len(names)) for j in range(i + 1, len(names))]
    timed = jobs if anchor_pairs is None else jobs[:anchor_pairs]

    def mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    def scipy_all() -> None:
        pvals = [
            sps.permutation_test(
                (arrays[names[i]][m], arrays[names[j]][m]),
                mean_diff,
                permutation_type="samples",
                vectorized=True,
                n_resamples=9999,
                batch=1000,
                rng=np.random.default_rng(42),
            ).pvalue
            for m, i, j in timed
        ]
        multipletests(pvals, method="holm")

    t_sp, _ = median_time(scipy_all, 1)
    t_sp_full = t_sp * len(jobs) / len(timed)
    how = "measured" if len(timed) == len(jobs) else f"extrapolated from {len(timed)} pairs"
    print(
        f"  scipy permutation_test per pair + statsmodels Holm {t_sp_full:8.1f} s"
        f"   ratio {t_sp_full / t_rm:6.1f}x  ({how})"
    )
    try:
        from ranx.statistical_tests import fisher_randomization_test
    except ImportError:  # pragma: no cover
        return
    fisher_randomization_test(
        arrays[names[0]]["RR"][:50], arrays[names[1]]["RR"][:50], 10, 0.05, 42
    )  # numba compile, not timed

    def ranx_all() -> None:
        # ranx.compare tests every ordered pair (control, treatment): twice per unordered pair
        for m, i, j in timed:
            for x, y in ((i, j), (j, i)):
                fisher_randomization_test(arrays[names[x]][m], arrays[names[y]][m], 9999, 0.05, 42)

    t_rx, _ = median_time(ranx_all, 1)
    t_rx_full = t_rx * len(jobs) / len(timed)
    print(
        f"  ranx compare, fisher (both orders, no correction)   {t_rx_full:8.1f} s"
        f"   ratio {t_rx_full / t_rm:6.1f}x  ({how})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 queries, 3 repeats")
    parser.add_argument("--only", choices=("randomization", "compare"))
    parser.add_argument(
        "--anchor-pairs",
        type=int,
        default=6,
        help="compare: time the anchors on this many pairs and extrapolate (0 = run all 225)",
    )
    args = parser.parse_args()
    n = 1000 if args.quick else N_QUERIES
    repeat = 3 if args.quick else args.repeat
    if args.only in (None, "randomization"):
        bench_randomization(repeat, n)
    if args.only in (None, "compare"):
        bench_compare(repeat, n, args.anchor_pairs or None)


if __name__ == "__main__":
    main()
