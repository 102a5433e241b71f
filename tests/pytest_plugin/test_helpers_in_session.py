"""The fixtures and assertion helpers inside a real (inner, in-process) pytest session.

The mini project (tests/data/pytest_plugin) has six gold samples; its values, computed by the
runner and checked by hand against the retrieval and answers tests: hybrid-v1 nDCG@10 0.7934,
RR 0.8333, answers.f1 0.8333, em 0.8333; bm25-v3 nDCG@10 0.4600. The judge task has no
endpoint, so judge.faithfulness is always missing (needs_llm: 6 of 6 samples).
"""

from __future__ import annotations

import pytest

TESTS = """
import pytest
from ragmeter.testing import assert_metrics, assert_gates, assert_no_regression

def test_floor(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {
        "retrieval.nDCG@10": ">=0.42",
        "answers.f1": ">=0.9",
        "retrieval.RR": ">=0.5",
    })

def test_passes(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {
        "retrieval.ndcg_cut.10": "0.79..0.80",
        "answers.em": {"min": 0.8},
        "retrieval.R@10": pytest.approx(0.75),
        "retrieval.RR": "<0.9",
    })

def test_judge(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {"judge.faithfulness": ">=0.8"})

def test_judge_and_miss(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {
        "judge.faithfulness": ">=0.8", "answers.f1": ">=0.9"})
"""


def test_outcomes_first_line_and_summary(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_eval=TESTS)
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml")
    result.assert_outcomes(passed=1, failed=2, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 3 checks failed for hybrid-v1: "
            "answers.f1 = 0.8333 (expected >=0.9)",
            "E *system     metric             value   expected  verdict  n  statuses",
            "E *hybrid-v1  retrieval.nDCG@10  0.7934  >=0.42    pass     6  ok 6",
            "E *hybrid-v1  answers.f1         0.8333  >=0.9     FAIL     6  ok 6",
            "E *hybrid-v1  retrieval.RR       0.8333  >=0.5     pass     6  ok 6",
            "E *results: */ragmeter/*/",
        ]
    )
    # a missing value next to a failure: the test fails and lists the missing one too
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 2 checks failed for hybrid-v1: "
            "answers.f1 = 0.8333 (expected >=0.9)",
            "E *hybrid-v1  judge.faithfulness  -       >=0.8     SKIP     0  needs_llm 6",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*= ragmeter =*",
            "config ragmeter.yaml · store: temporary · runs: hybrid-v1 r-…-*",
            "test*system*metric*value*expected*verdict",
            "test_eval.py::test_floor *hybrid-v1*answers.f1*0.8333*>=0.9*FAIL",
            "test_eval.py::test_judge *hybrid-v1*judge.faithfulness*-*>=0.8*SKIP (needs_llm)",
            "checks: 6 passed, 2 failed, 2 skipped · judge spend $0.00 · results under *ragmeter/",
        ]
    )
    # the skip reason says why, with the statuses and the hint of the judge task
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "-rs", "-k", "test_judge")
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * ragmeter: judge.faithfulness has no value (needs_llm: 6 of 6 samples; "
            "set RAGMETER_LLM_BASE_URL and RAGMETER_LLM_MODEL*"
        ]
    )


def test_summary_short_none_and_absent(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_eval=TESTS)
    short = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "-q")
    short.stdout.fnmatch_lines(
        [
            "*= ragmeter =*",
            "test*system*metric*value*expected*verdict",
            "test_eval.py::test_floor *answers.f1*FAIL",
            "test_eval.py::test_judge_and_miss *answers.f1*FAIL",
            "checks: 6 passed, 2 failed, 2 skipped*",
        ]
    )
    assert "config ragmeter.yaml" not in short.stdout.str()
    assert "retrieval.nDCG@10" not in short.stdout.str().split("= ragmeter =")[1]
    none = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "--ragmeter-summary", "none")
    none.assert_outcomes(passed=1, failed=2, skipped=1)
    assert "ragmeter ==" not in none.stdout.str()
    inner.makeini("[pytest]\nragmeter_summary = full\n")
    full_q = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "-q")
    assert "config ragmeter.yaml · store: temporary" in full_q.stdout.str()
    # nothing used ragmeter: no section at all
    inner.makepyfile(test_eval="def test_plain():\n    assert 1 + 1 == 2\n")
    plain = inner.runpytest("--ragmeter-config", "ragmeter.yaml")
    plain.assert_outcomes(passed=1)
    assert "= ragmeter =" not in plain.stdout.str()


