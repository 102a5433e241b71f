"""``ragmeter trec QRELS RUN [RUN ...]``: order, all-or-nothing errors, output as run by run."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.helpers import CONFORMANCE, invoke
from tests.retrieval.conftest import trec_qrels_text, trec_run_text

DATA = CONFORMANCE / "trec_eval"
QRELS = str(DATA / "qrels.test")
RESULTS = str(DATA / "results.test")


@pytest.fixture
def runs(write):
    """Three different good runs against qrels.test (the conformance run and two variants)."""
    text = (DATA / "results.test").read_text()
    lines = text.splitlines(keepends=True)
    # a shorter run with another tag, and one whose scores are reversed within each query
    short = "".join(line.replace("STANDARD", "SHORT") for line in lines[::3])
    rev = []
    for line in lines:
        q, q0, d, r, s, _ = line.split()
        rev.append(f"{q} {q0} {d} {r} {-float(s)} REV\n")
    return [RESULTS, write("short.run", short), write("rev.run", "".join(rev))]


def _one(*args: str) -> str:
    res = invoke("trec", *args)
    assert res.code == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("extra", [(), ("-q", "-m", "all_trec"), ("-m", "P.5", "-n", "-q")])
def test_text_is_the_concatenation_in_the_given_order(runs, extra, trec_parser):
    singles = [_one(*extra, QRELS, r) for r in runs]
    assert len(set(singles)) == 3  # the three runs really score differently
    for order in ([0, 1, 2], [2, 0, 1], [1, 1, 0]):
        paths = [runs[i] for i in order]
        many = _one(*extra, QRELS, *paths)
        assert many == "".join(singles[i] for i in order)


def test_threads_do_not_change_the_output(runs):
    one = _one("-m", "all_trec", "--threads", "1", QRELS, *runs)
    two = _one("-m", "all_trec", "--threads", "2", QRELS, *runs)
    assert one == two
    assert one.count("runid                 \tall\t") == 3


def test_csv_is_one_record_set_with_a_run_column(runs):
    out = _one("--csv", "-m", "map", "-m", "P.5", QRELS, *runs)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["run", "runid", "qid", "measure", "value"]
    assert [r["run"] for r in rows if r["measure"] == "map"] == runs
    for path in runs:
        single = list(
            csv.DictReader(io.StringIO(_one("--format", "csv", "-m", "map P.5", QRELS, path)))
        )
        mine = [{k: v for k, v in r.items() if k != "run"} for r in rows if r["run"] == path]
        assert mine == single
    assert {r["runid"] for r in rows} == {"STANDARD", "SHORT", "REV"}


def test_json_is_one_document_with_a_run_per_record(runs):
    doc = json.loads(_one("--json", "-m", "map", QRELS, *runs))
    assert doc["ragmeter"]["command"] == "trec"
    assert [r["run"] for r in doc["runs"]] == runs
    for path, rec in zip(runs, doc["runs"], strict=True):
        single = json.loads(_one("--json", "-m", "map", QRELS, path))
        assert rec["summary"] == single["summary"]
        assert rec["inputs"]["run"]["sha256"] == single["inputs"]["run"]["sha256"]
    assert doc["runs"][0]["summary"]["map"] == pytest.approx(0.1785450604, abs=1e-10)


def test_a_bad_run_stops_everything_before_any_output(runs, write):
    bad = write("bad.run", trec_run_text([("301", "d1", 1.0)]) + "301 Q0 d2 2 x\n")
    res = invoke("trec", QRELS, runs[0], bad, runs[1])
    assert res.code == 2
    assert res.stdout == ""
    assert res.stderr == f"{bad}:2: 5 fields, expected 6 (qid Q0 docno rank score tag)\n"


def test_the_first_bad_run_in_the_given_order_is_reported(runs, write):
    bad1 = write("bad1.run", "301 Q0 d1 1 1.0 r\n301 Q0 d2 2 x r\n")
    bad2 = write("bad2.run", "301 Q0 d1 1 1.0 r\n301 Q0 d1 2 0.5 r\n")
    for order, first in (([bad1, bad2], bad1), ([bad2, bad1], bad2)):
        res = invoke("trec", QRELS, runs[0], *order, runs[2])
        assert res.code == 2
        assert res.stdout == ""
        assert res.stderr.startswith(f"{first}:2: ")
        assert res.stderr.count("\n") == 1  # one line, and no warning of the good runs


def test_warnings_of_every_run_in_order(write):
    qrels = write("q.txt", trec_qrels_text([("1", "a", 1), ("2", "b", 1)]))
    r1 = write("r1.run", trec_run_text([("1", "a", 1.0)]))
    r2 = write("r2.run", trec_run_text([("2", "b", 1.0)]))
    res = invoke("trec", "-m", "map", qrels, r1, r2)
    assert res.code == 0
    lines = res.stderr.splitlines()
    assert len(lines) == 2
    assert r1 in lines[0] and "'2'" not in lines[0] and ": 2" in lines[0]
    assert r2 in lines[1] and ": 1" in lines[1]
    assert res.stdout.count("map") == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "ultrarag"], "--format ultrarag takes one RUN"),
        (["--by-source", "--json"], "--by-source takes one RUN"),
    ],
)
def test_one_run_options_refuse_several(runs, args, message):
    res = invoke("trec", *args, QRELS, *runs[:2])
    assert res.code == 2
    assert res.stdout == ""
    assert res.stderr.startswith(f"ragmeter trec: {message}")


def test_stdin_only_once():
    res = invoke("trec", QRELS, "-", "-")
    assert res.code == 2
    assert res.stderr == "ragmeter trec: only one RUN can be '-' (stdin)\n"


@pytest.fixture
def spawned(monkeypatch):
    """Runs of any size evaluated in spawned worker processes (large runs take that path)."""
    import ragmeter.cli.trec_runs as trec_runs

    monkeypatch.setattr(trec_runs, "SPAWN_MIN_BYTES", 0)
    calls = []
    real = trec_runs.spawn_workers
    monkeypatch.setattr(
        trec_runs, "spawn_workers", lambda cfg, paths: calls.append(real(cfg, paths)) or calls[-1]
    )
    return calls


@pytest.mark.parametrize("parser", ["small", "regular"])  # the files' size picks "small"
def test_worker_processes_give_the_thread_output(runs, spawned, parser, monkeypatch):
    monkeypatch.setenv("RAGMETER_TREC_PARSER", parser)  # (the workers inherit it)
    for extra in ((), ("--json",), ("--csv", "-m", "all_trec")):
        order = [runs[2], runs[0], runs[1]]
        expected = _one(*extra, "--threads", "1", QRELS, *order)  # in this process
        assert _one(*extra, "--threads", "2", QRELS, *order) == expected
    assert spawned == [False, True] * 3


def test_worker_processes_report_the_first_bad_run(runs, write, spawned):
    bad1 = write("bad1.run", "301 Q0 d1 1 1.0 r\n301 Q0 d2 2 x r\n")
    bad2 = write("bad2.run", "301 Q0 d1 1 1.0 r\n301 Q0 d1 2 0.5 r\n")
    res = invoke("trec", "--threads", "2", QRELS, runs[0], bad2, bad1, runs[2])
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.startswith(f"{bad2}:2: ")
    assert res.stderr.count("\n") == 1
    assert spawned == [True]


def test_worker_processes_report_a_bad_qrels_as_one_process_does(runs, write, spawned):
    bad = write("bad.qrels", "301 0 d1 1\n301 0 d2 x\n")
    expected = invoke("trec", "--threads", "1", bad, *runs)  # in this process
    res = invoke("trec", "--threads", "2", bad, *runs)
    assert (res.code, res.stdout, res.stderr) == (2, "", expected.stderr)
    assert expected.stderr.startswith(f"{bad}:2: ")
    assert res.stderr.count("\n") == 1
    assert spawned == [False, True]


def test_worker_processes_refuse_an_unknown_measure_as_one_process_does(runs, spawned):
    expected = invoke("trec", "--threads", "1", "-m", "bogus", QRELS, *runs)
    res = invoke("trec", "--threads", "2", "-m", "bogus", QRELS, *runs)
    assert (res.code, res.stdout, res.stderr) == (expected.code, "", expected.stderr)
    assert expected.code == 2 and expected.stderr.count("\n") == 1
    assert spawned == [False, True]
