"""What ``ragmeter trec`` loads and sets up before it parses (docs/retrieval.md, "Speed")."""

from __future__ import annotations

import os

import pytest

from ragmeter.cli import trec_main
from tests.helpers import CONFORMANCE, fresh_python

QRELS = CONFORMANCE / "trec_eval" / "qrels.test"


# the Arrow parse, which a regular file of this size would not take by itself
ARROW = {"RAGMETER_TREC_PARSER": "arrow"}


def _arrow_sized_run(tmp_path):
    """A run over 512 KiB (not parsed in plain Python): results.test repeated under new qids,
    its fields separated by single spaces (the CSV reader's fast path)."""
    lines = (CONFORMANCE / "trec_eval" / "results.test").read_text().splitlines()
    out = []
    for copy in range(12):
        for line in lines:
            qid, *rest = line.split()
            out.append(" ".join([qid + ("" if copy == 0 else f"x{copy}"), *rest]))
    run = tmp_path / "run.txt"
    run.write_text("\n".join(out) + "\n")
    assert run.stat().st_size > 512 * 1024
    return run


def _loaded(proc) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}


def test_a_medium_regular_run_loads_no_arrow(tmp_path):
    run = _arrow_sized_run(tmp_path)
    argv = ["-m", "ragmeter", "trec", "-m", "all_trec", "--quiet", str(QRELS), str(run)]
    proc = fresh_python("-X", "importtime", *argv)
    assert proc.stdout == fresh_python(*argv, env=ARROW).stdout
    loaded = _loaded(proc)
    # the run (over 512 KiB) by the numpy parse, the qrels (under) by the plain-Python one
    assert {"ragmeter.io.trec.regular", "ragmeter.io.trec.small"} <= loaded
    assert "pyarrow" not in loaded


def test_the_arrow_path_loads_neither_cloudpickle_nor_the_registry(tmp_path):
    run = _arrow_sized_run(tmp_path)
    argv = ["-m", "ragmeter", "trec", "-m", "all_trec", "--quiet", str(QRELS), str(run)]
    proc = fresh_python("-X", "importtime", *argv, env=ARROW)
    assert proc.stdout.startswith("runid ")
    loaded = _loaded(proc)
    assert {"pyarrow", "pyarrow.lib", "ragmeter.retrieval.engine"} <= loaded
    unwanted = {"cloudpickle", "logging", "ragmeter.registry", "ragmeter.retrieval.zscores"}
    assert not unwanted & loaded, unwanted & loaded


def test_in_process_callers_import_pyarrow_as_it_comes(tmp_path):
    """Only the console process (which ends after the command) refuses cloudpickle."""
    run = _arrow_sized_run(tmp_path)
    code = (
        "import os, sys\n"
        "from ragmeter.cli.entry import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"code = main(['trec', '--quiet', {str(QRELS)!r}, {str(run)!r}])\n"
        "sys.stdout = sys.__stdout__\n"
        "print(code, 'cloudpickle' in sys.modules)"
    )
    proc = fresh_python("-c", code, env=ARROW)
    assert proc.stdout.strip().splitlines()[-1] == "0 True"


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


@pytest.fixture
def libc(monkeypatch):
    import ctypes

    fake = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: fake)
    for var in [v for v in os.environ if v.startswith("MALLOC_")]:
        monkeypatch.delenv(var)
    return fake


def test_medium_inputs_keep_the_memory_they_free(libc, tmp_path):
    run = _arrow_sized_run(tmp_path)
    trec_main._keep_freed_memory([str(QRELS), str(run)])
    # M_TRIM_THRESHOLD 256 MiB, M_TOP_PAD and M_MMAP_THRESHOLD 64 MiB
    assert libc.calls == [(-1, 256 << 20), (-2, 64 << 20), (-3, 64 << 20)]


def test_large_inputs_and_a_user_setting_leave_the_allocator_alone(libc, tmp_path, monkeypatch):
    run = _arrow_sized_run(tmp_path)
    monkeypatch.setattr(trec_main, "_KEEP_FREED_INPUTS", run.stat().st_size)
    trec_main._keep_freed_memory([str(QRELS), str(run)])
    assert libc.calls == []
    monkeypatch.setattr(trec_main, "_KEEP_FREED_INPUTS", 64 << 20)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    trec_main._keep_freed_memory([str(QRELS), str(run)])
    assert libc.calls == []
