"""A project judged for real: the runner's ``judge`` task against the fake OpenAI-compatible
server (``tests/judge/fake_openai.py``), stored in a SQLite store, with the judge's request cache
in its own file. One answer carries XSS payloads, so the prompts and replies the sample page
shows carry them too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.dashboard.builders import XSS_IMG, XSS_SCRIPT
from tests.helpers import REPO
from tests.judge.fake_openai import SENTINEL_KEY, FakeOpenAI

EXAMPLE = REPO / "examples" / "heritage"
EVIL_ANSWER = f"The archive is in Wilford. {XSS_SCRIPT} {XSS_IMG}"


@dataclass
class Judged:
    url: str
    store_path: Path
    cache: Path
    run_id: str
    evil_id: str
    sample_ids: list[str]
    server: FakeOpenAI


def judged_project(root: Path, server: FakeOpenAI) -> Judged:
    gold = (EXAMPLE / "data" / "gold.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (root / "gold.jsonl").write_text("\n".join(gold) + "\n", encoding="utf-8")
    qids = [qa["qid"] for line in gold for qa in json.loads(line)["qa_pairs"]]
    answers = {
        json.loads(line)["id"]: json.loads(line)
        for line in (EXAMPLE / "outputs" / "hybrid-answers.jsonl").read_text().splitlines()
        if line
    }
    evil_id = qids[0]
    answers[evil_id]["answer"] = EVIL_ANSWER
    (root / "answers.jsonl").write_text(
        "".join(json.dumps(answers[q]) + "\n" for q in qids), encoding="utf-8"
    )
    cache = root / "judge-cache.sqlite"
    store_path = root / "store.db"
    url = f"sqlite:///{store_path}"
    cfg = {
        "project": "judged",
        "dataset": {"path": str(root / "gold.jsonl")},
        "systems": [{"name": "hybrid-v1", "outputs": {"answers": str(root / "answers.jsonl")}}],
        "tasks": {"judge": {"metrics": ["faithfulness"]}},
        "judge": {"prices": []},
    }
    import ragmeter

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.setenv("RAGMETER_LLM_BASE_URL", server.url)
        mp.setenv("RAGMETER_LLM_MODEL", "judge-test-model")
        mp.setenv("OPENAI_API_KEY", SENTINEL_KEY)
        mp.setenv("RAGMETER_JUDGE_CACHE", str(cache))
        res = ragmeter.evaluate(cfg, cache_dir=None)
        res.save(url, results_dir=root / "results")
    trun = res.systems["hybrid-v1"].tasks["judge"]
    assert trun.status == "ok", trun.reason
    (run_id,) = [r.run_id for r in res.systems.values()]
    return Judged(url, store_path, cache, run_id, evil_id, qids, server)
