"""Behaviour that depends on process start-up: autoloading through the entry point, disabling
it, pytest-xdist with two workers, an unrelated project left untouched, import hygiene."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.pytest_plugin.inner import SPY, evaluations

USES = """
from ragmeter.testing import assert_metrics

def test_floor(ragmeter_run):
    assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": ">=0.5"})
"""


def test_autoload_and_disable(inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    inner.makepyfile(test_uses=USES)
    loaded = inner.runpytest_subprocess(
        "--ragmeter-config", "ragmeter.yaml", "-p", "no:cacheprovider"
    )
    loaded.assert_outcomes(passed=1)
    loaded.stdout.fnmatch_lines(["*= ragmeter =*", "test_uses.py::test_floor *hybrid-v1*pass"])
    disabled = inner.runpytest_subprocess("-p", "no:ragmeter", "-p", "no:cacheprovider")
    disabled.assert_outcomes(errors=1)
    disabled.stdout.fnmatch_lines(["E       fixture 'ragmeter_run' not found"])
    # pytest resolves -p names through entry points too
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    explicit = inner.runpytest_subprocess(
        "-p", "ragmeter", "--ragmeter-config", "ragmeter.yaml", "-p", "no:cacheprovider"
    )
    explicit.assert_outcomes(passed=1)
    explicit.stdout.fnmatch_lines(["*= ragmeter =*"])


def test_xdist_two_workers_evaluate_once(inner: pytest.Pytester) -> None:
    inner.makeconftest(SPY)
    worker_log = """
import os

def note_worker():
    with open(os.path.join(os.path.dirname(__file__), "workers.log"), "a") as fh:
        fh.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + "\\n")
"""
    inner.makepyfile(
        noted=worker_log,
        test_one="""
        from noted import note_worker
        from ragmeter.testing import assert_metrics

        def test_hybrid(ragmeter_run):
            note_worker()
            assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": ">=0.5"})
        """,
        test_two="""
        from noted import note_worker
        from ragmeter.testing import assert_metrics

        def test_baseline(ragmeter_run):
            note_worker()
            assert_metrics(ragmeter_run["bm25-v3"], {"answers.em": ">=0.5"})
        """,
    )
    result = inner.runpytest_subprocess(
        "-n",
        "2",
        "--dist",
        "loadfile",
        "--ragmeter-config",
        "ragmeter.yaml",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=2)
    workers = set((inner.path / "workers.log").read_text().split())
    assert workers == {"gw0", "gw1"}
    assert evaluations(inner) == ["ragmeter.yaml"]
    # the controller's section lists the checks made on both workers
    result.stdout.fnmatch_lines_random(
        [
            "test_one.py::test_hybrid *hybrid-v1*retrieval.nDCG@10*0.7934*>=0.5*pass",
            "test_two.py::test_baseline *bm25-v3*answers.em*0.5000*>=0.5*pass",
            "checks: 2 passed, 0 failed, 0 skipped*",
        ]
    )


SITE = """
import os, socket

_log = os.environ["CONNECT_LOG"]
_original = socket.socket.connect


def _refuse(self, address):
    with open(_log, "a") as fh:
        fh.write(repr(address) + "\\n")
    raise OSError("network disabled in this test")


socket.socket.connect = _refuse
"""


def _listing(root: Path) -> set[str]:
    # pytester itself writes the run's stdout, stderr and base temp dir beside the project
    own = ("stdout", "stderr", "runpytest-")
    return {str(p.relative_to(root)) for p in root.rglob("*") if not p.name.startswith(own)}


def test_an_unrelated_project_is_untouched(
    pytester: pytest.Pytester, entry_point_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = pytester.path.parent / f"{pytester.path.name}-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE)
    log = site / "connects.log"
    monkeypatch.setenv("CONNECT_LOG", str(log))
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(site), str(REPO / "src"), str(entry_point_dir)])
    )
    pytester.makepyfile(
        test_app="""
        import pytest

        def test_ok():
            assert 2 + 2 == 4

        @pytest.mark.skip(reason="later")
        def test_later():
            pass
        """
    )
    (pytester.path / "settings.yaml").write_text("systems: [a]\ntasks: {x: 1}\n")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    before = _listing(pytester.path)
    with_plugin = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    assert _listing(pytester.path) == before  # no file written in the project
    without = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:ragmeter", "-rs")
    with_plugin.assert_outcomes(passed=1, skipped=1)
    without.assert_outcomes(passed=1, skipped=1)

    def outcome_lines(result: pytest.RunResult) -> list[str]:
        keep = ("test_app.py", "SKIPPED", "=")
        return [
            line.split(" in ")[0]
            for line in result.stdout.lines
            if line.startswith(keep) and "test session starts" not in line
        ]

    assert outcome_lines(with_plugin) == outcome_lines(without)
    assert "= ragmeter =" not in with_plugin.stdout.str()
    assert not log.exists(), log.read_text()  # nothing tried to connect anywhere


def test_import_is_light() -> None:
    heavy = ("numpy", "pyarrow", "scipy", "pydantic", "yaml", "rich", "typer", "sqlalchemy")
    code = (
        "import sys, ragmeter.pytest_plugin, ragmeter.testing\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"
