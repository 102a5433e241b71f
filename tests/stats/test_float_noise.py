"""Differences that are equal up to floating-point noise are degenerate (d_z null, with a reason),
and scores too large for the tests' arithmetic are one line, not an internal message."""

from __future__ import annotations

import json
import warnings

import pytest

from ragmeter.errors import InputError
from ragmeter.stats import align, compare, effect_sizes, ttest
from tests.helpers import invoke

# 0.3 − 0.19999999999999998, 0.7 − 0.6 and 0.9 − 0.8 differ in their last bits
A = {"1": 0.3, "2": 0.7, "3": 0.9}
B = {"1": 0.19999999999999998, "2": 0.6, "3": 0.8}


def _jsonl(tmp_path, name, values, key="f1"):
    p = tmp_path / name
    p.write_text("".join(json.dumps({"id": k, key: v}) + "\n" for k, v in values.items()))
    return str(p)


def test_effect_size_of_rounding_noise_is_degenerate():
    es = effect_sizes(A, B)
    assert (es.cohens_dz, es.hedges_gz, es.degenerate, es.reason) == (
        None,
        None,
        True,
        "zero_variance",
    )
    assert es.mean_diff == pytest.approx(0.1)
    # without rounding the differences, the noise bound is 64 ulps of the largest score
    raw = effect_sizes(align(A, B, decimals=None))
    assert (raw.cohens_dz, raw.reason) == (None, "zero_variance")
    t = ttest(A, B)
    assert (t.statistic, t.p_value, t.degenerate, t.reason) == (None, 0.0, True, "zero_variance")
    assert t.effect_size["cohens_dz"] is None and t.effect_size["reason"] == "zero_variance"
    # noise around zero is "all differences zero"
    z = effect_sizes({"1": 0.3, "2": 0.1}, {"1": 0.30000000000000004, "2": 0.1})
    assert (z.cohens_dz, z.reason) == (None, "all_differences_zero")


def test_a_real_spread_keeps_its_effect_size():
    es = effect_sizes({"1": 0.3, "2": 0.7, "3": 0.9}, {"1": 0.2, "2": 0.6, "3": 0.799999})
    assert not es.degenerate and es.cohens_dz == pytest.approx(173205.658, rel=1e-6)


def test_compare_per_sample_reports_null_d_z_with_reason(tmp_path):
    a, b = _jsonl(tmp_path, "a.jsonl", A), _jsonl(tmp_path, "b.jsonl", B)
    res = invoke("compare", "--per-sample", a, b, "-m", "f1", "--json")
    assert res.code == 0, res.stderr
    effect = json.loads(res.stdout)["pairs"][0]["result"]["effect_size"]
    assert effect["cohens_dz"] is None and effect["hedges_gz"] is None
    assert (effect["degenerate"], effect["reason"]) == (True, "zero_variance")
    table = invoke("compare", "--per-sample", a, b, "-m", "f1")
    row = next(line for line in table.stdout.splitlines() if "│ f1" in line)
    assert "n/a" in row and "e+15" not in row and "5883477916184627" not in row


def test_trec_mode_constant_difference_is_degenerate(tmp_path):
    # P@10 of A exceeds B's by one hit on every query: 0.4 − 0.3, 0.6 − 0.5 and 0.2 − 0.1
    qrels, run_a, run_b = [], [], []
    for qid, (hits_a, hits_b) in {"q1": (4, 3), "q2": (6, 5), "q3": (2, 1)}.items():
        qrels += [f"{qid} 0 d{j} 1" for j in range(10)]
        for k in range(10):
            run_a.append(f"{qid} Q0 {'d' if k < hits_a else 'x'}{k} {k + 1} {10 - k} A")
            run_b.append(f"{qid} Q0 {'d' if k < hits_b else 'x'}{k} {k + 1} {10 - k} B")
    paths = []
    for name, lines in (("qrels", qrels), ("a.run", run_a), ("b.run", run_b)):
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n")
        paths.append(str(p))
    res = invoke("compare", *paths, "-m", "P.10", "--test", "t", "--json")
    assert res.code == 0, res.stderr
    result = json.loads(res.stdout)["pairs"][0]["result"]
    assert (result["statistic"], result["degenerate"], result["reason"]) == (
        None,
        True,
        "zero_variance",
    )
    assert result["effect_size"]["cohens_dz"] is None


@pytest.mark.parametrize("test", ["randomization", "t", "wilcoxon", "bootstrap"])
def test_huge_scores_are_one_line_not_internal_text(tmp_path, test):
    a = _jsonl(tmp_path, "h1.jsonl", {"1": 1e308, "2": 1.7e308, "3": -1.7e308})
    b = _jsonl(tmp_path, "h2.jsonl", {"1": -1e308, "2": 0, "3": 1.7e308})
    res = invoke("compare", "--per-sample", a, b, "-m", "f1", "--test", test)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        f"{a}:1: f1 is 1e+308, too large to compare (expected |value| ≤ 1e150; sums and "
        "squared differences of larger values overflow)\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError) as exc:
            compare(
                {"x": {"f1": {"1": 1e200, "2": 0.0}}, "y": {"f1": {"1": 0.0, "2": 1.0}}},
                test=test,
            )
    assert str(exc.value) == (
        "system 'x', metric 'f1', sample '1': score 1e+200 is too large to compare (expected "
        "|score| ≤ 1e150; sums and squared differences of larger scores overflow)"
    )


def test_runner_comparison_row_has_null_d_z_and_says_why():
    from ragmeter.result import Result
    from ragmeter.runner.compare import compare_results
    from ragmeter.runner.config import CompareConfig

    ids = ["1", "2", "3"]
    run = Result.from_columns("answers", ids, {"f1": [A[i] for i in ids]})
    base = Result.from_columns("answers", ids, {"f1": [B[i] for i in ids]})
    for test in ("randomization", "t"):
        row = compare_results("answers", "f1", run, base, CompareConfig(test=test))
        assert row["effect_size"] is None
        assert row["reason"] in ("no effect size: zero_variance", "zero_variance")
        assert row["mean_diff"] == pytest.approx(0.1)