def test_usage_errors_name_the_test_and_the_key(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_bad="""
        from ragmeter.testing import assert_metrics

        def test_unknown_metric(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG10": ">=0.4"})

        def test_not_computed(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@11": ">=0.4"})

        def test_bare_number(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": 0.42})

        def test_malformed(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": ">=abc"})

        def test_unknown_system(ragmeter_run):
            ragmeter_run.system("hybrid-v2")

        def test_unknown_stratum(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"answers.em": ">=0.5"},
                           stratum={"custodian_typ": "M"})
        """
    )
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml")
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.errors.UsageError: test_bad.py::test_unknown_metric: assert_metrics: "
            "unknown retrieval metric 'nDCG10'; did you mean *nDCG@10*",
            "E *ragmeter.errors.UsageError: test_bad.py::test_not_computed: assert_metrics: "
            "retrieval.nDCG@11 is not computed for hybrid-v1 (computed retrieval metrics: *"
            "did you mean 'retrieval.nDCG@10'?",
            "E *TypeError: retrieval.nDCG@10: threshold 0.42 has no direction "
            "(write '>=0.42' or '<=0.42')",
            "E *ragmeter.errors.UsageError: test_bad.py::test_malformed: assert_metrics: "
            "retrieval.nDCG@10: cannot read threshold '>=abc' (expected '>=X', *",
            "E *ragmeter.errors.UsageError: test_bad.py::test_unknown_system: unknown system "
            "'hybrid-v2' in ragmeter.yaml "
            "(expected one of bm25-v3, hybrid-v1); did you mean 'hybrid-v1'?",
            "E *ragmeter.errors.UsageError: test_bad.py::test_unknown_stratum: assert_metrics: "
            "unknown stratum factor 'custodian_typ' (expected one of custodian_type); "
            "did you mean 'custodian_type'?",
        ]
    )
    # no frame from inside ragmeter is shown
    assert "src/ragmeter" not in result.stdout.str()


def test_config_errors_are_one_line_fixture_errors(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_cfg="def test_a(ragmeter_run):\n    pass\n")
    missing = inner.runpytest()
    missing.assert_outcomes(errors=1)
    missing.stdout.fnmatch_lines(
        [
            "ragmeter_run needs a config: pass --ragmeter-config PATH or set "
            "ragmeter_config in the pytest configuration",
            "ERROR test_cfg.py::test_a - Failed: ragmeter_run needs a config*",
        ]
    )
    absent = inner.runpytest("--ragmeter-config", "nope.yaml")
    absent.assert_outcomes(errors=1)
    absent.stdout.fnmatch_lines(["nope.yaml: cannot read (no such file)"])
    text = (inner.path / "ragmeter.yaml").read_text().replace("tasks:", "taskz:", 1)
    (inner.path / "bad.yaml").write_text(text)
    bad = inner.runpytest("--ragmeter-config", "bad.yaml")
    bad.assert_outcomes(errors=1)
    bad.stdout.fnmatch_lines(["bad.yaml:*: taskz: unknown key (*did you mean 'tasks'?"])
    assert "Traceback" not in bad.stdout.str()
    # through the marker: one line naming the test, never a chained exception
    inner.makepyfile(
        test_marked="""
        import pytest

        @pytest.mark.ragmeter(system="hybrid-v2")
        def test_unknown_system(ragmeter_result):
            pass

        @pytest.mark.ragmeter(config="nope.yaml")
        def test_missing_config(ragmeter_result):
            pass
        """
    )
    marked = inner.runpytest("test_marked.py", "--ragmeter-config", "ragmeter.yaml")
    marked.assert_outcomes(errors=2)
    marked.stdout.fnmatch_lines(
        [
            "test_marked.py::test_unknown_system: unknown system 'hybrid-v2' in ragmeter.yaml "
            "(expected one of bm25-v3, hybrid-v1); did you mean 'hybrid-v1'?",
            "test_marked.py::test_missing_config: nope.yaml: cannot read (no such file)",
        ]
    )
    assert "During handling" not in marked.stdout.str()


def test_stratum_ci_and_no_regression(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_more="""
        import pytest
        from ragmeter.testing import assert_metrics, assert_no_regression

        @pytest.mark.ragmeter(system="hybrid-v1")
        def test_stratum(ragmeter_result):
            # custodian_type M: one sample, answered right by hybrid-v1 (em 1.0)
            assert_metrics(ragmeter_result, {"answers.em": "==1"}, stratum={"custodian_type": "M"})

        @pytest.mark.ragmeter(system="bm25-v3")
        def test_stratum_fails(ragmeter_result):
            assert_metrics(ragmeter_result, {"answers.em": ">=0.5"},
                           stratum={"custodian_type": "M"})

        def test_ci_lower_bound(ragmeter_run):
            # the value 0.7934 passes >=0.5, its 95% CI lower bound 0.4600 does not
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": ">=0.5"}, use="ci")

        def test_no_regression_passes(ragmeter_run):
            assert_no_regression(ragmeter_run["hybrid-v1"], "bm25-v3",
                                 ["retrieval.nDCG@10", "answers.f1"], n_resamples=999)

        def test_no_regression_fails(ragmeter_run):
            assert_no_regression(ragmeter_run["bm25-v3"], ragmeter_run["hybrid-v1"],
                                 ["retrieval.nDCG@10"], alpha=0.7, n_resamples=999)
        """
    )
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 1 checks failed for bm25-v3 "
            "(custodian_type=M): answers.em = 0.0000 (expected >=0.5)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 1 checks failed for hybrid-v1: "
            "retrieval.nDCG@10 = lower 0.4600 (expected >=0.5)",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 1 metrics regressed for bm25-v3 vs "
            "hybrid-v1: retrieval.nDCG@10 0.4600 vs 0.7934 (difference -0.3333, p = 0.625, "
            "holm 0.625 <= 0.7)",
            "E *metric             mean    baseline  difference  95% CI  p      p adj.  verdict",
            "E *retrieval.nDCG@10  0.4600  0.7934    -0.3333     -       0.625  0.625   FAIL",
            "E *test: randomization, holm correction over 1 metrics, alpha 0.7, n = 6, seed 42",
        ]
    )


