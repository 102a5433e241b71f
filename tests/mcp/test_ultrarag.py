"""UltraRAG's contract, without UltraRAG: ``build`` writes the server.yaml UltraRAG's binding rule
gives, every declared output key is in the text block UltraRAG parses, save files are
timestamped, and the scaffold's launcher serves over stdio by both of its routes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from ragmeter.mcp.paths import Roots
from ragmeter.mcp.server import build_server
from ragmeter.mcp.settings import Settings
from tests.helpers import DATA, invoke
from tests.mcp.conftest import FIXED_TIME
from tests.mcp.session import in_process_modes, open_session
from tests.mcp.test_subprocess import child_env

SIGNATURES = json.loads((DATA / "ultrarag" / "signatures.json").read_text(encoding="utf-8"))


def ultrarag_rule(params: list[str], io: str, parameter: dict) -> dict:
    """UltraRAG's server.yaml entry, written from its documented rule (not from ragmeter):
    parameters bound positionally to the I/O spec's input names, ``$`` for parameter keys."""
    inputs, output = io.split("->")
    specs = [s.strip() for s in inputs.split(",")]
    pairs = zip(params, specs, strict=False)
    return {
        "input": {p: (f"${s}" if s in parameter else s) for p, s in pairs},
        "output": [f"${o}" if o in parameter else o for o in output.split(",")],
    }


@pytest.fixture
def pipeline(work, tmp_path) -> Path:
    """A pipeline folder: UltraRAG's evaluation parameter keys, pointed at real files."""
    root = tmp_path / "pipeline"
    skip = shutil.ignore_patterns(".ragmeter", "results", "heritage", "outside")
    shutil.copytree(work, root, ignore=skip)
    folder = root / "servers" / "evaluation"
    assert invoke("mcp", "ultrarag-init", str(folder)).code == 0
    params = yaml.safe_load((DATA / "ultrarag" / "parameter.yaml").read_text(encoding="utf-8"))
    params.update(
        qrels_path="qrels.test",
        run_path="results.test",
        run_new_path="results.test",
        run_old_path="results.reversed",
        n_resamples=99,
    )
    (folder / "parameter.yaml").write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")
    return root


def test_build_writes_ultrarags_server_yaml_and_outputs_are_in_the_text(pipeline):
    settings = Settings(roots=Roots([str(pipeline)]), ultrarag=True, clock=lambda: FIXED_TIME)
    server = build_server(settings, tools="ultrarag")
    pfile = "servers/evaluation/parameter.yaml"
    parameter = yaml.safe_load((pipeline / pfile).read_text(encoding="utf-8"))

    async def go():
        async with open_session(server, mode=in_process_modes()[0]) as s:
            await s.call_ok("build", {"parameter_file": pfile})
            written = yaml.safe_load((pipeline / "servers/evaluation/server.yaml").read_text())
            texts = {}
            memory = {"pred_ls": ["December 14, 1973"], "gt_ls": [["December 1972"]]}
            for tool, entry in written["tools"].items():
                args = {
                    p: parameter[b[1:]] if b.startswith("$") else memory[b]
                    for p, b in entry["input"].items()
                }
                _, text, is_error = await s.call_tool(tool, args)
                assert not is_error, text
                texts[tool] = (json.loads(text), entry["output"])
            return written, texts

    written, texts = asyncio.run(go())
    assert written == {
        "path": "servers/evaluation/src/evaluation.py",
        "parameter": pfile,
        "tools": {
            name: ultrarag_rule(sig["params"], sig["io"], parameter)
            for name, sig in SIGNATURES["tools"].items()
        },
        "prompts": {},
    }
    for tool, (value, outputs) in texts.items():
        for key in outputs:
            assert key in value, (tool, key)  # UltraRAG reads json.loads(content[0].text)[key]
    # --ultrarag: save files get UltraRAG's timestamp (here the injected clock's)
    for tool in SIGNATURES["tools"]:
        saved = texts[tool][0]["ragmeter"]["saved_to"]
        assert saved == "output/evaluate_results_20260102_030405.json", tool
    out = pipeline / "output" / "evaluate_results_20260102_030405.json"
    assert (
        json.loads(out.read_text(encoding="utf-8")) == texts["evaluate_trec_pvalue"][0]["eval_res"]
    )


def test_build_refuses_a_missing_server_file_and_paths_outside_the_roots(pipeline):
    settings = Settings(roots=Roots([str(pipeline)]), ultrarag=True)
    from ragmeter.errors import UsageError
    from ragmeter.mcp.ultrarag import BuildTool

    tool = BuildTool(settings, [])
    (pipeline / "servers" / "other").mkdir()
    with pytest.raises(UsageError, match=r"server code not found: servers/other/src/other\.py"):
        tool.build("servers/other/parameter.yaml")
    with pytest.raises(UsageError, match="outside the allowed roots"):
        tool.build("../parameter.yaml")


def test_init_refuses_to_overwrite(tmp_path):
    folder = tmp_path / "ragmeter_eval"
    assert invoke("mcp", "ultrarag-init", str(folder)).code == 0
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == [
        "README.md", "parameter.yaml", "src", "src/ragmeter_eval.py",
    ]  # fmt: skip
    again = invoke("mcp", "ultrarag-init", str(folder))
    assert again.code == 2
    assert again.stderr.strip() == (
        f"ragmeter mcp ultrarag-init: {folder / 'parameter.yaml'} exists (add --force to overwrite)"
    )
    assert invoke("mcp", "ultrarag-init", str(folder), "--force").code == 0
    params = yaml.safe_load((folder / "parameter.yaml").read_text(encoding="utf-8"))
    assert params["ir_metrics"] == ["mrr", "map", "recall", "ndcg", "precision"]
    assert params["ks"] == [1, 5, 10, 20, 50, 100] and params["n_resamples"] == 10000
    for key in ("gold_path", "trace_path", "k", "gates", "reference_path", "responses_path",
                "compat", "judge_input_path", "judge_metrics", "config_path"):  # fmt: skip
        assert key in params


@pytest.mark.parametrize("route", ["in-process", "RAGMETER_MCP"])
def test_launcher_serves_over_stdio(pipeline, route):
    from mcp import StdioServerParameters

    launcher = pipeline / "servers" / "evaluation" / "src" / "evaluation.py"
    env = child_env()
    args = [str(launcher)]
    if route == "RAGMETER_MCP":
        # -I -S: the launcher's own interpreter cannot import ragmeter (nor mcp)
        args = ["-I", "-S", str(launcher)]
        env["RAGMETER_MCP"] = f"{sys.executable} -m ragmeter mcp --ultrarag --root ."
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(pipeline))

    async def go():
        async with open_session(params) as s:
            names = [t.name for t in await s.list_tools()]
            value = await s.call_ok(
                "evaluate_trec",
                {"run_path": "results.test", "qrels_path": "qrels.test", "metrics": ["map"],
                 "ks": [10], "save_path": "output/r.json"},
            )  # fmt: skip
            return names, value

    names, value = asyncio.run(go())
    assert "build" in names and "evaluate_trec_pvalue" in names
    assert value["eval_res"] == {"map": pytest.approx(0.17854506039656948)}
    saved = value["ragmeter"]["saved_to"]
    assert saved.startswith("output/r_") and (pipeline / saved).exists()
    assert os.path.basename(saved)[len("r_") :].count("_") == 1  # r_YYYYmmdd_HHMMSS.json
