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
