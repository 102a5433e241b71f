"""Collection (system parametrization, markers, configs as gate tests), JUnit and JSON reports,
and evaluating once per session, in inner in-process pytest sessions."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.pytest_plugin.inner import SPY, evaluations


def test_system_parametrization_and_marker_levels(inner: pytest.Pytester) -> None:
    (inner.path / "one.yaml").write_text(
        (inner.path / "ragmeter.yaml")
        .read_text()
        .replace("project: plugin-mini", "project: plugin-one")
    )
    inner.makepyfile(
        test_sys="""
        import pytest
        from ragmeter.testing import assert_metrics

        pytestmark = pytest.mark.ragmeter(config="one.yaml")

        def test_floor(ragmeter_system, ragmeter_result):
            assert ragmeter_result.name == ragmeter_system
            assert_metrics(ragmeter_result, {"retrieval.nDCG@10": ">=0.45"})

        @pytest.mark.ragmeter(system="bm25-v3")
        class TestBaseline:
            def test_class_marker(self, ragmeter_result):
                assert ragmeter_result.name == "bm25-v3"

            @pytest.mark.ragmeter(system="hybrid-v1")
            def test_function_marker_wins(self, ragmeter_result):
                assert ragmeter_result.name == "hybrid-v1"

        def test_two_systems_need_a_name(ragmeter_result):
            pass
        """
    )
    result = inner.runpytest("-v")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        [
            "test_sys.py::test_floor[[]bm25-v3[]] PASSED*",
            "test_sys.py::test_floor[[]hybrid-v1[]] PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*one.yaml has 2 systems (bm25-v3, hybrid-v1): name one with system=...",
        ]
    )


def test_marker_selection_and_strict_markers(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_sel="""
        import pytest

        def test_plain():
            pass

        @pytest.mark.ragmeter_requires("postgres")
        def test_uses(ragmeter_run):
            assert "hybrid-v1" in ragmeter_run

        @pytest.mark.ragmeter(system="hybrid-v1")
        def test_marked(ragmeter_result):
            pass
        """
    )
    inner.makeconftest(SPY)
    quick = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "-m", "not ragmeter", "-v")
    quick.assert_outcomes(passed=1, deselected=2)
    assert evaluations(inner) == []
    assert "= ragmeter =" not in quick.stdout.str()
    only = inner.runpytest(
        "--ragmeter-config", "ragmeter.yaml", "-m", "ragmeter", "--strict-markers"
    )
    only.assert_outcomes(passed=1, skipped=1, deselected=1)  # no PostgreSQL store: skipped
    assert len(evaluations(inner)) == 1
    none = inner.runpytest("-m", "ragmeter", "-k", "plain")
    assert none.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_requires_skips_with_a_reason_and_require_fails(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner.makepyfile(
        test_req="""
        import pytest

        @pytest.mark.ragmeter_requires("llm")
        def test_llm():
            pass

        @pytest.mark.ragmeter_requires("postgres")
        def test_pg():
            pass

        @pytest.mark.ragmeter_requires("quantum")
        def test_unknown():
            pass
        """
    )
    result = inner.runpytest("-rs", "--strict-markers")
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines_random(
        [
            "SKIPPED [[]1[]] test_req.py:*: needs an LLM judge: *set RAGMETER_LLM_BASE_URL and "
            "RAGMETER_LLM_MODEL*",
            "SKIPPED * needs a PostgreSQL store (pass --ragmeter-store postgresql+psycopg://...)",
            "SKIPPED * unknown requirement 'quantum' "
            "(expected one of llm, semantic, spacy, postgres)",
        ]
    )
    monkeypatch.setenv("RAGMETER_REQUIRE", "llm")
    required = inner.runpytest("-rs")
    required.assert_outcomes(errors=1, skipped=2)  # failing in setup is an error in pytest
    required.stdout.fnmatch_lines(["*needs an LLM judge: *(RAGMETER_REQUIRE=llm)*"])


def test_config_collected_as_gate_tests(inner: pytest.Pytester) -> None:
    result = inner.runpytest("ragmeter.yaml", "-v", "-rs")
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "ragmeter.yaml::hybrid-v1::retrieval.nDCG@10>=0.5 PASSED*",
            "ragmeter.yaml::hybrid-v1::answers.f1>=0.9 FAILED*",
            "ragmeter.yaml::hybrid-v1::judge.faithfulness>=0.8 SKIPPED*",
            "ragmeter.yaml::hybrid-v1::no_regression[[]bm25-v3[]]:retrieval.nDCG@10 PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "hybrid-v1: answers.f1 >= 0.9 failed: 0.833333 is not >= 0.9",
        ]
    )
    strict = inner.runpytest("ragmeter.yaml", "--ragmeter-strict")
    strict.assert_outcomes(passed=2, failed=2)
    only_pass = inner.runpytest("ragmeter.yaml", "-k", "nDCG")
    assert only_pass.ret == pytest.ExitCode.OK
    only_pass.assert_outcomes(passed=2)
    # a directory run claims no YAML file; only the ini glob adds configs to it
    inner.makepyfile(test_nothing="def test_ok():\n    pass\n")
    (inner.path / "other.yaml").write_text("systems: []\ntasks: {}\n")
    plain = inner.runpytest(str(inner.path))
    plain.assert_outcomes(passed=1)
    inner.makeini("[pytest]\nragmeter_config_files = ragmeter.y*ml\n")
    globbed = inner.runpytest(str(inner.path))
    globbed.assert_outcomes(passed=3, failed=1, skipped=1)
    # a YAML file that is not a ragmeter config is not claimed even when named
    notes = inner.path / "notes.yaml"
    notes.write_text("title: notes\n")
    unclaimed = inner.runpytest(str(notes))
    assert unclaimed.ret == pytest.ExitCode.USAGE_ERROR
    unclaimed.stderr.fnmatch_lines(["ERROR: not found: *notes.yaml"])


def test_collected_config_errors_are_one_line(inner: pytest.Pytester) -> None:
    text = (inner.path / "ragmeter.yaml").read_text()
    (inner.path / "bad.yaml").write_text(text.replace("min: 0.9", "min: high"))
    result = inner.runpytest("bad.yaml")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["bad.yaml:*: gates.rules[[]1[]].min: *"])
    assert "Traceback" not in result.stdout.str()


def test_junit_properties_and_message(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_j="""
        from ragmeter.testing import assert_metrics

        def test_floor(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {
                "retrieval.nDCG@10": ">=0.42", "answers.f1": ">=0.9"})
        """
    )
    result = inner.runpytest(
        "--ragmeter-config", "ragmeter.yaml", "--junitxml=out.xml", "ragmeter.yaml", "test_j.py"
    )
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert "record_property" not in result.stdout.str()
    assert "PytestWarning" not in result.stdout.str()
    root = ET.parse(inner.path / "out.xml").getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    floor = cases["test_floor"]
    props = [(p.get("name"), p.get("value")) for p in floor.iter("property")]
    assert props == [
        ("ragmeter.hybrid-v1.retrieval.nDCG@10", "0.7933645889053115"),
        ("ragmeter.hybrid-v1.retrieval.nDCG@10.expected", ">=0.42"),
        ("ragmeter.hybrid-v1.retrieval.nDCG@10.verdict", "pass"),
        ("ragmeter.hybrid-v1.answers.f1", "0.8333333333333334"),
        ("ragmeter.hybrid-v1.answers.f1.expected", ">=0.9"),
        ("ragmeter.hybrid-v1.answers.f1.verdict", "FAIL"),
    ]
    failure = floor.find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "ragmeter.testing.MetricAssertionError: 1 of 2 checks failed for hybrid-v1: "
        "answers.f1 = 0.8333 (expected >=0.9)"
    )
    assert "hybrid-v1  retrieval.nDCG@10  0.7934" in (failure.text or "")
    gate = cases["answers.f1>=0.9"]
    assert gate.find("failure").get("message") == (  # type: ignore[union-attr]
        "hybrid-v1: answers.f1 >= 0.9 failed: 0.833333 is not >= 0.9"
    )
    assert [p.get("name") for p in gate.iter("property")] == [
        "ragmeter.hybrid-v1.answers.f1",
        "ragmeter.hybrid-v1.answers.f1.expected",
        "ragmeter.hybrid-v1.answers.f1.verdict",
    ]
    judge = cases["judge.faithfulness>=0.8"]
    assert [p.get("value") for p in judge.iter("property")] == ["", ">=0.8", "SKIP"]


def test_json_summary(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_js="""
        from ragmeter.testing import assert_metrics

        def test_judge(ragmeter_run):
            assert_metrics(ragmeter_run["hybrid-v1"], {"judge.faithfulness": ">=0.8"})
        """
    )
    result = inner.runpytest(
        "--ragmeter-config", "ragmeter.yaml", "--ragmeter-json", "out/checks.json"
    )
    result.assert_outcomes(skipped=1)
    doc = json.loads((inner.path / "out" / "checks.json").read_text())
    from ragmeter import __version__

    assert doc["ragmeter"] == __version__
    (check,) = doc["checks"]
    assert check["nodeid"] == "test_js.py::test_judge"
    assert (check["system"], check["metric"], check["value"]) == (
        "hybrid-v1",
        "judge.faithfulness",
        None,
    )
    assert (check["expected"], check["verdict"], check["n"]) == (">=0.8", "SKIP", 0)
    assert check["status_counts"] == {"needs_llm": 6}
    assert check["reason"].startswith("judge.faithfulness has no value (needs_llm: 6 of 6 samples;")
    (run,) = doc["runs"]
    assert run["system"] == "hybrid-v1" and run["run_id"].endswith("-hybrid-v1")


MODULE_A = """
def test_a1(ragmeter_run):
    assert set(ragmeter_run) == {"bm25-v3", "hybrid-v1"}

