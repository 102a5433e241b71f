"""``ragmeter compare`` on Dask: blocks of (metric, pair) tests, byte-identical JSON."""

from __future__ import annotations

import json
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
