"""``ragmeter run`` on Dask: the summary is byte-identical to the in-process run apart from its
``executor`` block, whether the tasks run on the session's 2 workers or on 3 new ones."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import InputError, UsageError
from ragmeter.io.jsonutil import dumps
from ragmeter.runner.config import load_config
from ragmeter.runner.pipeline import run_pipeline
from tests.helpers import invoke
from tests.runner.test_engines import config

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")

TASKS = {"retrieval": {"measures": ["nDCG@10", "RR", "P@5"]}, "answers": {}, "steps": {}}
COMPARE = {"baseline": "bm25-v3", "n_resamples": 499, "seed": 3}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for var in ("RAGMETER_LLM_BASE_URL", "RAGMETER_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("RAGMETER_EXECUTOR", raising=False)
    monkeypatch.delenv("RAGMETER_DASK_SCHEDULER", raising=False)
    return tmp_path


def _comparable(summary: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The summary without what differs between any two runs (ids, clock) and its executor."""
    s = dict(summary)
    executor = s.pop("executor", None)
    for key in ("evaluation_id", "created_at", "finished_at"):
        s.pop(key)
    s["systems"] = [{k: v for k, v in sy.items() if k != "run_id"} for sy in s["systems"]]
    return dumps(s, indent=1), executor


def _run(tasks: dict[str, Any], **executor: Any) -> tuple[str, dict[str, Any] | None]:
    cfg = load_config(config(tasks, compare=COMPARE, stratify_by=["country"]))
    res = run_pipeline(cfg, cache_dir=None, executor=executor)
    return _comparable(res.summary)


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> str:
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("local"))
    try:
        text, executor = _run({**TASKS, "judge": {}})
    finally:
        os.chdir(old)
    assert executor is None
    return text


def test_run_on_two_workers_is_byte_identical(here, in_process, scheduler):
    text, executor = _run({**TASKS, "judge": {}}, scheduler=scheduler, partitions=3)
    assert executor is not None
    assert (executor["kind"], executor["cluster"], executor["workers"]) == ("dask", "existing", 2)
    assert text == in_process
    # the work dir is removed after a successful run (only the payload folder stays)
    assert sorted(os.listdir(here / ".ragmeter" / "work")) == [".lock", "payloads"]
    assert os.listdir(here / ".ragmeter" / "work" / "payloads") == []
    summary = json.loads(text)
    assert summary["tasks"]["retrieval"]["systems"]["hybrid-v1"]["status"] == "ok"
    assert {r["metric"] for r in summary["comparisons"]} >= {"nDCG@10", "RR", "P@5"}


def test_run_on_three_local_workers_is_byte_identical(here, in_process):
    text, executor = _run({**TASKS, "judge": {}}, workers=3)
    assert executor is not None
    assert (executor["cluster"], executor["workers"]) == ("local", 3)
    assert text == in_process


def test_the_cli_takes_the_flags_and_the_config_block(here, scheduler, in_process):
    cfg = config({**TASKS, "judge": {}}, compare=COMPARE, stratify_by=["country"])
    cfg["executor"] = {"kind": "dask", "workers": 5, "keep_work": True, "work_dir": "w"}
    (here / "ragmeter.yaml").write_text(json.dumps(cfg), encoding="utf-8")
    # the flag names the topology: the config's workers are not consulted, its work dir is
    r = invoke("run", "ragmeter.yaml", "--json", "--no-store", "-q", "--scheduler", scheduler)
    assert r.code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["executor"]["cluster"] == "existing"
    out.pop("saved")
    text, _ = _comparable(out)
    assert text.replace('"path": "ragmeter.yaml"', '"path": null') == in_process
    assert out["config"]["sha256"] == load_config(here / "ragmeter.yaml").hash
    # keep_work: one payload per (task, system) and per comparison, one plan per phase
    kept = sorted(k for k in os.listdir(here / "w") if k != ".lock")
    assert [k.split("-")[0] for k in kept] == ["comparisons", "payloads", "tasks"]
    tasks_plan = json.loads((here / "w" / kept[2] / "manifest.json").read_text())
    assert tasks_plan["shards"] == len(tasks_plan["done"]) == 8  # 4 tasks x 2 systems


def test_config_executor_block_is_validated(here):
    cfg = config(TASKS)
    path = here / "ragmeter.yaml"
    for block, key, message in (
        (
            {"kind": "dask", "workerz": 2},
            "workerz",
            "executor.workerz: unknown key (expected one of kind, workers, scheduler, "
            "partitions, worker_memory, work_dir, keep_work); did you mean 'workers'?",
        ),
        (
            {"workers": 0},
            "workers",
            "executor.workers: 0 is out of range (input should be greater than or equal to 1)",
        ),
        (
            {"keep_work": "yes"},
            "keep_work",
            "executor.keep_work: is a string (expected true or false)",
        ),
    ):
        cfg["executor"] = block
        text = json.dumps(cfg, indent=1)
        path.write_text(text, encoding="utf-8")
        line = 1 + text.splitlines().index(f'  "{key}": {json.dumps(block[key])}')
        with pytest.raises(InputError) as err:
            load_config(path)
        assert str(err.value) == f"{path}:{line}: {message}"
    cfg["executor"] = {"kind": "local", "workers": 2}
    with pytest.raises(UsageError) as err:
        run_pipeline(load_config(cfg), cache_dir=None)
    assert str(err.value) == (
        "ragmeter run: executor.kind local contradicts executor.workers (expected "
        "executor.kind dask, or no scheduler and no workers)"
    )


def test_the_run_without_an_executor_block_hashes_as_with_one(here):
    plain = config(TASKS)
    placed = {**plain, "executor": {"workers": 2}}
    assert load_config(plain).hash == load_config(placed).hash
