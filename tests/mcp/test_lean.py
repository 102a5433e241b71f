"""The lean start of ``ragmeter mcp``: no typer or rich, no engine until a tool is called, and
the mcp package outside every package circle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import invoke
from tests.mcp.test_subprocess import child_env

#: Loaded by the typer app, or by the engines the tools wrap; none belongs to a server's start.
HEAVY = ("typer", "rich", "numpy", "pyarrow", "scipy", "pandas", "yaml", "sqlalchemy")
ENGINES = tuple(
    f"ragmeter.{p}"
    for p in ("retrieval", "answers", "stats", "judge", "runner", "steps", "store", "cli.app")
)


def _heavy(modules: list[str]) -> list[str]:
    return sorted(
        m
        for m in modules
        if m.split(".")[0] in HEAVY or any(m == e or m.startswith(e + ".") for e in ENGINES)
    )


def _sdk_modules() -> set[str]:
    """What importing the installed SDK loads by itself (mcp 1.x's httpx loads rich for its
    command line, for one): not ragmeter's share of a start."""
    code = "import sys, ragmeter.mcp.sdk; print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), check=True
    )
    return set(out.stdout.split())


def _imported(stderr: str) -> list[str]:
    """Module names of ``python -X importtime`` lines (a module loaded by
    ``importlib.import_module`` has no line of its own; what it imports does)."""
    return [
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


def test_server_module_imports_no_engine_before_a_tool_call(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    (tmp_path / "run").write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\n", encoding="utf-8")
    code = f"""
import asyncio, json, sys
import ragmeter.mcp.sdk
sdk = set(sys.modules)
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.server import build_server
from ragmeter.mcp.settings import Settings
from tests.mcp.session import open_session
from tests.mcp.test_lean import _heavy

async def main():
    server = build_server(Settings(roots=Roots([{str(tmp_path)!r}])))
    async with open_session(server) as s:
        tools = await s.list_tools()
        before = _heavy([m for m in sys.modules if m not in sdk])
        value = await s.call_ok("evaluate_trec", {{"run_path": "run", "qrels_path": "qrels",
                                                  "metrics": ["map"]}})
    schemas = all(t.output_schema and t.output_schema["type"] == "object" for t in tools)
    print(json.dumps({{"tools": len(tools), "schemas": schemas, "before": before,
                      "after": "ragmeter.retrieval" in sys.modules, "value": value["eval_res"]}}))

asyncio.run(main())
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # every tool is declared, with its output schema, and nothing heavy is loaded for that
    assert (got["tools"], got["schemas"], got["before"]) == (14, True, [])
    # the call loads the engine it needs: the check above looks at the right names
    assert got["after"] is True
    assert got["value"] == {"map": 0.5}  # the relevant document at rank 2


def test_start_to_initialize_loads_no_typer_rich_or_engine(tmp_path):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ragmeter", "mcp", "--root", str(tmp_path)],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    reply = json.loads(proc.stdout.splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "ragmeter"
    modules = _imported(proc.stderr)
    assert "ragmeter.mcp.server" in modules and "mcp" in modules
    sdk = _sdk_modules()
    assert _heavy([m for m in modules if m not in sdk]) == []


def test_mcp_help_takes_the_lean_path():
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ragmeter", "mcp", "--help"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage: ragmeter mcp [--transport stdio|http]")
    assert "ragmeter mcp ultrarag-init DIR [--name evaluation] [--force]" in proc.stdout
    for option in ("--root DIR", "--tools TOOLS", "--judge-max-cost USD", "--read-only"):
        assert option in proc.stdout, option
    modules = _imported(proc.stderr)
    # neither the typer app nor the SDK: the help page is argparse's
    assert [m for m in modules if m.split(".")[0] in ("typer", "rich", "mcp")] == []
    init = invoke("mcp", "ultrarag-init", "--help")
    assert init.code == 0
    assert init.stdout.startswith("usage: ragmeter mcp ultrarag-init [-h] [--name NAME] [--force]")


def test_option_errors_are_one_line():
    res = invoke("mcp", "--max-concurrent", "0")
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        "ragmeter mcp: argument --max-concurrent: 0 is not in the range x>=1 "
        "(see 'ragmeter mcp --help')\n"
    )
    res = invoke("mcp", "--port", "http")
    assert res.stderr == (
        "ragmeter mcp: argument --port: invalid int value: 'http' (see 'ragmeter mcp --help')\n"
    )
    res = invoke("mcp", "ultrarag-init")
    assert res.code == 2
    assert res.stderr == (
        "ragmeter mcp ultrarag-init: the following arguments are required: DIR "
        "(see 'ragmeter mcp ultrarag-init --help')\n"
    )


def test_the_typer_command_hands_over():
    # shell completion and `ragmeter --help` know `mcp` from the typer app; a call that reaches
    # it (not through the entry's dispatch) ends on the lean path with the same messages
    from ragmeter.cli.app import run

    res = invoke("--help")
    assert "mcp" in res.stdout
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run(["mcp", "--transport", "sse"])
    assert (code, err.getvalue()) == (
        2,
        "ragmeter mcp: --transport 'sse' (expected stdio or http)\n",
    )


def test_mcp_is_in_no_package_circle():
    # ragmeter.mcp uses cli helpers; cli reaches mcp only through the entry's dispatch by name
    from tests.foundation.test_import_graph import package_cycles, package_graph

    graph = package_graph()
    assert "mcp" not in graph["cli"], graph["cli"].get("mcp")
    assert [c for c in package_cycles(graph) if "mcp" in c] == []


def test_serve_runs_the_command_in_process(capsys):
    # the launcher `ragmeter mcp ultrarag-init` writes calls serve(); it takes the lean path too
    from ragmeter.mcp import serve

    assert serve(["--ultrarag", "--transport", "sse"]) == 2
    assert capsys.readouterr().err == "ragmeter mcp: --transport 'sse' (expected stdio or http)\n"
