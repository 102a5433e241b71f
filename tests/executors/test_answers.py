"""``ragmeter answers`` on Dask gives byte-identical JSON to the in-process run."""

from __future__ import annotations

import functools
import itertools
import json
import os
import random

import pytest

from ragmeter.executors.answers import answers_settings, score_answers
from ragmeter.executors.dask import DaskExecutor
from ragmeter.executors.plan import line_shards
from ragmeter.executors.settings import ExecutorSettings
from tests.executors.faults import FaultyExecutor, kill_always, kill_once
from tests.helpers import invoke

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")

WORDS = "the cat sat on a mat Obama December 1972 Paris café naïve river bank of x".split()  # noqa: SIM905


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))


@pytest.fixture(scope="module")
def answers_file(tmp_path_factory):
    """230 rows: missing and null predictions, several golds, empty golds, blank lines,
    non-ASCII text, a byte-order mark and CRLF line ends."""
    rng = random.Random(15)
    path = tmp_path_factory.mktemp("answers") / "answers.jsonl"
    lines = []
    for i in range(230):
        row = {"id": f"s{i}", "question": _text(rng)}
        kind = i % 11
        if kind == 3:
            row["pred_answer"] = None
        elif kind != 5:
            row["pred_answer"] = _text(rng)
        if kind == 7:
            row["golden_answers"] = ["", _text(rng)]
        elif kind != 9:
            row["golden_answers"] = [_text(rng) for _ in range(rng.randint(1, 3))]
        lines.append(json.dumps(row, ensure_ascii=i % 2 == 0))
        if i % 37 == 0:
            lines.append("")
    text = "\ufeff" + "\r\n".join(lines[:50]) + "\r\n" + "\n".join(lines[50:]) + "\n"
    path.write_bytes(text.encode())
    return str(path)


ARGS = ("-m", "em,f1,rouge-l,rouge-1")


def _strip(stdout: str) -> str:
    data = json.loads(stdout)
    meta = data["ragmeter"].pop("executor")
    assert meta["kind"] == "dask" and meta["workers"] >= 1
    return json.dumps(data)


