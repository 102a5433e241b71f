"""The pieces of the plugin that need no inner session: thresholds, value formatting, the
xdist lock, the helpers called from plain Python, and the network guard."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from ragmeter.errors import UsageError
from ragmeter.result import Result
from ragmeter.testing import MetricAssertionError, MetricSkipped, assert_metrics
from ragmeter.testing._lock import LockTimeout, evaluate_once, parse_duration
from ragmeter.testing.thresholds import format_value, parse_threshold


@pytest.mark.parametrize(
    ("spec", "passes", "fails"),
    [
        (">=0.42", [0.42, 0.9], [0.41999]),
        (">0.42", [0.4201], [0.42]),
        ("<=0.05", [0.05, 0.0], [0.0501]),
        ("<0.05", [0.0499], [0.05]),
        ("==0.5", [0.5], [0.5000001]),
        ("0.40..0.60", [0.4, 0.6, 0.5], [0.3999, 0.6001]),
        ({"min": 0.42}, [0.42], [0.4199]),
        ({"max": 0.05}, [0.05], [0.06]),
        ({"min": 0.1, "max": 0.2}, [0.1, 0.2], [0.09, 0.21]),
        (pytest.approx(0.4213, abs=1e-4), [0.4213, 0.42135], [0.4215]),
    ],
)
def test_threshold_forms(spec: object, passes: list[float], fails: list[float]) -> None:
    t = parse_threshold("retrieval.nDCG@10", spec)
    assert [t.check(v) for v in passes] == [True] * len(passes)
    assert [t.check(v) for v in fails] == [False] * len(fails)


def test_threshold_errors() -> None:
    with pytest.raises(TypeError) as exc:
        parse_threshold("retrieval.nDCG@10", 0.42)
    assert str(exc.value) == (
        "retrieval.nDCG@10: threshold 0.42 has no direction (write '>=0.42' or '<=0.42')"
    )
    for bad in (">=abc", "=>0.4", "0.6..0.4", {"min": "x"}, {"low": 1}, True, None, ">=nan"):
        with pytest.raises(UsageError) as err:
            parse_threshold("answers.f1", bad)
        assert str(err.value).startswith("answers.f1: ")


def test_rounding_never_hides_the_reason() -> None:
    floor = parse_threshold("m.x", ">=0.42")
    assert format_value(0.41996, floor) == "0.41996"
    assert format_value(0.4199999, floor) == "0.4199999"
    assert format_value(0.42, floor) == "0.4200"
    assert format_value(0.8333333, floor) == "0.8333"
    ceiling = parse_threshold("m.x", "<0.05")
    assert format_value(0.05000004, ceiling) == "0.05000004"
    assert format_value(0.4200001, floor) == "0.4200001"  # passes, but is not the bound itself


def _result(values: list[float | None], statuses: list[str] | None = None) -> Result:
    ids = [f"q{i}" for i in range(len(values))]
    return Result.from_columns("answers", ids, {"f1": values}, statuses=statuses)


def test_helpers_outside_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    # scripts and notebooks: no pytest test is running, and no plugin records the checks
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    import ragmeter.pytest_plugin

    monkeypatch.setattr(ragmeter.pytest_plugin, "_CURRENT", [])
    result = _result([0.41996])
    with pytest.raises(MetricAssertionError) as exc:
        assert_metrics(result, {"answers.f1": ">=0.42", "f1": "<=1"}, system="rag-v2")
    assert str(exc.value).splitlines() == [
        "1 of 2 checks failed for rag-v2: answers.f1 = 0.41996 (expected >=0.42)",
        "system  metric      value    expected  verdict  n  statuses",
        "rag-v2  answers.f1  0.41996  >=0.42    FAIL     1  ok 1",
        "rag-v2  f1          0.4200   <=1       pass     1  ok 1",
    ]
    missing = _result([None, None], ["needs_llm", "needs_llm"])
    with pytest.raises(MetricSkipped) as skipped:
        assert_metrics(missing, {"answers.f1": ">=0.5"})
    assert skipped.value.reason == "ragmeter: answers.f1 has no value (needs_llm: 2 of 2 samples)"
    with pytest.raises(MetricAssertionError) as strict:
        assert_metrics(missing, {"answers.f1": ">=0.5"}, strict=True)
    assert str(strict.value).startswith(
        "1 of 1 checks failed for answers: answers.f1 has no value (needs_llm: 2 of 2 samples) "
        "(strict: a missing value fails)"
    )
    assert_metrics(_result([0.5, 0.7]), {"answers.f1": "0.59..0.61"})  # passes: no exception
    with pytest.raises(UsageError) as usage:
        assert_metrics(result, {"answers.f_1": ">=0.4"})
    assert str(usage.value) == "assert_metrics: unknown answers metric 'f_1'; did you mean 'f1'?"
    with pytest.raises(UsageError, match=r"use='ci': answers\.f1 of answers has no confidence"):
        assert_metrics(result, {"answers.f1": ">=0.4"}, use="ci")


def test_lock_one_computes_the_other_loads(tmp_path: Path) -> None:
    calls: list[int] = []

    def compute() -> dict[str, int]:
        calls.append(1)
        return {"value": 42}

    first = evaluate_once(tmp_path, "k1", compute, timeout=5)
    second = evaluate_once(tmp_path, "k1", compute, timeout=5)
    assert first == ({"value": 42}, True)
    assert second == ({"value": 42}, False)
    assert calls == [1]
    assert not (tmp_path / "ragmeter-k1.lock").exists()


def test_lock_failure_lets_the_next_worker_evaluate(tmp_path: Path) -> None:
    def broken() -> None:
        raise UsageError("bad config")

    with pytest.raises(UsageError):
        evaluate_once(tmp_path, "k2", broken, timeout=5)
    assert not (tmp_path / "ragmeter-k2.lock").exists()
    assert evaluate_once(tmp_path, "k2", lambda: "ok", timeout=5) == ("ok", True)


def test_lock_stale_and_timeout(tmp_path: Path) -> None:
    # a lock left by a process that no longer runs is removed
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    (tmp_path / "ragmeter-k3.lock").write_text(dead.stdout.strip())
    assert evaluate_once(tmp_path, "k3", lambda: 3, timeout=5) == (3, True)
    # a live holder (this process) makes the waiter time out, on an injected clock
    (tmp_path / "ragmeter-k4.lock").write_text(str(os.getpid()))
    now = [0.0]
    with pytest.raises(LockTimeout) as exc:
        evaluate_once(
            tmp_path,
            "k4",
            lambda: 4,
            timeout=60,
            clock=lambda: now[0],
            sleep=lambda s: now.__setitem__(0, now[0] + 10),
        )
    assert f"lock file {tmp_path / 'ragmeter-k4.lock'}" in str(exc.value)
    assert now[0] == 70.0
    assert parse_duration("6h") == 21600.0
    with pytest.raises(ValueError, match="ragmeter_lock_timeout: cannot read 'soon'"):
        parse_duration("soon")


def test_network_guard_blocks_non_loopback(pytester: pytest.Pytester) -> None:
    from ragmeter.testing._network import block_network

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    restore = block_network(lambda: "test_x.py::test_y")
    try:
        with socket.socket() as s:
            s.connect(server.getsockname())  # loopback stays open
        with socket.socket() as s, pytest.raises(OSError) as exc:
            s.connect(("192.0.2.1", 80))
        assert str(exc.value) == (
            "ragmeter_block_network: connection to ('192.0.2.1', 80) blocked in "
            "test_x.py::test_y (the session allows loopback only)"
        )
    finally:
        restore()
        server.close()
    assert socket.socket.connect.__name__ == "connect"


def test_judge_spend_in_the_summary_line() -> None:
    from ragmeter.testing.report import summary_lines

    def tail(*spends: tuple[str, float | None]) -> str:
        checks = [
            {"verdict": "pass", "evaluation_id": e, "judge_usd": usd, "system": "s", "metric": "m"}
            for e, usd in spends
        ]
        return summary_lines(checks, mode="short", store="temporary", cwd="/")[-1][0]

    assert tail(("e1", 0.125), ("e1", 0.125), ("e2", 0.5)) == (
        "checks: 3 passed, 0 failed, 0 skipped · judge spend $0.62"
    )
    assert tail(("e1", 0.0), ("e2", None)) == (
        "checks: 2 passed, 0 failed, 0 skipped · judge spend unknown (a call of unknown price)"
    )
    assert summary_lines([], mode="full", store="temporary", cwd="/")[-1][0] == (
        "checks: 0 passed, 0 failed, 0 skipped"
    )
