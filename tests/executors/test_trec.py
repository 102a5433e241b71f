"""``ragmeter trec`` on Dask: a run grouped by query, cut at query boundaries."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from ragmeter.executors.retrieval import query_cuts
from tests.helpers import CONFORMANCE, invoke

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")

DATA = CONFORMANCE / "trec_eval"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")

CASES = {
    "per-query": ("-q",),
    "all_trec -c": ("-q", "-c", "-m", "all_trec"),
    "json": ("--json", "-q"),
    "csv": ("--format", "csv", "-q", "-m", "official"),
    "ultrarag": ("-m", "ultrarag", "--format", "ultrarag"),
    "judged-only, -M": ("-J", "-M", "20", "-m", "P.5,10", "-m", "map"),
}


def _same(local, res, fmt_json: bool) -> None:
    assert res.code == local.code == 0, res.stderr
    if fmt_json:
        data = json.loads(res.stdout)
        assert data.pop("executor")["kind"] == "dask"
        assert json.dumps(data, indent=2) + "\n" == local.stdout
    else:
        assert res.stdout == local.stdout
    assert res.stderr == local.stderr


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """45 queries × up to 40 documents, tied scores, graded judgments, queries on one side
    only (qrels without a run line, run lines without judgments)."""
    rng = random.Random(1515)
    root = tmp_path_factory.mktemp("trec")
    qrels, run = [], []
    for q in range(50):
        qid = f"{rng.randint(1, 10**6)}" if q % 9 else f"topic-{q}"
        docs = [f"D{rng.randint(0, 300)}" for _ in range(rng.randint(1, 40))]
        if q % 13 != 5:
            for d in sorted(set(docs[::2])):
                qrels.append(f"{qid} 0 {d} {rng.choice([0, 0, 1, 2])}\n")
        if q % 11 != 4:
            for rank, d in enumerate(dict.fromkeys(docs)):
                score = round(rng.random(), 1)  # many ties
                run.append(f"{qid} Q0 {d} {rank} {score} sys{q % 2}\n")
    (root / "qrels").write_text("".join(qrels))
    (root / "run").write_text("".join(run))
    return str(root / "qrels"), str(root / "run")


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_output_in_process_and_on_the_session_cluster(scheduler, case, synthetic):
    many = ("1", "2", "7", "60") if case == "json" else ("3", "60")
    for qrels, run, counts in ((QRELS, RUN, ("2",)), (*synthetic, many)):
        args = (*CASES[case], qrels, run)
        local = invoke("trec", *args)
        for partitions in counts:
            res = invoke("trec", "--scheduler", scheduler, "--partitions", partitions, *args)
            _same(local, res, "--json" in args)


def test_cuts_fall_between_queries(synthetic):
    RUN = synthetic[1]
    data = Path(RUN).read_bytes()
    cuts = query_cuts(RUN, 60)
    assert len(cuts) > 20
    assert cuts[0][0] == 0 and cuts[-1][1] == len(data)
    assert all(b == a2 for (_, b), (a2, _) in itertools.pairwise(cuts))  # contiguous
    for a, b in cuts:
        if a:
            last = data[:a].splitlines()[-1].split()[0]
            first = data[a:b].splitlines()[0].split()[0]
            assert last != first  # no query spans two shards


def test_more_cuts_asked_than_queries_give_one_range_per_query(synthetic):
    """--partitions far above the number of queries: every query boundary is a cut, and the
    search stops at the last query (it used to rescan it once per cut asked)."""
    RUN = synthetic[1]
    data = Path(RUN).read_bytes()
    qids = [line.split()[0] for line in data.splitlines()]
    cuts = query_cuts(RUN, 10**6)
    assert len(cuts) == len(dict.fromkeys(qids))
    for a, b in cuts:
        assert len({line.split()[0] for line in data[a:b].splitlines()}) == 1


@pytest.mark.parametrize("fault", ["duplicate", "score"])
def test_an_error_in_a_late_shard_is_the_in_process_message(scheduler, tmp_path, fault):
    lines = Path(RUN).read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.run"
    if fault == "duplicate":
        bad.write_bytes(b"".join([*lines[:-3], lines[-3], lines[-3], *lines[-2:]]))
    else:
        wrong = lines[-3].rsplit(None, 2)[0] + b" 1.5x tag\n"
        bad.write_bytes(b"".join([*lines[:-3], wrong, *lines[-2:]]))
    local = invoke("trec", QRELS, str(bad))
    res = invoke("trec", "--scheduler", scheduler, "--partitions", "7", QRELS, str(bad))
    assert local.code == res.code == 2
    # the line number counts every line of the earlier shards
    line = len(lines) - 1 if fault == "duplicate" else len(lines) - 2
    assert f"bad.run:{line}:" in local.stderr, local.stderr
    assert res.stderr == local.stderr


def test_a_run_not_grouped_by_query_takes_the_hash_plan(scheduler, tmp_path):
    lines = Path(RUN).read_bytes().splitlines(keepends=True)
    shuffled = tmp_path / "shuffled.run"
    shuffled.write_bytes(b"".join(lines[1::2] + lines[0::2]))
    local = invoke("trec", "-q", QRELS, str(shuffled))
    res = invoke("trec", "-q", "--scheduler", scheduler, "--partitions", "4", QRELS, str(shuffled))
    assert res.code == local.code == 0
    assert res.stdout == local.stdout
    assert res.stderr == local.stderr


def test_bad_executor_flags_are_one_line():
    res = invoke("trec", "--workers", "0", QRELS, RUN)
    assert (res.code, res.stderr) == (2, "ragmeter trec: --workers needs an integer ≥ 1, not 0\n")
    res = invoke("trec", "--executor", "local", "--workers", "2", QRELS, RUN)
    assert (res.code, res.stderr) == (
        2,
        "ragmeter trec: --executor local contradicts --workers (expected --executor dask, or no "
        "scheduler and no workers)\n",
    )