@pytest.fixture(scope="module")
def in_process(answers_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "rows.jsonl"
    res = invoke("answers", answers_file, *ARGS, "--per-sample", str(out))
    assert res.code == 0, res.stderr
    return res, out.read_bytes()


@pytest.mark.parametrize("partitions", [1, 2, 7, 60])
def test_same_json_on_the_session_cluster(
    answers_file, in_process, scheduler, partitions, tmp_path
):
    out = tmp_path / "rows.jsonl"
    res = invoke(
        "answers", answers_file, *ARGS, "--scheduler", scheduler,
        "--partitions", str(partitions), "--per-sample", str(out),
    )  # fmt: skip
    local, rows = in_process
    assert res.code == 0, res.stderr
    assert _strip(res.stdout) == json.dumps(json.loads(local.stdout))
    assert res.stdout.replace(', "executor": ' + json.dumps(
        json.loads(res.stdout)["ragmeter"]["executor"]
    ), "") == local.stdout  # fmt: skip
    assert out.read_bytes() == rows
    assert res.stderr == local.stderr  # same warnings, and no Dask log line


def test_same_json_on_a_fresh_one_worker_cluster(answers_file, in_process):
    res = invoke("answers", answers_file, *ARGS, "--workers", "1", "--partitions", "3")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["ragmeter"]["executor"]["workers"] == 1
    assert _strip(res.stdout) == json.dumps(json.loads(in_process[0].stdout))
    assert res.stderr == in_process[0].stderr


def test_local_cluster_workers_run_without_the_statistical_profiler():
    """Dask's profiler samples the running task every 10 ms for a dashboard a LocalCluster of
    ours does not serve; its workers have it off, and the driver's own config is untouched."""
    import dask

    with DaskExecutor(ExecutorSettings(kind="dask", workers=1)) as executor:
        seen = executor.client.run(
            lambda: __import__("dask").config.get("distributed.worker.profile.enabled")
        )
    assert list(seen.values()) == [False]
    assert dask.config.get("distributed.worker.profile.enabled") is True


def test_shards_cut_at_line_starts_and_number_rows_like_a_whole_read(answers_file):
    shards = line_shards(answers_file, 7, ())
    assert [s.index for s in shards] == list(range(7))
    assert sum(s.rows for s in shards) == 230
    assert [s.first_row for s in shards[1:]] == list(
        itertools.accumulate(s.rows for s in shards[:-1])
    )
    assert shards[0].start == 0 and shards[-1].end == -1
    assert all(a.end == b.start for a, b in itertools.pairwise(shards))
    with open(answers_file, "rb") as fh:
        data = fh.read()
    assert all(data[s.start - 1 : s.start] == b"\n" for s in shards[1:])
    assert [s.first_line - 1 for s in shards[1:]] == [
        data[: s.start].count(b"\n") for s in shards[1:]
    ]
    # every shard pickles small: nothing but paths, offsets and settings
    import pickle

    assert max(len(pickle.dumps(s)) for s in shards) < 64 * 1024


KEYS = {"id": "id", "pred": "pred_answer", "gold": "golden_answers",
        "question": "question", "groups": None}  # fmt: skip


def _settings(answers_file):
    from ragmeter.answers.options import resolve_options

    return answers_settings(KEYS, answers_file, resolve_options(["em", "f1", "rouge-l", "rouge-1"]))


def _api_run(dask_client, answers_file, wrap, work=None):
    executor = DaskExecutor(ExecutorSettings(kind="dask"), command="answers", client=dask_client)
    res, _notes = score_answers(
        FaultyExecutor(executor, wrap), answers_file, _settings(answers_file), partitions=4,
        work=work,
    )  # fmt: skip
    return res


def test_a_worker_killed_mid_task_gives_the_same_result(
    own_client, answers_file, in_process, tmp_path
):
    import os

    from ragmeter.io.jsonutil import dumps

    marker = str(tmp_path / "killed")
    # Dask's default allowed-failures (3): a nanny's restart that goes wrong on a slow machine
    # (dask/distributed#7312) must not turn the one kill into KilledWorker
    client = own_client(allowed_failures=3)
    res = _api_run(client, answers_file, lambda task: functools.partial(kill_once, task, marker, 2))
    assert os.path.exists(marker)  # the kill happened
    local = json.loads(in_process[0].stdout)
    assert json.loads(dumps(res.to_ultrarag_dict())) == local


def test_a_shard_that_always_kills_its_worker_is_one_line(own_client, answers_file):
    from ragmeter.errors import UsageError

    with pytest.raises(UsageError) as err:
        # two deaths, no restart needed: the shard moves from the first worker to the second
        _api_run(own_client(), answers_file, lambda task: functools.partial(kill_always, task, 1))
    assert str(err.value) == (
        "ragmeter answers: scoring shard 2 of 4 killed the workers that ran it (raise "
        "--worker-memory or --partitions)"
    )


def test_a_cluster_left_without_workers_is_one_line(own_client, monkeypatch):
    import ragmeter.executors.dask as dask_executor
    from ragmeter.errors import UsageError

    monkeypatch.setattr(dask_executor, "NO_WORKER_TIMEOUT", 1.0)
    monkeypatch.setattr(dask_executor, "POLL_S", 0.1)
    client = own_client()
    client.retire_workers(close_workers=True)  # and no nanny brings them back
    executor = DaskExecutor(ExecutorSettings(kind="dask"), command="answers", client=client)
    with pytest.raises(UsageError) as err:
        list(executor.run(abs, [-1, -2], label="scoring"))
    assert str(err.value) == (
        "ragmeter answers: scoring shard 1 of 2 waited 1 s for a Dask worker: the cluster has "
        "none left (expected workers that stay up, or nannies that restart them)"
    )


def test_stdin_is_refused_under_dask(scheduler):
    res = invoke("answers", "-", "--scheduler", scheduler)
    assert res.code == 2
    assert res.stderr.strip().splitlines()[-1].startswith("ragmeter answers: --executor dask")


@pytest.fixture(scope="module")
def variants_file(tmp_path_factory):
    """Rows for the other readers: multiple choice (integer golds index ``choices``), answer
    groups (``qa_pairs``), rows without an id (ids are row numbers), numbers as answers."""
    rng = random.Random(16)
    path = tmp_path_factory.mktemp("variants") / "variants.jsonl"
    with path.open("w") as fh:
        for i in range(90):
            row: dict = {"pred_answer": _text(rng) if i % 7 else 1972}
            if i % 3 == 0:
                row["choices"] = [_text(rng) for _ in range(3)]
                row["golden_answers"] = [rng.randint(0, 2)]
            else:
                row["golden_answers"] = [_text(rng), str(rng.randint(1, 3000))]
            row["qa_pairs"] = [
                {"short_answers": [_text(rng), _text(rng)]} for _ in range(rng.randint(1, 3))
            ]
            fh.write(json.dumps(row) + "\n")
    return str(path)


VARIANTS = {
    "ultrarag": ("--profile", "ultrarag", "-m", "acc,coverem,f1,rouge-l,stringem"),
    "flashrag": ("--profile", "flashrag", "-m", "em,acc,f1,rouge-2", "--empty-gold", "keep"),
    "groups": ("-m", "str-em-alce,em", "--gold-groups-key", "qa_pairs", "--agg", "em=mean"),
    "unicode": ("--tokenizer", "unicode", "-m", "f1,rouge-lsum,rouge-l"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_other_profiles_and_readers_give_the_same_json(variants_file, scheduler, variant):
    args = ("answers", variants_file, *VARIANTS[variant])
    local = invoke(*args)
    assert local.code == 0, local.stderr
    res = invoke(*args, "--scheduler", scheduler, "--partitions", "4")
    assert res.code == 0, res.stderr
    assert _strip(res.stdout) == json.dumps(json.loads(local.stdout))
    assert res.stderr == local.stderr


def test_semantic_metrics_are_refused_before_the_model_or_a_cluster(answers_file, monkeypatch):
    """Under Dask the refusal comes first: no model is loaded (5 s) and no cluster starts."""
    import ragmeter.answers.semantic as semantic

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(semantic, "load_minilm", no_load)
    res = invoke("answers", answers_file, "-m", "em,semantic-similarity", "--workers", "2")
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        "ragmeter answers: the semantic metrics do not run under --executor dask yet (expected "
        "lexical metrics, or the in-process executor)\n"
    )
    assert not os.path.exists(".ragmeter")  # no work dir: no executor was opened
