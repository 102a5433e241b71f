from __future__ import annotations

from ragmeter import __version__
from tests.helpers import invoke, run_cli


def test_version_and_help_in_a_real_process():
    res = run_cli("--version")
    assert (res.code, res.stdout.strip()) == (0, f"ragmeter {__version__}")
    res = run_cli("--help")
    assert res.code == 0
    assert "trec" in res.stdout and "metrics" in res.stdout


def test_unknown_command_is_a_usage_error():
    res = invoke("frobnicate")
    assert res.code == 2
    assert "No such command 'frobnicate'" in res.stderr


def test_metrics_json_lists_the_registry():
    import json

    from ragmeter import registry

    res = invoke("metrics", "--json")
    assert res.code == 0
    listed = {m["full_name"] for m in json.loads(res.stdout)}
    assert listed == {m.full_name for t in registry.all_tasks() for m in t.metrics}


def test_input_errors_are_one_line_exit_2(tmp_path, monkeypatch):
    """The app turns a RagmeterError from any command into one line and exit status 2."""
    import typer

    from ragmeter.cli import app as app_module
    from ragmeter.errors import InputError

    def boom_register(app: typer.Typer) -> None:
        @app.command("boom")
        def boom() -> None:
            raise InputError("score 'abc' is not a number", path="run.txt", line=17)

    real_build = app_module.build_app

    def build():
        app = real_build()
        boom_register(app)
        return app

    monkeypatch.setattr(app_module, "build_app", build)
    res = invoke("boom")
    assert (res.code, res.stderr) == (2, "run.txt:17: score 'abc' is not a number\n")


def test_import_is_light():
    import subprocess
    import sys

    code = (
        "import sys, ragmeter; "
        "heavy = [m for m in ('pyarrow', 'numpy', 'pandas', 'typer', 'rich', 'pydantic') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ctrl_c_is_one_line_and_exit_130():
    """Ctrl-C while a command waits on stdin: exit 130 and one line, no traceback."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "answers", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        # a shell's background job inherits SIGINT ignored, and Python would keep it so
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        # wait until the command is blocked in read(0, ...): syscall 0 on x86-64, 63 on arm64
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(f"/proc/{proc.pid}/syscall") as fh:
                fields = fh.read().split()
            if fields[:2] in (["0", "0x0"], ["63", "0x0"]):
                break
            time.sleep(0.02)
        else:
            raise AssertionError("ragmeter answers never blocked on stdin")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert out == b""
    assert err.decode() == "ragmeter: interrupted (finished work is kept)\n"


def test_trec_leaves_without_interpreter_teardown(monkeypatch, capsys):
    """``ragmeter trec`` exits through os._exit after flushing (Arrow worker threads may still
    hold tasks after a fast-path parse error; a normal teardown then aborts now and then)."""
    import os
    import sys

    import pytest

    from ragmeter.cli import entry
    from tests.helpers import CONFORMANCE

    class Left(Exception):
        pass

    def fake_exit(code: int) -> None:
        raise Left(code)

    trec = CONFORMANCE / "trec_eval"
    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(
        sys,
        "argv",
        ["ragmeter", "trec", "-m", "map", str(trec / "qrels.test"), str(trec / "results.test")],
    )
    with pytest.raises(Left) as left:
        entry.console()
    assert left.value.args == (0,)
    assert capsys.readouterr().out.startswith("map                   \tall\t")
    monkeypatch.setattr(sys, "argv", ["ragmeter", "metrics", "--json"])
    with pytest.raises(SystemExit) as done:  # every other command exits normally
        entry.console()
    assert done.value.code == 0
