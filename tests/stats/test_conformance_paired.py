"""TV-SIG-01…06, 13, 14: alignment, t-test, Wilcoxon, randomization, degenerate inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.stats import (
    MissingQueriesError,
    align,
    align_positional,
    paired_test,
    randomization_test,
    ttest,
    wilcoxon,
)
from tests.stats.conftest import close, load

V = load("paired_tests.json")


def test_sig01_paired_t_test():
    v = V["TV-SIG-01"]
    r = ttest(v["input"]["a"], v["input"]["b"])
    e = v["expected"]
    assert close(r.statistic, e["statistic"])
    assert close(r.p_value, e["pvalue"])
    assert r.details["df"] == e["df"] == 9
    assert close(r.ci.low, e["ci95_mean_diff"][0]) and close(r.ci.high, e["ci95_mean_diff"][1])
    assert r.ci.method == "t" and r.ci.level == 0.95
    assert close(r.mean_diff, 3.7) and r.n == 10 and r.n_zero == 2
    assert r.significant and not r.degenerate


@pytest.mark.parametrize("key", list(V["TV-SIG-02"]["expected"]))
def test_sig02_wilcoxon_zero_method_by_method(key):
    v = V["TV-SIG-02"]
    opts = dict(part.split("=") for part in key.split(","))
    r = wilcoxon(
        v["input"]["a"],
        v["input"]["b"],
        zero_method=opts["zero_method"],
        method=opts["method"],
        correction=opts.get("correction") == "True",
    )
    e = v["expected"][key]
    assert close(r.statistic, e["statistic"])
    assert close(r.p_value, e["pvalue"])
    assert r.n_zero == 2
    if opts["method"] == "auto":  # zeros and ties, n <= 13: exhaustive sign-flip permutation
        assert (r.method, r.n_resamples) == ("permutation", 1024)
    if opts["method"] == "exact":
        assert r.details["approximate_exact"] is True


def test_sig02b_old_scipy_numbers_are_not_produced():
    v = V["TV-SIG-02b"]
    old = v["library_observed"]
    for zm in ("wilcox", "pratt", "zsplit"):
        got = wilcoxon(v["input"]["a"], v["input"]["b"], zero_method=zm, method="exact")
        assert not close(got.p_value, old[f"zero_method={zm},method=exact"]["pvalue"])
    zero = v["input"]["all_zero_case"]
    r = wilcoxon(zero["a"], zero["b"])  # scipy <= 1.14 raised ValueError here
    assert (r.p_value, r.degenerate, r.reason) == (1.0, True, "all_differences_zero")


def test_sig03_wilcoxon_without_zeros_or_ties():
    v = V["TV-SIG-03"]
    d = v["input"]["d"]
    zeros = [0.0] * len(d)
    for method in ("exact", "asymptotic"):
        r = wilcoxon(d, zeros, method=method)
        assert close(r.statistic, v["expected"][method]["statistic"])
        assert close(r.p_value, v["expected"][method]["pvalue"])
    auto = wilcoxon(d, zeros)
    assert auto.method == "exact" and close(auto.p_value, v["expected"]["exact"]["pvalue"])
    assert auto.details["approximate_exact"] is False


def test_sig04_rounding_restores_float_ties():
    v = V["TV-SIG-04"]
    a, b = v["input"]["a"], v["input"]["b"]
    raw = (np.array(a) - np.array(b)).tolist()
    assert (
        raw == v["expected"]["a_minus_b_raw"] and (raw[0] == raw[1]) is v["expected"]["raw_equal"]
    )
    p = align_positional(a, b)
    assert p.d.tolist() == v["expected"]["d_used_by_ragmeter"]
    assert p.alignment_report.aligned_by == "position"
    assert align_positional(a, b, decimals=None).d.tolist() == raw


def test_sig05_exact_randomization():
    v = V["TV-SIG-05"]
    a, b = v["input"]["a"], v["input"]["b"]
    e = v["expected"]
    r = randomization_test(a, b)
    assert (r.p_value, r.method, r.n_resamples) == (e["p_exact_abs"], "exact", e["n_patterns"])
    assert close(r.statistic, e["observed_mean_diff"])
    assert randomization_test(a, b, two_sided="double").p_value == e["p_exact_double_one_sided"]
    assert randomization_test(a, b, exact=True, n_resamples=10).p_value == e["scipy_exact"]
    assert randomization_test(a, b, n_resamples=9999).p_value == e["scipy_requested_9999_resamples"]
    assert r.seed == 42 and r.significant


def test_sig06_sampled_randomization_is_close_to_exact_and_reproducible():
    v = V["TV-SIG-06"]
    a, b = v["input"]["a"], v["input"]["b"]
    e = v["expected"]
    exact = randomization_test(a, b, exact=True)
    assert exact.p_value == e["p_exact_2^20"] and exact.n_resamples == 2**20
    sampled = randomization_test(a, b, n_resamples=v["input"]["n_resamples"], seed=42)
    assert sampled.method == "monte_carlo" and sampled.n_resamples == 9999
    assert abs(sampled.p_value - e["p_exact_2^20"]) < e["sampled_p_tolerance_vs_exact"]
    # (c + 1)/(B + 1): a multiple of 1/10000, never 0
    assert sampled.p_value > 0
    assert abs(sampled.p_value * 10000 - round(sampled.p_value * 10000)) < 1e-6
    again = randomization_test(a, b, n_resamples=9999, seed=42)
    assert again.to_dict() == sampled.to_dict()
    assert close(ttest(a, b).p_value, e["ttest_p"])
    assert close(wilcoxon(a, b).p_value, e["wilcoxon_auto_p"])


def test_sig13_degenerate_inputs():
    v = V["TV-SIG-13"]
    e = v["expected"]
    same = v["input"]["identical"]
    for name, test in (
        ("t_test", "t"),
        ("wilcoxon", "wilcoxon"),
        ("randomization", "randomization"),
    ):
        r = paired_test(same["a"], same["b"], test=test)
        for key, want in e["identical"][name].items():
            assert getattr(r, key) == want, (name, key)
        assert r.significant is False
        json.loads(r.to_json())  # strict JSON, no NaN
    shift = v["input"]["constant_shift"]
    t = ttest(shift["a"], shift["b"])
    for key, want in e["constant_shift"]["t_test"].items():
        assert getattr(t, key) == want
    assert t.effect_size["cohens_dz"] is None
    assert (
        randomization_test(shift["a"], shift["b"]).p_value
        == e["constant_shift"]["randomization_exact_p"]
    )
    with pytest.raises(ValueError, match=r"unknown test 'mcnemar'.*randomization, t, wilcoxon"):
        paired_test(same["a"], same["b"], test=v["input"]["unknown_test"])


def test_sig14_alignment_policies():
    v = V["TV-SIG-14"]
    a, b = v["input"]["a"], v["input"]["b"]
    e = v["expected"]
    with pytest.raises(MissingQueriesError) as info:
        align(a, b)
    assert info.value.missing_in_a == e["missing=error"]["missing_in_a"]
    assert info.value.missing_in_b == e["missing=error"]["missing_in_b"]
    fill = e["missing=fill(0.0)"]
    p = align(a, b, missing="fill", fill_value=0.0)
    assert list(p.ids) == fill["query_ids"]
    assert p.a.tolist() == fill["a"] and p.b.tolist() == fill["b"]
    assert p.d.tolist() == fill["d_rounded_12"]
    r = ttest(p)
    assert close(r.mean_diff, fill["mean_diff"]) and close(r.p_value, fill["ttest_p"])
    assert r.alignment["n_filled"] == 2 and r.alignment["missing_in_b"] == ["q3"]
    inter = e["missing=intersect"]
    r = ttest(a, b, missing="intersect")
    assert (
        r.n == 3 and close(r.mean_diff, inter["mean_diff"]) and close(r.p_value, inter["ttest_p"])
    )
    assert r.alignment["dropped"] == ["q3", "q5"]
    assert align(a, b, missing="intersect").d.tolist() == inter["d_rounded_12"]
