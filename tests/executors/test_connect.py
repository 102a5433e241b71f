"""Connecting to a cluster: one line, exit 2, for every way it can fail."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

import ragmeter.executors.dask as dask_executor
from ragmeter.errors import UsageError
from ragmeter.executors.dask import DaskExecutor
from ragmeter.executors.settings import ExecutorSettings
from tests.helpers import invoke


@pytest.fixture
def answers_file(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"golden_answers": ["x"], "pred_answer": "x"}\n')
    return str(path)


def test_unreachable_scheduler_is_one_line(answers_file, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 1)
    res = invoke("answers", answers_file, "--scheduler", "tcp://127.0.0.1:9")
    assert res.code == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(
        "ragmeter answers: cannot connect to the Dask scheduler at tcp://127.0.0.1:9 ("
    )
    assert lines[0].endswith("expected a running scheduler reachable from this machine)")


def test_scheduler_that_is_neither_address_nor_file(answers_file, tmp_path):
    res = invoke("answers", answers_file, "--scheduler", str(tmp_path / "nope.json"))
    assert res.code == 2
    assert res.stderr.strip() == (
        f"ragmeter answers: --scheduler '{tmp_path / 'nope.json'}' is neither an address nor "
        "a scheduler file (expected tcp://HOST:PORT or the path of a Dask scheduler file)"
    )


@pytest.mark.parametrize("text", ["not json", "{}", '["x"]', '{"address": 8786}'])
def test_a_file_that_is_not_a_scheduler_file_is_one_line(answers_file, tmp_path, text):
    path = tmp_path / "scheduler.json"
    path.write_text(text)
    res = invoke("answers", answers_file, "--scheduler", str(path))
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        f"ragmeter answers: --scheduler {path} is not a Dask scheduler file (expected JSON "
        'with the scheduler\'s "address", as `dask scheduler --scheduler-file` writes it)\n'
    )


def test_a_scheduler_file_names_the_cluster(answers_file, tmp_path, scheduler):
    path = tmp_path / "scheduler.json"
    path.write_text(json.dumps({"type": "Scheduler", "address": scheduler}))
    res = invoke("answers", answers_file, "--scheduler", str(path), "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["ragmeter"]["executor"]["cluster"] == "existing"


def test_environment_scheduler_is_used(answers_file, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 1)
    monkeypatch.setenv("RAGMETER_DASK_SCHEDULER", "tcp://127.0.0.1:9")
    res = invoke("answers", answers_file)
    assert res.code == 2
    assert res.stderr.startswith(
        "ragmeter answers: cannot connect to the Dask scheduler at tcp://127.0.0.1:9 ("
    )
    monkeypatch.setenv("RAGMETER_EXECUTOR", "local")  # a flag still wins over both
    res = invoke("answers", answers_file, "--executor", "local")
    assert res.code == 0, res.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--executor", "local", "--workers", "2"), "ragmeter answers: --executor local contra"),
        (("--workers", "0"), "ragmeter answers: --workers must be a positive integer, not 0"),
        (("--executor", "spark"), "ragmeter answers: --executor 'spark' is not known"),
    ],
)
def test_bad_flags_are_one_line(answers_file, flags, message):
    res = invoke("answers", answers_file, *flags)
    assert res.code == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert res.stderr.startswith(message)


class _Client:
    """Stands for a distributed Client whose worker runs another ragmeter."""

    def get_versions(self, packages):
        mine = {"ragmeter": "0.5.0", "numpy": "2.0", "pyarrow": "20", "scipy": "1.15"}
        return {
            "client": {"packages": mine},
            "scheduler": {"packages": mine},
            "workers": {"tcp://10.0.0.7:40123": {"packages": {**mine, "ragmeter": "0.4.1"}}},
        }


def test_version_mismatch_is_one_line():
    with pytest.raises(UsageError) as err:
        DaskExecutor(ExecutorSettings(kind="dask"), command="trec", client=_Client())
    assert str(err.value) == (
        "ragmeter trec: worker tcp://10.0.0.7:40123 has ragmeter 0.4.1, the driver has 0.5.0 "
        "(install the same version everywhere)"
    )


NO_GUARD = """
from ragmeter.executors import make_executor, resolve_settings
make_executor(resolve_settings(workers=1, env={})).close()
"""


def _script(tmp_path: Any, text: str) -> tuple[list[str], dict[str, Any]]:
    """The command line and ``subprocess`` keywords that run ``text`` as a script of its own,
    with this checkout's ragmeter importable."""
    import sys

    from tests.helpers import REPO

    script = tmp_path / "script.py"
    script.write_text(text)
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
    return [sys.executable, str(script)], {"text": True, "cwd": tmp_path, "env": env}


