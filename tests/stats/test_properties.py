"""Property tests against the reference libraries on random inputs (hypothesis).

scipy (ttest_rel, wilcoxon, permutation_test, bootstrap) and statsmodels (multipletests) are the
oracles. Values are drawn from dyadic grids (k/8) where exactness matters, so a − b is exact in
binary floating point and ties are real ties for both implementations.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from ragmeter.stats import (
    adjust,
    align,
    bootstrap_ci,
    compare,
    corpus_test,
    randomization_test,
    ttest,
    wilcoxon,
)

FAST = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])


def close(a, b, rel=1e-9, abs_=1e-12):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def dyadic_pairs(min_n=2, max_n=12, lo=-8, hi=8):
    """Two equal-length lists of multiples of 1/8 (exact float differences, many ties)."""
    return (
        st.integers(min_n, max_n)
        .flatmap(
            lambda n: st.tuples(
                st.lists(st.integers(lo, hi), min_size=n, max_size=n),
                st.lists(st.integers(lo, hi), min_size=n, max_size=n),
            )
        )
        .map(lambda ab: ([x / 8 for x in ab[0]], [x / 8 for x in ab[1]]))
    )


ALTS = st.sampled_from(["two-sided", "greater", "less"])


@FAST
@given(dyadic_pairs(3, 30), ALTS)
def test_ttest_matches_scipy_ttest_rel(ab, alternative):
    a, b = ab
    d = np.subtract(a, b)
    assume(np.std(d, ddof=1) > 0)
    ref = stats.ttest_rel(a, b, alternative=alternative)
    got = ttest(a, b, alternative=alternative)
    assert close(got.statistic, float(ref.statistic)) and close(got.p_value, float(ref.pvalue))
    lo, hi = ref.confidence_interval(0.95)
    assert (got.ci.low is None) == math.isinf(lo) and (got.ci.high is None) == math.isinf(hi)
    if got.ci.low is not None:
        assert close(got.ci.low, float(lo))
    if got.ci.high is not None:
        assert close(got.ci.high, float(hi))


@FAST
@given(
    dyadic_pairs(2, 25, -4, 4),
    st.sampled_from(["wilcox", "pratt", "zsplit"]),
    st.sampled_from(["auto", "exact", "asymptotic"]),
    st.booleans(),
    ALTS,
)
def test_wilcoxon_matches_scipy(ab, zero_method, method, correction, alternative):
    a, b = ab
    d = np.subtract(a, b)
    assume(np.any(d != 0))
    assume(not (zero_method == "wilcox" and np.count_nonzero(d) < 1))
    with _quiet():
        ref = stats.wilcoxon(
            a,
            b,
            zero_method=zero_method,
            method=method,
            correction=correction,
            alternative=alternative,
        )
    got = wilcoxon(
        a, b, zero_method=zero_method, method=method, correction=correction, alternative=alternative
    )
    assert close(got.statistic, float(ref.statistic)) and close(got.p_value, float(ref.pvalue))


@SLOW
@given(dyadic_pairs(5, 20, -3, 3), st.integers(0, 10**6))
def test_wilcoxon_permutation_method_matches_scipy_stream(ab, seed):
    a, b = ab
    assume(np.any(np.subtract(a, b) != 0))
    with _quiet():
        ref = stats.wilcoxon(
            a, b, method=stats.PermutationMethod(n_resamples=999, rng=np.random.default_rng(seed))
        )
    got = wilcoxon(a, b, method="permutation", n_resamples=999, seed=seed)
    assert got.method == "permutation" and close(got.p_value, float(ref.pvalue))


class _quiet:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _mean_diff(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


@FAST
@given(dyadic_pairs(2, 10), ALTS)
def test_exact_randomization_matches_scipy_permutation_test(ab, alternative):
    a, b = ab
    assume(np.any(np.subtract(a, b) != 0))
    ref = stats.permutation_test(
        (np.array(a), np.array(b)),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    )
    got = randomization_test(a, b, alternative=alternative, two_sided="double")
    assert got.method == "exact" and got.n_resamples == 2 ** len(a)
    assert close(got.p_value, float(ref.pvalue))
    # the "abs" convention equals scipy's one-sided test of |mean difference|
    if alternative == "two-sided":
        ref_abs = stats.permutation_test(
            (np.array(a), np.array(b)),
            lambda x, y, axis=-1: np.abs(_mean_diff(x, y, axis)),
            permutation_type="samples",
            vectorized=True,
            n_resamples=np.inf,
            alternative="greater",
        )
        assert close(randomization_test(a, b).p_value, float(ref_abs.pvalue))


@SLOW
@given(dyadic_pairs(14, 40), st.integers(0, 2**32 - 1))
def test_sampled_randomization_is_seeded_and_input_order_free(ab, seed):
    a, b = ab
    ids = [f"q{i:03d}" for i in range(len(a))]
    da, db = dict(zip(ids, a, strict=True)), dict(zip(ids, b, strict=True))
    r1 = randomization_test(da, db, n_resamples=999, seed=seed)
    keys = ids[:]
    random.Random(seed).shuffle(keys)
    r2 = randomization_test(
        {k: da[k] for k in keys}, {k: db[k] for k in reversed(keys)}, n_resamples=999, seed=seed
    )
    assert r1.to_dict() == r2.to_dict()
    assert r1.method == "monte_carlo" and 0 < r1.p_value <= 1


@SLOW
@given(dyadic_pairs(14, 18))
def test_sampled_randomization_estimates_the_exact_p(ab):
    a, b = ab
    assume(np.any(np.subtract(a, b) != 0))
    exact = randomization_test(a, b, exact=True).p_value
    sampled = randomization_test(a, b, n_resamples=4000, seed=1).p_value
    sd = math.sqrt(max(exact * (1 - exact), 1e-4) / 4000)
    assert abs(sampled - exact) < 6 * sd + 1 / 4000


@SLOW
@given(dyadic_pairs(14, 60), st.integers(0, 1000), st.sampled_from(["abs", "double"]))
def test_integer_lookup_matmul_and_float_paths_agree(ab, seed, two_sided):
    """The exact-integer path, the float path (decimals=None) and the batched product of
    compare() give the same p-values on data where all three are exact."""
    a, b = ab
    ids = [f"q{i:03d}" for i in range(len(a))]
    base = randomization_test(a, b, n_resamples=500, seed=seed, two_sided=two_sided)
    raw = randomization_test(a, b, n_resamples=500, seed=seed, two_sided=two_sided, decimals=None)
    assert base.p_value == raw.p_value
    rng = np.random.default_rng(seed)
    systems = {"s0": dict(zip(ids, a, strict=True)), "s1": dict(zip(ids, b, strict=True))}
    for k in range(2, 5):  # 5 systems: 10 pairs, enough for the matrix product path
        systems[f"s{k}"] = dict(zip(ids, (rng.integers(-8, 9, len(a)) / 8).tolist(), strict=True))
    rep = compare(
        {s: {"m": v} for s, v in systems.items()},
        n_resamples=500,
        seed=seed,
        two_sided=two_sided,
        correction="none",
    )
    for p in rep.pairs:
        single = randomization_test(
            systems[p.system_a],
            systems[p.system_b],
            n_resamples=500,
            seed=seed,
            two_sided=two_sided,
        )
        got = p.result.to_dict()
        assert got.pop("p_adjusted") == got["p_value"] and got.pop("correction")["m"] == 10
        want = single.to_dict()
        del want["p_adjusted"], want["correction"]
        assert got == want


@SLOW
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=40),
    st.sampled_from(["percentile", "basic", "bca"]),
    st.integers(0, 10**6),
)
def test_bootstrap_ci_matches_scipy(xs, method, seed):
    x = np.round(np.array(xs), 12)
    assume(np.ptp(x) > 1e-6)
    ci = bootstrap_ci(x, statistic="mean", method=method, n_resamples=999, seed=seed)
    with _quiet():
        ref = stats.bootstrap(
            (x,), np.mean, n_resamples=999, method=method, rng=np.random.default_rng(seed)
        )
    lo, hi = float(ref.confidence_interval.low), float(ref.confidence_interval.high)
    assume(not (math.isnan(lo) or math.isnan(hi)))
    assert close(ci.low, lo) and close(ci.high, hi)
    assert close(ci.standard_error, float(ref.standard_error))


P_VALUES = st.lists(
    st.one_of(st.floats(0, 1, allow_nan=False), st.sampled_from([0.0, 0.01, 0.05, 1.0])),
    min_size=1,
    max_size=30,
)


@FAST
@given(
    P_VALUES,
    st.sampled_from(
        [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh"), ("by", "fdr_by")]
    ),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_corrections_match_statsmodels(p, methods, alpha):
    from statsmodels.stats.multitest import multipletests

    ours, theirs = methods
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method=theirs)
    got = adjust(p, ours, alpha)
    assert all(close(g, float(w)) for g, w in zip(got.p_adjusted, adjusted, strict=True))
    # decisions agree except where the adjusted value sits on alpha within rounding
    for g, r, w in zip(got.reject, reject, adjusted, strict=True):
        if not close(float(w), alpha, rel=1e-9):
            assert g == bool(r)


@SLOW
@given(st.integers(2, 8), st.integers(0, 10**6), ALTS)
def test_corpus_randomization_matches_scipy_on_document_swaps(n, seed, alternative):
    rng = np.random.default_rng(seed)
    sa = rng.integers(0, 5, (n, 3))
    sb = rng.integers(0, 5, (n, 3))
    assume(np.any(sa != sb))
    stacked = np.vstack([sa, sb]).astype(float)

    def delta(i, j, axis=-1):
        from ragmeter.stats import micro_f1

        a = stacked[np.asarray(i)].sum(axis=-2)
        b = stacked[np.asarray(j)].sum(axis=-2)
        return micro_f1(a) - micro_f1(b)

    ref = stats.permutation_test(
        (np.arange(n), np.arange(n) + n),
        delta,
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative=alternative,
    )
    docs_a = {f"d{i}": tuple(map(int, r)) for i, r in enumerate(sa)}
    docs_b = {f"d{i}": tuple(map(int, r)) for i, r in enumerate(sb)}
    got = corpus_test(docs_a, docs_b, alternative=alternative, two_sided="double", ci_method=None)
    assert got.method == "exact" and close(got.p_value, float(ref.pvalue))


@FAST
@given(
    st.lists(
        st.one_of(st.floats(-1e3, 1e3, allow_nan=False), st.just(0.5)), min_size=2, max_size=12
    ),
    st.sampled_from(["randomization", "t", "wilcoxon", "bootstrap"]),
)
def test_results_are_strict_json_whatever_the_input(xs, test):
    from ragmeter.stats import paired_test

    ids = [f"q{i}" for i in range(len(xs))]
    a = dict(zip(ids, xs, strict=True))
    b = dict(zip(ids, reversed(xs), strict=True))
    r = paired_test(a, b, test=test, **({"n_resamples": 199} if test == "bootstrap" else {}))
    text = r.to_json()
    data = json.loads(text)
    assert "NaN" not in text and "Infinity" not in text
    assert isinstance(data["significant"], bool) and 0 <= data["p_value"] <= 1
    assert data["significant"] == (data["p_value"] <= data["alpha"] * (1 + 1e-9))


def test_alignment_by_id_ignores_input_order():
    ids = [f"q{i}" for i in range(50)]
    rng = np.random.default_rng(0)
    a = dict(zip(ids, rng.random(50).tolist(), strict=True))
    b = dict(zip(ids, rng.random(50).tolist(), strict=True))
    shuffled = dict(sorted(a.items(), key=lambda kv: kv[1]))
    assert align(a, b).d.tolist() == align(shuffled, b).d.tolist()
    for test in ("randomization", "t", "wilcoxon"):
        from ragmeter.stats import paired_test

        assert (
            paired_test(a, b, test=test).to_dict() == paired_test(shuffled, b, test=test).to_dict()
        )
