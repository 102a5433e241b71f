"""``ragmeter compare`` on Dask: row blocks of randomization tests, blocks of (metric, pair)
tests for the others, byte-identical JSON, and a re-run that resumes."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import random

import pytest

from tests.helpers import invoke

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    """Four systems × 120 queries: f1 in [0, 1] (float arithmetic), em in {0, 1} (the
    exact-integer path of the randomization test), one query without a value."""
    rng = random.Random(8)
    root = tmp_path_factory.mktemp("systems")
    paths = []
    for s in "abcd":
        path = root / f"{s}.jsonl"
        with path.open("w") as fh:
            for q in range(120):
                row = {"id": f"q{q:03d}", "f1": round(rng.random() * (1 + (s == "c")) / 2, 4)}
                row["em"] = float(rng.random() < 0.3 + 0.1 * "abcd".index(s))
                fh.write(json.dumps(row) + "\n")
        paths.append(str(path))
    return paths


CASES = {
    "randomization+bca": ("--ci", "bca", "--n-resamples", "299"),
    "t": ("--test", "t"),
    "wilcoxon-all": ("--test", "wilcoxon", "--family", "all", "--correction", "bh"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_json_in_process_and_on_the_session_cluster(systems, scheduler, case):
    args = ("compare", "--per-sample", *systems, "-m", "f1", "-m", "em", "--json", *CASES[case])
    local = invoke(*args)
    assert local.code == 0, local.stderr
    for partitions in ("1", "7"):
        res = invoke(*args, "--scheduler", scheduler, "--partitions", partitions)
        assert res.code == 0, res.stderr
        data = json.loads(res.stdout)
        assert data.pop("executor")["kind"] == "dask"
        assert json.dumps(data, indent=2) + "\n" == local.stdout
        assert res.stderr == local.stderr


def test_tables_are_identical_too(systems, scheduler):
    args = ("compare", "--per-sample", *systems, "-m", "f1")
    local = invoke(*args)
    res = invoke(*args, "--scheduler", scheduler)
    assert (res.code, local.code) == (0, 0)
    assert res.stdout == local.stdout


def test_trec_runs_are_evaluated_one_task_per_file(scheduler):
    from tests.helpers import CONFORMANCE

    data = CONFORMANCE / "trec_eval"
    files = [str(data / f) for f in ("qrels.test", "results.test", "results.trunc")]
    files.append(str(data / "results-302.test"))
    args = ("compare", *files, "-m", "nDCG@10", "-m", "RR", "--missing", "fill", "--json")
    local = invoke(*args)
    assert local.code == 0, local.stderr
    assert local.stderr.count("warning: ") == 2  # judged queries missing from two runs
    res = invoke(*args, "--scheduler", scheduler, "--partitions", "2")
    assert res.code == 0, res.stderr
    data_out = json.loads(res.stdout)
    assert data_out.pop("executor")["kind"] == "dask"
    assert json.dumps(data_out, indent=2) + "\n" == local.stdout
    assert res.stderr == local.stderr


def test_trec_runs_are_scored_and_tested_on_one_executor(scheduler, monkeypatch):
    """The runs' scoring and the tests share the command's executor: one cluster started (or
    connected to) per command, not one per phase."""
    from ragmeter import executors
    from tests.helpers import CONFORMANCE

    opened = []
    real = executors.make_executor

    def counted(*args, **kwargs):
        opened.append(kwargs.get("command"))
        return real(*args, **kwargs)

    monkeypatch.setattr(executors, "make_executor", counted)
    data = CONFORMANCE / "trec_eval"
    files = [str(data / f) for f in ("qrels.test", "results.test", "results.trunc")]
    res = invoke("compare", *files, "-m", "RR", "--missing", "fill", "--scheduler", scheduler)
    assert res.code == 0, res.stderr
    assert opened == ["compare"]


def test_a_bad_file_read_while_the_executor_opens_is_the_one_line_error(
    systems, scheduler, tmp_path
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q000", "f1": 0.5}\n{"id": "q001", "f1": NaN}\n')
    args = ("compare", "--per-sample", systems[0], str(bad), "-m", "f1", "--json")
    local = invoke(*args)
    res = invoke(*args, "--scheduler", scheduler, "--work-dir", str(tmp_path / "work"))
    assert (local.code, res.code) == (2, 2)
    assert res.stderr == local.stderr
    assert res.stderr.count("\n") == 1 and "bad.jsonl" in res.stderr, res.stderr
    assert res.stdout == ""


def test_a_bad_file_comes_before_a_scheduler_that_cannot_be_reached(systems, tmp_path, monkeypatch):
    """The files are read while the executor opens; when both fail, the file's error is the
    one reported, as it is in-process."""
    from ragmeter.executors import dask as dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 0.5)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q000", "f1": 0.5}\n{"id": "q001"\n')
    args = ("compare", "--per-sample", systems[0], str(bad), "-m", "f1")
    local = invoke(*args)
    res = invoke(*args, "--scheduler", "tcp://127.0.0.1:1", "--work-dir", str(tmp_path / "w"))
    assert (local.code, res.code) == (2, 2)
    assert res.stderr == local.stderr and "bad.jsonl:2:" in res.stderr
    good = invoke(
        "compare",
        "--per-sample",
        *systems[:2],
        "-m",
        "f1",
        "--scheduler",
        "tcp://127.0.0.1:1",
        "--work-dir",
        str(tmp_path / "w"),
    )
    assert good.code == 2 and "cannot connect to the Dask scheduler" in good.stderr


def test_row_blocks_cover_every_resample_once_and_follow_the_work():
    from ragmeter.executors.stats import _cut, row_blocks

    # one group, 2 workers: 4 blocks per worker; a tenth of the work gets a share of its own
    assert row_blocks([(999_999, 2_000, 105)], 2, None) == [8]
    assert row_blocks([(999_999, 2_000, 100), (999_999, 200, 100)], 2, None) == [7, 1]
    # at least about 0.2 s of work per block: 9,999 resamples × 7,000 × 105 make 2 blocks
    assert row_blocks([(9_999, 7_000, 105)], 2, None) == [2]
    assert row_blocks([(9_999, 200, 3)], 2, None) == [1]
    assert row_blocks([(299, 50, 3), (299, 50, 0)], 1, 7) == [7, 0]
    cuts = _cut(999_999, 8)
    assert cuts[0][0] == 0 and cuts[-1][1] == 999_999
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))
    assert {b - a for a, b in cuts} <= {124_999, 125_000}
    assert _cut(3, 7) == [(0, 1), (1, 2), (2, 3)]


class _Faulty:
    """``make_executor`` whose executor runs every task through ``wrap``."""

    def __init__(self, make, wrap):
        self.make, self.wrap = make, wrap

    @contextlib.contextmanager
    def __call__(self, *args, **kwargs):
        from tests.executors.faults import FaultyExecutor

        with self.make(*args, **kwargs) as inner:
            yield FaultyExecutor(inner, self.wrap)


@pytest.mark.parametrize("case", ["randomization", "t"])
def test_a_failed_block_is_recomputed_alone_by_the_rerun(
    systems, scheduler, tmp_path, monkeypatch, case
):
    import ragmeter.executors as executors
    from tests.executors.faults import count_runs, fail_once

    extra = ("--n-resamples", "999") if case == "randomization" else ("--test", "t")
    args = ("compare", "--per-sample", *systems, "-m", "f1", "-m", "em", "--json", *extra)
    local = invoke(*args)
    assert local.code == 0, local.stderr
    runs = tmp_path / "runs"
    runs.mkdir()
    marker = str(tmp_path / "failed-once")

    def wrap(task):
        return functools.partial(
            fail_once, functools.partial(count_runs, task, str(runs)), marker, 3
        )

    monkeypatch.setattr(executors, "make_executor", _Faulty(executors.make_executor, wrap))
    work = tmp_path / "work"
    dask = ("--scheduler", scheduler, "--partitions", "4", "--work-dir", str(work))
    first = invoke(*args, *dask)
    assert first.code != 0
    assert first.stderr.startswith("ragmeter compare: ") and "shard 4 of 4" in first.stderr
    assert "failed once" in first.stderr and len(first.stderr.splitlines()) == 1
    assert {0, 1, 2} <= {int(name.split("-")[0]) for name in os.listdir(runs)}
    for name in os.listdir(runs):
        os.remove(runs / name)
    second = invoke(*args, *dask)
    assert second.code == 0, second.stderr
    assert second.stderr.startswith(
        "ragmeter compare: resuming tests: 3 of 4 shards finished by an earlier run ("
    )
    assert sorted(int(name.split("-")[0]) for name in os.listdir(runs)) == [3]
    data = json.loads(second.stdout)
    assert data.pop("executor")["kind"] == "dask"
    assert json.dumps(data, indent=2) + "\n" == local.stdout
    # a success removes what the command left in the work dir
    assert sorted(os.listdir(work)) == [".lock", "payloads"] and os.listdir(work / "payloads") == []


def test_exact_enumeration_cut_into_row_blocks(tmp_path, scheduler):
    """11 queries: all 2^11 sign patterns are enumerated, here in 3 row blocks."""
    rng = random.Random(5)
    paths = []
    for s in "xyz":
        path = tmp_path / f"{s}.jsonl"
        rows = [{"id": f"q{q}", "m": round(rng.random(), 3)} for q in range(11)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(str(path))
    args = ("compare", "--per-sample", *paths, "-m", "m", "--json", "--alternative", "greater")
    local = invoke(*args)
    assert local.code == 0, local.stderr
    pairs = json.loads(local.stdout)["pairs"]
    assert {p["result"]["method"] for p in pairs} == {"exact"}
    assert {p["result"]["n_resamples"] for p in pairs} == {2048}
    res = invoke(*args, "--scheduler", scheduler, "--partitions", "3")
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data.pop("executor")["kind"] == "dask"
    assert json.dumps(data, indent=2) + "\n" == local.stdout