def test_a2(ragmeter_run):
    assert ragmeter_run.run_ids["hybrid-v1"].endswith("-hybrid-v1")
"""

MODULE_B = """
def test_b(ragmeter_run, ragmeter_runs):
    assert ragmeter_runs("ragmeter.yaml") is ragmeter_run
"""


def test_evaluated_once_per_session(inner: pytest.Pytester) -> None:
    inner.makeconftest(SPY)
    inner.makepyfile(test_a=MODULE_A, test_b=MODULE_B)
    inner.runpytest("--ragmeter-config", "ragmeter.yaml").assert_outcomes(passed=3)
    assert len(evaluations(inner)) == 1
    # two configs: two evaluations; a narrowed config is one more
    (inner.path / "evaluations.log").unlink()
    (inner.path / "two.yaml").write_text((inner.path / "ragmeter.yaml").read_text())
    inner.makepyfile(
        test_c="""
        def test_c(ragmeter_runs):
            assert ragmeter_runs("two.yaml") is ragmeter_runs("two.yaml")
            narrow = ragmeter_runs("two.yaml", systems=["hybrid-v1"], tasks=["retrieval"])
            assert list(narrow) == ["hybrid-v1"]
            assert list(narrow["hybrid-v1"].results) == ["retrieval"]
        """
    )
    inner.runpytest("--ragmeter-config", "ragmeter.yaml").assert_outcomes(passed=4)
    assert sorted(evaluations(inner)) == ["ragmeter.yaml", "two.yaml", "two.yaml"]
    # a collected config and ragmeter_run on the same file: one evaluation
    (inner.path / "evaluations.log").unlink()
    result = inner.runpytest("--ragmeter-config", "ragmeter.yaml", "ragmeter.yaml", "test_a.py")
    result.assert_outcomes(passed=4, failed=1, skipped=1)
    assert evaluations(inner) == ["ragmeter.yaml"]


def test_block_network_ini(inner: pytest.Pytester) -> None:
    inner.makeini("[pytest]\nragmeter_block_network = true\n")
    inner.makepyfile(
        test_net="""
        import socket

        def test_outside():
            with socket.socket() as s:
                s.connect(("192.0.2.7", 443))

        def test_loopback():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.socket() as s:
                s.connect(server.getsockname())
            server.close()
        """
    )
    result = inner.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E *OSError: ragmeter_block_network: connection to ('192.0.2.7', 443) blocked in "
            "test_net.py::test_outside (the session allows loopback only)"
        ]
    )
    import socket

    assert socket.socket.connect.__qualname__ == "socket.connect"  # restored after the session


def test_persistent_store_reuse_and_stored_baseline(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_store="""
        import os
        from ragmeter.testing import assert_no_regression

        def test_keep(ragmeter_run):
            with open("runs.txt", "a") as fh:
                fh.write(ragmeter_run.run_ids["bm25-v3"] + "\\n")
            reused = {t.reused for t in ragmeter_run.evaluation.systems["bm25-v3"].tasks.values()
                      if t.status == "ok"}
            with open("reused.txt", "a") as fh:
                fh.write(str(sorted(reused)) + "\\n")

        def test_against_stored_run(ragmeter_run):
            first = open("runs.txt").read().split()[0]
            assert_no_regression(ragmeter_run["hybrid-v1"], "run:" + first,
                                 ["retrieval.nDCG@10", "answers.f1"], n_resamples=999)

        def test_unknown_stored_run(ragmeter_run):
            assert_no_regression(ragmeter_run["hybrid-v1"], "run:nope", ["answers.f1"])
        """
    )
    args = ["--ragmeter-config", "ragmeter.yaml", "--ragmeter-store", "sqlite:///history.db"]
    first = inner.runpytest(*args)
    first.assert_outcomes(passed=2, failed=1)
    first.stdout.fnmatch_lines(["E *UsageError: *baseline 'run:nope': *"])
    second = inner.runpytest(*args, "-k", "keep")
    second.assert_outcomes(passed=1)
    # the second session re-used every task result of the first (the runner's input hash)
    assert (inner.path / "reused.txt").read_text().splitlines() == ["[False]", "[True]"]
    assert (inner.path / "history.db").exists()


def _nested_project(inner: pytest.Pytester, name: str) -> None:
    """A copy of the mini project in examples/NAME/ with its own pytest.ini and tests/ folder."""
    import shutil

    from tests.pytest_plugin.conftest import MINI

    proj = inner.path / "examples" / name
    shutil.copytree(MINI, proj)
    (proj / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\nragmeter_config = ragmeter.yaml\n"
    )
    (proj / "tests").mkdir()
    (proj / "tests" / f"test_{name}.py").write_text(
        "from ragmeter.testing import assert_metrics\n\n"
        "def test_every_system(ragmeter_system, ragmeter_result):\n"
        "    assert ragmeter_result.name == ragmeter_system\n"
        "    assert_metrics(ragmeter_result, {'retrieval.nDCG@10': '>=0.45'})\n\n"
        "def test_session_run(ragmeter_run):\n"
        "    assert sorted(ragmeter_run.systems) == ['bm25-v3', 'hybrid-v1']\n"
    )


def test_a_nested_project_finds_its_own_config_from_an_outer_rootdir(
    inner: pytest.Pytester,
) -> None:
    # `pytest examples` from the repository root: the rootdir's ini has no ragmeter_config,
    # the project's own pytest.ini (which pytest does not read here) names it
    inner.makeini("[pytest]\n")
    (inner.path / "ragmeter.yaml").unlink()  # nothing to find at the rootdir
    _nested_project(inner, "one")
    result = inner.runpytest("examples", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*test_every_system?bm25-v3? PASSED*", "*test_every_system?hybrid-v1? PASSED*"]
    )
    # from inside the project its pytest.ini is the session's: the same tests pass
    again = inner.runpytest("examples/one", "-p", "no:cacheprovider")
    again.assert_outcomes(passed=3)
    # two projects with different configs: ragmeter_run cannot choose, and says so in one line
    _nested_project(inner, "two")
    both = inner.runpytest("examples", "-p", "no:cacheprovider")
    both.assert_outcomes(passed=4, errors=2)
    both.stdout.fnmatch_lines(
        [
            "*ragmeter_run: the tests belong to projects with different configs "
            "(examples/one/ragmeter.yaml, examples/two/ragmeter.yaml); pass --ragmeter-config "
            "PATH or run one project at a time*"
        ]
    )