def test_a_script_without_a_main_guard_gets_the_hint(tmp_path):
    pytest.importorskip("distributed")
    import subprocess

    argv, kwargs = _script(tmp_path, NO_GUARD)
    proc = subprocess.run(argv, capture_output=True, timeout=180, **kwargs)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "ragmeter.errors.UsageError: ragmeter: starting Dask workers failed; call ragmeter from "
        "inside \"if __name__ == '__main__':\" in scripts"
    )


SIGTERM_SCRIPT = """
import os, signal, sys, time
from ragmeter.executors import make_executor
from ragmeter.executors.settings import ExecutorSettings

if __name__ == "__main__":
    executor = make_executor(ExecutorSettings(kind="dask", workers=1), command="trec")
    print(*executor.client.run(os.getpid).values(), flush=True)
    try:
        list(executor.run(time.sleep, [120.0], label="sleep"))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    finally:
        executor.close()
    print("restored", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, flush=True)
    sys.exit(130)
"""


def test_sigterm_closes_the_local_cluster_as_ctrl_c_does(tmp_path):
    """A CI timeout's SIGTERM: the command closes its cluster (no worker left, no warning from
    multiprocessing about leaked semaphores) and exits as interrupted."""
    pytest.importorskip("distributed")
    import signal
    import subprocess
    import time

    argv, kwargs = _script(tmp_path, SIGTERM_SCRIPT)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    try:
        assert proc.stdout is not None
        worker = int(proc.stdout.readline())
        time.sleep(0.5)  # the task is on the worker, the driver waits for it
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert out.split() == ["interrupted", "restored", "True"]
    assert "leaked" not in err and "Traceback" not in err, err
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


CTRL_C_AT_START = """
import os, signal
import ragmeter.executors.dask as dask_executor
from ragmeter.executors import make_executor
from ragmeter.executors.settings import ExecutorSettings

real, started = dask_executor.start_local_cluster, []


def interrupted_start(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the workers start
    started.append(real(*args, **kwargs))
    return started[-1]


dask_executor.start_local_cluster = interrupted_start
if __name__ == "__main__":
    try:
        make_executor(ExecutorSettings(kind="dask", workers=1), command="trec")
    except KeyboardInterrupt:
        print("interrupted", started[0].status.name, flush=True)
"""


def test_ctrl_c_while_the_cluster_starts_closes_it(tmp_path):
    """Dask gives no handle on a cluster whose start was interrupted: the signal waits for the
    start to end, then the cluster is closed (no leaked semaphores from its workers)."""
    pytest.importorskip("distributed")
    import subprocess

    argv, kwargs = _script(tmp_path, CTRL_C_AT_START)
    proc = subprocess.run(argv, capture_output=True, timeout=120, **kwargs)
    assert proc.stdout.split() == ["interrupted", "closed"], proc.stderr
    assert "leaked" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_more_local_workers_than_the_memory_holds_is_one_line(answers_file, monkeypatch):
    """Each worker's default share of 0.8 × RAM must hold a worker's imports: below 256 MiB the
    nannies would stop the workers over and over."""
    pytest.importorskip("distributed")
    monkeypatch.setattr(dask_executor, "_ram", lambda: 4 << 30)
    res = invoke("answers", answers_file, "--workers", "13")
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        "ragmeter answers: --workers 13 would leave each worker 252 MiB of this machine's 4.0 "
        "GiB (expected at most 12 workers here, or --worker-memory SIZE)\n"
    )