STRICT_TEST = """
from ragmeter.testing import assert_metrics

def test_judge(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {"judge.faithfulness": ">=0.8"})
"""


@pytest.mark.parametrize("how", ["option", "ini", "config", "require"])
def test_strict_turns_the_missing_value_into_a_failure(
    inner: pytest.Pytester, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner.makepyfile(test_strict=STRICT_TEST)
    args = ["--ragmeter-config", "ragmeter.yaml"]
    suffix = "(strict: a missing value fails)"
    if how == "option":
        args.append("--ragmeter-strict")
    elif how == "ini":
        inner.makeini("[pytest]\nragmeter_strict = true\n")
    elif how == "config":
        cfg = inner.path / "ragmeter.yaml"
        cfg.write_text(cfg.read_text().replace("gates:\n", "gates:\n  strict: true\n", 1))
    else:
        monkeypatch.setenv("RAGMETER_REQUIRE", "llm")
        suffix = "(RAGMETER_REQUIRE=llm)"
    result = inner.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 1 checks failed for hybrid-v1: "
            "judge.faithfulness has no value (needs_llm: 6 of 6 samples; *) " + suffix
        ]
    )
    if how == "option":  # the same session without the option skips
        inner.runpytest("--ragmeter-config", "ragmeter.yaml").assert_outcomes(skipped=1)


def test_assert_gates_and_strict(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_gates="""
        from ragmeter.testing import assert_gates

        def test_release(ragmeter_run):
            assert_gates(ragmeter_run)

        def test_baseline_has_no_rules(ragmeter_run):
            assert_gates(ragmeter_run, system="bm25-v3")
        """
    )
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 4 gate rules failed: hybrid-v1: "
            "answers.f1 >= 0.9 (0.833333 is not >= 0.9)",
            "E *hybrid-v1  judge.faithfulness  *-*>=0.8*SKIP",
            "E *hybrid-v1  no_regression[[]bm25-v3[]]:retrieval.nDCG@10  +0.3333  "
            "no regression vs bm25-v3  pass",
        ]
    )
    result.stdout.fnmatch_lines(
        ["E *ragmeter.errors.UsageError: *: ragmeter.yaml has no gate rules for bm25-v3 *"]
    )
    cfg = inner.path / "ragmeter.yaml"
    cfg.write_text(cfg.read_text().replace("    - {metric: answers.f1, min: 0.9}\n", ""))
    skipped = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "-rs", "-k", "release")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(
        ["SKIPPED * ragmeter: judge.faithfulness has no value (task judge skipped: *"]
    )
    strict = inner.runpytest(
        "--ragmeter-config", "ragmeter.yaml", "--ragmeter-strict", "-k", "release"
    )
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(
        [
            "E *ragmeter.testing.MetricAssertionError: 1 of 3 gate rules failed: hybrid-v1: "
            "judge.faithfulness >= 0.8 (judge.faithfulness has no value (task judge skipped: *"
            "(strict gates: SKIP counts as FAIL)))"
        ]
    )


def test_no_regression_against_a_results_folder(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_folder="""
        from pathlib import Path
        from ragmeter.testing import assert_no_regression

        def test_same_evaluation(ragmeter_run):
            # the saved folder of this very evaluation: hybrid-v1 against itself, difference 0
            assert_no_regression(ragmeter_run["hybrid-v1"], Path(ragmeter_run.results_dir),
                                 ["retrieval.nDCG@10", "answers.f1"], n_resamples=999)

        def test_not_a_folder(ragmeter_run, tmp_path):
            assert_no_regression(ragmeter_run["hybrid-v1"], str(tmp_path), ["answers.f1"])
        """
    )
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "--ragmeter-json", "c.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["E *UsageError: *: assert_no_regression: *: not a results folder (expected summary.json*"]
    )
    import json

    checks = json.loads((inner.path / "c.json").read_text())["checks"]
    assert [(c["metric"], c["value"], c["n"], c["verdict"]) for c in checks] == [
        ("retrieval.nDCG@10", 0.0, 6, "pass"),
        ("answers.f1", 0.0, 6, "pass"),
    ]
    assert checks[0]["expected"].startswith("no regression vs ")
    assert checks[0]["expected"].endswith("-hybrid-v1")
