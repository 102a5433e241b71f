"""``ragmeter trec`` on Dask with a run not grouped by query: the hash plan (map and reduce
tasks, Parquet in a work dir the workers share), against the in-process output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragmeter.retrieval import spill
from tests.helpers import invoke
from tests.retrieval.spill_data import CASES, shuffled_run

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return shuffled_run(tmp_path_factory.mktemp("hash"), queries=120, seed=77)


def _same(local, res) -> dict:
    assert (res.code, res.stderr) == (local.code, local.stderr), res.stderr
    if res.stdout.startswith("{") and '"executor"' in res.stdout:
        doc = json.loads(res.stdout)
        meta = doc.pop("executor")
        assert json.dumps(doc, indent=2, ensure_ascii=False) + "\n" == local.stdout
        return meta
    assert res.stdout == local.stdout
    return {}


@pytest.mark.parametrize("case", sorted(CASES))
def test_shuffled_run_on_two_workers_gives_the_in_process_output(scheduler, data, case):
    qrels, run, _ = data
    local = invoke("trec", *CASES[case], qrels, run)
    assert local.code == 0
    for parts in ("3", "7") if case in ("json -q", "text -q") else ("5",):
        res = invoke(
            "trec", "--scheduler", scheduler, "--partitions", parts, *CASES[case], qrels, run
        )
        meta = _same(local, res)
        if meta:
            assert (meta["kind"], meta["plan"], meta["partitions"]) == ("dask", "hash", int(parts))


def test_plan_hash_on_a_grouped_run_and_the_spill_dir_left_clean(scheduler, data, tmp_path):
    qrels, _, grouped = data
    local = invoke("trec", "--json", "-q", "-m", "all_trec", qrels, grouped)
    work = tmp_path / "shared"
    work.mkdir()
    args = ("--json", "-q", "-m", "all_trec", "--spill", str(work), qrels, grouped)
    res = invoke("trec", "--scheduler", scheduler, "--plan", "hash", "--partitions", "4", *args)
    assert _same(local, res)["plan"] == "hash"
    assert os.listdir(work) == []  # the map files are gone, the directory given stays
    res = invoke("trec", "--scheduler", scheduler, *args)
    assert _same(local, res)["plan"] == "grouped"


def test_plan_grouped_refuses_a_shuffled_run(scheduler, data):
    qrels, run, _ = data
    res = invoke("trec", "--scheduler", scheduler, "--plan", "grouped", qrels, run)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        f"ragmeter trec: --plan grouped needs a run grouped by query, and {run} is not "
        "(expected --plan hash or auto)\n"
    )


def test_duplicates_and_malformed_lines_give_the_in_process_message(scheduler, data, tmp_path):
    qrels, run, _ = data
    lines = Path(run).read_text(encoding="utf-8").splitlines(keepends=True)
    qids = [ln.split()[0].encode() for ln in lines]
    a = next(i for i in range(20, 300) if spill.bucket_of(qids[i], 5) == 4)
    b = next(i for i in range(20, 300) if spill.bucket_of(qids[i], 5) == 0)
    dup = tmp_path / "dup.run"
    dup.write_text("".join([*lines[:700], lines[a], *lines[700:1100], lines[b], *lines[1100:]]))
    bad = tmp_path / "bad.run"
    bad.write_text("".join([*lines[:1200], "q1 Q0 D1 1\n", *lines[1200:], "q1 Q0 D1 x 1 r\n"]))
    for path in (dup, bad):
        local = invoke("trec", qrels, str(path))
        assert local.code == 2 and local.stderr.startswith(f"{path}:")
        res = invoke("trec", "--scheduler", scheduler, "--partitions", "5", qrels, str(path))
        assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)


def test_an_empty_run_gives_the_in_process_message(scheduler, data, tmp_path):
    empty = tmp_path / "empty.run"
    empty.write_text("# nothing here\n")
    local = invoke("trec", data[0], str(empty))
    assert local.code == 2 and "no data lines" in local.stderr
    res = invoke("trec", "--scheduler", scheduler, "--plan", "hash", data[0], str(empty))
    assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)
