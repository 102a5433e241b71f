"""Interrupted runs keep every finished call: ``kill -9`` (a real subprocess) and Ctrl-C."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, invoke
from tests.systems import fake_system
from tests.systems.conftest import fake, write_config

CLASSIFY = {"classification": {"profile": "heritage"}}


def _cached_args(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {json.loads(a)["text"] for (a,) in conn.execute("SELECT args FROM calls")}


def test_kill_9_then_rerun_repeats_no_finished_call(project: Path) -> None:
    log = project / "calls.log"
    config = write_config(
        project,
        [fake(concurrency=2, init={"delay": 0.15, "log": str(log)})],
        tasks=CLASSIFY,
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "run", str(config), "-q", "--no-store",
         "--systems-cache", "calls.sqlite"],
        cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 5:
            break
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    finished = [json.loads(line)[1] for line in log.read_text().splitlines()]
    kept = _cached_args(project / "calls.sqlite")
    # every committed call had finished; at most the calls in flight were lost
    assert kept <= set(finished)
    assert 3 <= len(kept) < 12 and len(set(finished) - kept) <= 2
    log.unlink()
    res = invoke("run", str(config), "-q", "--no-store", "--systems-cache", "calls.sqlite")
    assert res.code == 0, res.stderr
    again = [json.loads(line)[1] for line in log.read_text().splitlines()]
    assert len(again) == 12 - len(kept)
    assert not set(again) & kept  # no finished call was repeated
    assert len(_cached_args(project / "calls.sqlite")) == 12


class _Interrupting(fake_system.SyncSystem):
    """Presses Ctrl-C (SIGINT to this process) during its fifth classify call."""

    def classify(self, text: str) -> str:
        label = super().classify(text)
        if fake_system.CALLS["classify"] == 5:
            time.sleep(0.3)  # the collector commits the fourth result first
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # the main thread gets KeyboardInterrupt meanwhile
        return label


class _AsyncInterrupting(fake_system.SyncSystem):
    """The same from an ``async def`` method."""

    async def classify(self, text: str) -> str:  # type: ignore[override]
        label = super().classify(text)
        if fake_system.CALLS["classify"] == 5:
            await asyncio.sleep(0.3)  # the collector commits the fourth result first
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(1)
        return label


@pytest.mark.parametrize("system", [_Interrupting, _AsyncInterrupting])
def test_ctrl_c_keeps_finished_calls_and_exits_130(
    project: Path, monkeypatch: Any, system: type
) -> None:
    monkeypatch.setattr(fake_system, "Interrupting", system, raising=False)
    config = write_config(project, [fake("Interrupting", concurrency=1)], tasks=CLASSIFY)
    res = invoke("run", str(config), "-q", "--no-store", "--systems-cache", "calls.sqlite")
    assert res.code == 130
    assert res.stderr.strip() == "ragmeter: interrupted (finished work is kept)"
    kept = _cached_args(project / "calls.sqlite")
    assert len(kept) == 4  # the four calls that had returned; the fifth was in flight
    assert not any(p.name == "summary.json" for p in Path("results").rglob("*"))
    fake_system.CALLS.clear()
    monkeypatch.setattr(fake_system, "Interrupting", fake_system.SyncSystem, raising=False)
    res = invoke("run", str(config), "-q", "--no-store", "--systems-cache", "calls.sqlite")
    assert res.code == 0, res.stderr
    assert fake_system.CALLS == {"classify": 8}
