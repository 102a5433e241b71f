"""The stored-run tools against their commands: ``run``, ``list_runs``, ``show_run``, ``gate``
and ``compare`` give the JSON of ``ragmeter run/runs/gate/compare --json`` on the same store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragmeter.errors import RagmeterError
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.settings import Settings
from ragmeter.mcp.tools import OwnTools
from tests.helpers import invoke


@pytest.fixture(scope="module")
def stored(work: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mcp-runs")
    shutil.copytree(work / "heritage", root / "heritage")
    shutil.copy(work / "ragmeter.yaml", root / "ragmeter.yaml")
    tools = OwnTools(Settings(roots=Roots([str(root)])))
    out = tools.run("ragmeter.yaml")
    return root, tools, out, f"sqlite:///{root / '.ragmeter' / 'ragmeter.db'}"


def cli_json(*args: str):
    res = invoke(*args)
    assert res.code in (0, 1), res.stderr
    return json.loads(res.stdout)


def test_run_result(stored):
    root, _, out, _ = stored
    assert out["pass"] is False and out["exit_status"] == 1  # nDCG@10 >= 0.99 fails
    assert len(out["run_ids"]) == 2 and all(
        i.startswith(out["evaluation_id"]) for i in out["run_ids"]
    )
    summary = json.loads((root / out["results_dir"] / "summary.json").read_text(encoding="utf-8"))
    assert summary["evaluation_id"] == out["evaluation_id"]


def test_listing_showing_gating_comparing_equal_the_cli(stored):
    _, tools, out, url = stored
    ids = out["run_ids"]
    assert tools.list_runs()["runs"] == cli_json(
        "runs", "list", "--json", "--store", url, "--limit", "20"
    )
    shown = cli_json("runs", "show", ids[0], "--json", "--store", url)
    assert tools.show_run(ids[0], strata=True) == shown
    only = tools.show_run(ids[0], metrics=["retrieval.ndcg_cut.10"])
    assert [(r["task"], r["metric"]) for r in only["metrics"]] == [("retrieval", "nDCG@10")]
    assert only["metrics"][0]["value"] == pytest.approx(0.6872739183844563)
    gate = tools.gate(ids[1])
    expected = cli_json("gate", ids[1], "--json", "--store", url)
    assert {k: v for k, v in gate.items() if k not in ("pass", "exit_status")} == expected
    assert (gate["pass"], gate["exit_status"]) == (False, 1)
    cmp = tools.compare(ids, metrics=["retrieval.nDCG@10"])
    assert cmp == cli_json("compare", *ids, "-m", "retrieval.nDCG@10", "--json", "--store", url)


def test_run_refuses_foreign_stores_judge_blocks_and_read_only(stored):
    root, tools, _, _ = stored
    with pytest.raises(RagmeterError, match="is not the server's store"):
        tools.run("ragmeter.yaml", store="sqlite:////tmp/elsewhere.db")
    text = (root / "ragmeter.yaml").read_text(encoding="utf-8")
    (root / "judged.yaml").write_text(
        text + "judge: {base_url: 'http://127.0.0.1:9/v1', model: m}\n", encoding="utf-8"
    )
    with pytest.raises(RagmeterError) as exc:
        tools.run("judged.yaml")
    assert str(exc.value) == (
        "ragmeter mcp: run: judged.yaml has a judge: block; the judge's endpoint, model and key "
        "come only from the server's --config"
    )
    ro = OwnTools(Settings(roots=Roots([str(root)]), read_only=True))
    with pytest.raises(RagmeterError, match="--read-only"):
        ro.run("ragmeter.yaml")


JUDGED = """\
project: mcp-budget
dataset:
  path: heritage/data/gold.jsonl
systems:
  - name: bm25-v3
    outputs: {answers: heritage/outputs/bm25-answers.jsonl}
tasks:
  judge: {metrics: [faithfulness], max_cost_usd: CONFIGURED}
"""


@pytest.mark.parametrize(
    ("cap", "configured", "asked", "budget"),
    [
        (0.5, 2.0, 5.0, 0.5),  # the client asks more than the server allows
        (0.5, 2.0, 0.1, 0.1),  # the client lowers it
        (1.0, 0.2, None, 0.2),  # the config's own budget is already lower
        (0.0, 2.0, None, 0.0),  # no cap given: no LLM spending through MCP
    ],
)
def test_run_caps_the_judge_budget(stored, monkeypatch, cap, configured, asked, budget):
    for var in ("RAGMETER_LLM_BASE_URL", "RAGMETER_LLM_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    root = stored[0]
    (root / "judged-run.yaml").write_text(
        JUDGED.replace("CONFIGURED", str(configured)), encoding="utf-8"
    )
    tools = OwnTools(Settings(roots=Roots([str(root)]), judge_max_cost=cap))
    out = tools.run("judged-run.yaml", max_cost_usd=asked)
    assert out["judge_budget_usd"] == budget


def test_run_budget_reaches_the_judge_task(stored):
    from ragmeter.mcp.tools import _cap_judge_budget
    from ragmeter.runner.config import load_config

    root = stored[0]
    (root / "judged-run.yaml").write_text(JUDGED.replace("CONFIGURED", "2.0"), encoding="utf-8")
    cfg = load_config(root / "judged-run.yaml")
    assert _cap_judge_budget(cfg, 0.25, None) == 0.25
    assert cfg.tasks["judge"].max_cost_usd == 0.25  # what the judge task hands the engine
    with pytest.raises(RagmeterError, match="max_cost_usd must be ≥ 0"):
        _cap_judge_budget(cfg, 0.25, -1.0)


def test_compare_reports_progress_per_test_and_stops_when_cancelled(stored):
    from itertools import count

    from ragmeter.errors import Interrupted
    from ragmeter.mcp import progress

    _, tools, out, _ = stored
    seen: list[tuple[float, float, str]] = []
    ticks = count()  # a clock that moves a second per reading: no report is throttled away
    state = progress.CallState(lambda *a: seen.append(a), clock=lambda: float(next(ticks)))
    token = progress.bind(state)
    try:
        tools.compare(out["run_ids"], metrics=["retrieval.nDCG@10", "retrieval.RR"], ci="bca")
        assert seen == [(1, 2, "significance tests"), (2, 2, "significance tests")]
        state.cancelled.set()
        with pytest.raises(Interrupted, match="cancelled"):
            tools.compare(out["run_ids"], metrics=["retrieval.nDCG@10", "retrieval.RR"])
    finally:
        progress.unbind(token)
