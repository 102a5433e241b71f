"""``ragmeter mcp`` usage errors, the missing extra, and import hygiene."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import invoke
from tests.mcp.test_subprocess import child_env


def test_non_loopback_host_needs_allow_remote():
    res = invoke("mcp", "--transport", "http", "--host", "0.0.0.0")
    assert res.code == 2
    assert res.stderr.strip() == (
        "ragmeter mcp: --host 0.0.0.0 is not a loopback address; add --allow-remote to serve "
        "other machines"
    )
    level = invoke("mcp", "--log-level", "loud")
    assert level.code == 2
    assert level.stderr.strip() == (
        "ragmeter mcp: --log-level 'loud' (expected debug, info, warning, error, critical)"
    )
    bad = invoke("mcp", "--transport", "sse")
    assert bad.code == 2
    assert bad.stderr.strip() == "ragmeter mcp: --transport 'sse' (expected stdio or http)"


def test_unknown_tool_and_missing_root_are_usage_errors(tmp_path):
    res = invoke("mcp", "--tools", "evaluate,bleu", "--root", str(tmp_path))
    assert res.code == 2
    assert res.stderr.startswith("ragmeter mcp: --tools 'evaluate,bleu': unknown tool 'bleu'")
    res = invoke("mcp", "--root", str(tmp_path / "nope"))
    assert res.code == 2
    assert res.stderr.strip() == f"ragmeter mcp: --root {tmp_path / 'nope'}: no such directory"


def test_without_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp -> ModuleNotFoundError
    res = invoke("mcp")
    assert res.code == 2
    assert res.stderr.strip() == (
        "ragmeter mcp: the MCP server needs the mcp package (pip install 'ragmeter[mcp]')"
    )


def test_import_ragmeter_and_help_do_not_import_the_sdk():
    code = (
        "import sys, contextlib, io\n"
        "import ragmeter\n"
        "from ragmeter.cli.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    main(['--help'])\n"
        "assert 'mcp' in out.getvalue()\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'uvicorn')\n"
        "       or m.startswith('anyio._backends') or m == 'anyio.to_thread']\n"
        "print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env()
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
