"""Behaviour of the stats API beyond the vectors: validation, views, degenerate cases."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.stats import (
    MissingQueriesError,
    align,
    bootstrap_test,
    compare,
    corpus_test,
    paired_test,
    randomization_test,
    ttest,
    wilcoxon,
)

A = [62, 55, 71, 48, 80, 66, 59, 73, 50, 68]
B = [58, 55, 65, 50, 72, 60, 59, 70, 45, 61]


def test_n_below_two_and_bad_options_raise_value_error():
    for test in ("randomization", "t", "wilcoxon", "bootstrap"):
        with pytest.raises(ValueError, match="at least 2 paired queries, got 1"):
            paired_test([0.5], [0.4], test=test)
    with pytest.raises(ValueError, match="allows n <= 20, not n = 21"):
        randomization_test(list(range(21)), [0] * 21, exact=True)
    with pytest.raises(ValueError, match="two_sided='both'"):
        randomization_test(A, B, two_sided="both")
    with pytest.raises(ValueError, match="alternative='bigger'"):
        ttest(A, B, alternative="bigger")
    with pytest.raises(ValueError, match="zero_method='drop'"):
        wilcoxon(A, B, zero_method="drop")
    with pytest.raises(ValueError, match="n_resamples=0"):
        randomization_test(A, B, n_resamples=0)
    with pytest.raises(InputError, match=r"b\['q2'\]: score 'x' is not a number"):
        align({"q1": 1.0, "q2": 2.0}, {"q1": 1.0, "q2": "x"})
    with pytest.raises(InputError, match=r"a\['q1'\]: score nan is not finite"):
        align({"q1": float("nan")}, {"q1": 1.0})
    with pytest.raises(InputError, match="different lengths"):
        paired_test([1.0, 2.0], [1.0], test="t")
    with pytest.raises(ValueError, match="needs a fill_value"):
        align({"q1": 1.0}, {"q2": 1.0}, missing="fill")


def test_callable_statistic_and_one_sided_randomization():
    def mean_diff(a, b):
        return np.mean(a, axis=-1) - np.mean(b, axis=-1)

    r = randomization_test(A, B, statistic=mean_diff)
    assert r.p_value == 0.015625 and r.statistic_name == "mean_diff"
    # a plain stat(a, b) -> float (docs/stats.md) gives the same test, one call per resample
    plain = randomization_test(A, B, statistic=lambda a, b: float(np.mean(a) - np.mean(b)))
    assert (plain.p_value, plain.statistic) == (r.p_value, r.statistic)
    median = randomization_test(A, B, statistic=lambda a, b: float(np.median(a) - np.median(b)))
    flips = np.array([[1 - 2 * ((m >> i) & 1) for i in range(len(A))] for m in range(1 << len(A))])
    d = np.asarray(A) - np.asarray(B)
    # the median difference under every sign pattern, for the exact reference p-value
    meds = np.array(
        [np.median(np.where(f > 0, A, B)) - np.median(np.where(f > 0, B, A)) for f in flips]
    )
    obs = np.median(A) - np.median(B)
    assert median.method == "exact" and d.size == len(A)
    assert median.p_value == np.mean(np.abs(meds) >= abs(obs) - 1e-9)
    greater = randomization_test(A, B, alternative="greater")
    less = randomization_test(A, B, alternative="less")
    # 4 patterns (flipping only the two zero differences) tie with T_obs
    assert greater.p_value == 8 / 1024 and less.p_value == 1 - 4 / 1024
    # the sampled path never returns 0
    far = randomization_test([1.0] * 30, [0.0] * 30, n_resamples=99)
    assert far.p_value == 1 / 100 and far.method == "monte_carlo"


def test_swapped_results_and_pairs_mirror():
    r = wilcoxon(A, B, alternative="greater")
    s = r.swapped()
    assert s.alternative == "less" and s.mean_a == r.mean_b and s.mean_diff == -r.mean_diff
    # wilcox drops the 2 zeros: R+ + R- = 8·9/2 = 36, and R+ = 35 becomes R- = 1
    assert (r.statistic, s.statistic) == (35.0, 1.0)
    t = ttest(A, B).swapped()
    assert t.statistic < 0 and t.ci.high < 0 and t.effect_size["cohens_dz"] < 0
    rep = compare({"x": {"m": dict(enumerate(A))}, "y": {"m": dict(enumerate(B))}})
    fwd, back = rep.pair("x", "y", "m"), rep.pair("y", "x", "m")
    assert back.win_tie_loss == {"W": 1, "T": 2, "L": 7} and fwd.win_tie_loss["W"] == 7
    assert back.p_value == fwd.p_value and back.result.mean_diff == -fwd.result.mean_diff
    with pytest.raises(KeyError, match="no comparison of 'x' and 'z'"):
        rep.pair("x", "z", "m")


def test_compare_views_and_directions():
    ids = [f"q{i}" for i in range(12)]
    rng = np.random.default_rng(1)
    base = rng.random(12)
    scores = {
        "a": {
            "err": dict(zip(ids, base + 0.3, strict=True)),
            "acc": dict(zip(ids, base, strict=True)),
        },
        "b": {
            "err": dict(zip(ids, base, strict=True)),
            "acc": dict(zip(ids, base + 0.3, strict=True)),
        },
    }
    rep = compare(scores, directions={"err": "lower"})
    rows = rep.table_rows()
    assert rows[1][2].endswith("ᵃ") and rows[1][3].endswith("ᵃ")  # b: lower error, higher acc
    assert rep.beats("b", "a", "err") and not rep.beats("a", "b", "err")
    df = rep.to_dataframe()
    assert list(df.columns) == ["model_names", "err", "acc"]
    pairs = rep.pairs_dataframe()
    assert set(pairs["metric"]) == {"err", "acc"} and pairs["significant"].all()
    latex = rep.to_latex()
    assert "\\textbf{" in latex and "$^{a}$" in latex
    json.loads(rep.to_json())


def test_compare_input_errors():
    ok = {"q1": 0.1, "q2": 0.2}
    with pytest.raises(InputError, match="system 'b': has no values for metric 'm'"):
        compare({"a": {"m": ok}, "b": {"n": ok}})
    with pytest.raises(MissingQueriesError, match="system 'b' lacks 1 \\('q2'\\)") as info:
        compare({"a": {"m": ok}, "b": {"m": {"q1": 0.3}}})
    assert info.value.missing_by_system == {"b": ["q2"]}
    with pytest.raises(ValueError, match="reserved"):
        compare({"settings": {"m": ok}, "b": {"m": ok}})
    with pytest.raises(ValueError, match="at least 2 systems"):
        compare({"a": {"m": ok}})
    with pytest.raises(ValueError, match="unknown test 'anova'"):
        compare({"a": {"m": ok}, "b": {"m": ok}}, test="anova")
    many = {f"s{i}": {"m": {"q1": i / 30, "q2": i / 31}} for i in range(27)}
    rep = compare(many, test="t", correction="none")
    with pytest.raises(ValueError, match="at most 26 systems"):
        rep.to_table()
    filled = compare({"a": {"m": ok}, "b": {"m": {"q1": 0.3}}}, missing="fill", fill_value=0.0)
    assert filled.n_queries == {"m": 2} and filled.alignment["m"]["missing_by_system"] == {
        "b": ["q2"]
    }


def test_compare_from_results_resolves_names():
    from ragmeter.result import Result

    ids = ["q1", "q2", "q3", "q4"]
    ra = Result.from_columns(
        "answers", ids, {"f1": [0.5, 0.6, 0.7, None]}, statuses=["ok", "ok", "ok", "no_gold"]
    )
    rb = Result.from_columns("answers", ids, {"f1": [0.4, 0.6, 0.5, 0.2]})
    rep = compare({"a": ra, "b": rb}, missing="intersect")
    assert rep.n_queries == {"f1": 3} and rep.alignment["m" if False else "f1"]["dropped"] == ["q4"]


def test_bootstrap_test_and_degenerate_everything():
    r = bootstrap_test(A, B, seed=1, n_resamples=999)
    assert r.test == "bootstrap" and r.p_value == 1 / 1000 and r.ci.contains(3.7)
    same = [0.5] * 5
    for test in ("randomization", "t", "wilcoxon", "bootstrap"):
        res = paired_test(same, same, test=test)
        assert (res.p_value, res.degenerate, res.significant) == (1.0, True, False)
        assert json.loads(res.to_json())["reason"] == "all_differences_zero"


def test_corpus_test_options_and_errors():
    a = {"d1": (3, 1, 0), "d2": (2, 0, 1), "d3": (4, 2, 1)}
    b = {"d1": (2, 1, 1), "d2": (2, 1, 1), "d3": (3, 2, 2)}
    for agg in ("micro_precision", "micro_recall"):
        assert corpus_test(a, b, aggregate=agg, ci_method=None).statistic is not None
    with pytest.raises(MissingQueriesError):
        corpus_test(a, {"d1": (1, 1, 1), "d2": (1, 1, 1)})
    r = corpus_test(
        a, {"d1": (1, 1, 1), "d2": (1, 1, 1)}, missing="fill", fill_value=(0, 0, 3), ci_method=None
    )
    assert r.alignment["missing_in_b"] == ["d3"] and r.n == 3
    with pytest.raises(InputError, match=r"b\['d1'\]: 2 statistics where other documents have 3"):
        corpus_test(a, {"d1": (1, 1), "d2": (1, 1, 1), "d3": (1, 1, 1)})
    with pytest.raises(InputError, match="lack fp, fn"):
        corpus_test({"d1": {"tp": 1}, "d2": {"tp": 2}}, {"d1": {"tp": 1}, "d2": {"tp": 1}})
    same = corpus_test(a, a, ci_method=None)
    assert (same.p_value, same.degenerate, same.n_zero) == (1.0, True, 3)
    with pytest.raises(ValueError, match="unknown corpus test"):
        corpus_test(a, b, test="t")


def test_corpus_test_on_extraction_reports():
    from ragmeter.extraction import evaluate_ner

    gold = {f"d{i}": [(0, 5, "PER"), (10, 15, "LOC"), (20, 25, "ORG")] for i in range(10)}
    pa = {
        f"d{i}": [(0, 5, "PER"), (10, 15, "LOC")] + ([(20, 24, "ORG")] if i % 2 else [])
        for i in range(10)
    }
    pb = {
        f"d{i}": [(0, 5, "PER")] + ([(10, 15, "ORG")] if i % 3 else [(10, 15, "LOC")])
        for i in range(10)
    }
    ra, rb = evaluate_ner(gold, pa), evaluate_ner(gold, pb)
    for metric, agg in (
        ("ner.overall.strict.f1", "micro_f1"),
        ("ner.overall.partial.precision", "micro_precision"),
        ("overall.type.recall", "micro_recall"),
    ):
        r = corpus_test(ra, rb, metric=metric, ci_method=None)
        path = metric.removeprefix("ner.")
        assert abs(r.mean_a - ra.get(path)) < 1e-12 and abs(r.mean_b - rb.get(path)) < 1e-12
        assert r.details["aggregate"] == agg and r.details["metric"] == metric
        # the same counts through mappings give the same test
        same = corpus_test(
            ra.resampling_counts(metric),
            rb.resampling_counts(metric),
            aggregate=agg,
            ci_method=None,
        )
        assert same.p_value == r.p_value and same.method == "exact" and r.n == 10
    with pytest.raises(ValueError, match="needs metric="):
        corpus_test(ra, rb)
    with pytest.raises(ValueError, match="not a micro NER metric"):
        corpus_test(ra, rb, metric="ner.macro_over_labels.f1")