def test_a_bad_worker_memory_is_one_line(answers_file):
    pytest.importorskip("distributed")
    res = invoke("answers", answers_file, "--workers", "1", "--worker-memory", "lots")
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        "ragmeter answers: --worker-memory 'lots' is not a size (Could not interpret 'lots' as a "
        "byte unit; expected e.g. 2GiB)\n"
    )


# -- paths a worker cannot see --------------------------------------------------------------------
# /proc/self/fd/N names a file descriptor of the process that opens the path: the driver holds
# descriptor N, the workers do not, so the path exists for the driver only (like a local disk).


@pytest.fixture
def driver_only(tmp_path):
    opened = []

    def make(target, *, directory=False):
        fd = os.open(target, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
        high = os.dup2(fd, 900 + len(opened))
        os.close(fd)
        opened.append(high)
        return f"/proc/self/fd/{high}"

    yield make
    for fd in opened:
        os.close(fd)


def test_an_input_the_workers_cannot_see_is_one_line(tmp_path, driver_only, scheduler):
    path = tmp_path / "a.jsonl"
    path.write_text('{"golden_answers": ["x"], "pred_answer": "x"}\n')
    hidden = driver_only(path)
    res = invoke("answers", hidden, "-m", "em", "--scheduler", scheduler)
    assert res.code == 2
    address = res.stderr.split("worker ")[1].split(" ")[0]
    assert res.stderr == (
        f"ragmeter answers: {hidden} is not visible from worker {address} (expected the inputs "
        "on a filesystem shared by all workers, under the same path)\n"
    )


def test_a_work_dir_the_workers_cannot_see_is_one_line(tmp_path, driver_only, scheduler):
    from tests.runner.test_engines import config

    (tmp_path / "work").mkdir()
    hidden = driver_only(tmp_path / "work", directory=True)
    cfg = config({"answers": {}})
    (tmp_path / "ragmeter.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    res = invoke(
        "run",
        str(tmp_path / "ragmeter.yaml"),
        "--no-store",
        "-q",
        "--scheduler",
        scheduler,
        "--work-dir",
        hidden,
        "--results-dir",
        str(tmp_path / "results"),
    )
    assert res.code == 2
    address = res.stderr.split("worker ")[1].split(" ")[0]
    assert res.stderr == (
        f"ragmeter run: --work-dir {hidden} is not visible from worker {address} (use a "
        "filesystem shared by all workers)\n"
    )
    assert sorted(os.listdir(tmp_path / "work")) == [".lock", "payloads"]  # the probe was removed


def _worker_settings() -> tuple[dict[str, str | None], str, str, int]:
    import logging

    import dask

    return (
        {k: os.environ.get(k) for k in dask_executor.KEEP_FREED_MEMORY},
        dask.config.get("distributed.admin.tick.interval"),
        dask.config.get("distributed.worker.memory.monitor-interval"),
        logging.getLogger("distributed").getEffectiveLevel(),
    )


def test_the_local_cluster_settings_reach_its_workers(monkeypatch):
    """The workers of the LocalCluster ragmeter starts keep the memory they free (the
    allocators' variables are set before their processes start; one the user set wins), time
    their event loop once a second, and log nothing below CRITICAL. The variables the nannies
    set in the driver's environment to start them are taken out again."""
    pytest.importorskip("distributed")
    import logging

    # a LocalCluster started earlier in this process (not ragmeter's) leaves Dask's variables
    for key in dask_executor.PRE_SPAWN_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "25")
    before = dict(os.environ)
    with DaskExecutor(ExecutorSettings(kind="dask", workers=1), command="answers") as ex:
        assert dict(os.environ) == before
        seen = list(ex.client.run(_worker_settings).values())
    assert dict(os.environ) == before
    assert seen == [
        (
            {
                "MALLOC_TRIM_THRESHOLD_": "268435456",
                "MALLOC_TOP_PAD_": "67108864",
                "MALLOC_MMAP_THRESHOLD_": "67108864",
                "MIMALLOC_PURGE_DELAY": "25",
                "RAGMETER_KEEP_FREED_MEMORY": "1",
            },
            "1s",
            "250ms",
            logging.CRITICAL,
        )
    ]
