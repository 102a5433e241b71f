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


def test_usage_errors_are_one_line_with_a_help_hint():
    res = invoke("run", "--bogus")
    assert res.code == 2
    assert res.stderr == "ragmeter run: No such option: --bogus (see 'ragmeter run --help')\n"
    res = invoke("answers")
    assert (res.code, res.stderr.count("\n")) == (2, 1)
    assert res.stderr.startswith("ragmeter answers: Missing argument 'INPUT.jsonl'")
    res = invoke("frobnicate")
    assert res.stderr == "ragmeter: No such command 'frobnicate' (see 'ragmeter --help')\n"


def test_help_has_no_type_noise_and_completion_is_offered():
    import re

    from ragmeter.cli.app import COMMAND_MODULES

    assert COMMAND_MODULES  # every registered command and group is checked below
    res = invoke("--help")
    assert res.code == 0
    assert "--install-completion" in res.stdout and "--show-completion" in res.stdout
    commands = re.findall(r"^│ ([a-z][a-z-]+) ", res.stdout, flags=re.M)
    assert {"answers", "grounded", "judge", "run", "runs", "cache"} <= set(commands)
    pages = [res.stdout]
    for name in commands:
        page = invoke(name, "--help")
        assert page.code == 0, name
        pages.append(page.stdout)
    for sub in (("runs", "list"), ("runs", "export"), ("cache", "stats")):
        pages.append(invoke(*sub, "--help").stdout)
    noise = re.compile(r"<(bool|str|int|float|path|list\[[a-z]+\])>")
    assert [p[:60] for p in pages if noise.search(p)] == []
    assert "PATH" in invoke("run", "--help").stdout


def test_warnings_inside_a_command_are_one_line_of_ours(monkeypatch):
    import warnings

    import typer

    from ragmeter.cli import app as app_module
    from ragmeter.warnings import warn

    real_build = app_module.build_app

    def build():
        app = real_build()

        @app.command("warns")
        def warns() -> None:
            warn("3 queries skipped\n(no judgments)")

        return app

    monkeypatch.setattr(app_module, "build_app", build)
    assert isinstance(real_build(), typer.Typer)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # shown even if this location warned earlier in the run
        res = invoke("warns")
    assert (res.code, res.stderr) == (0, "ragmeter: warning: 3 queries skipped (no judgments)\n")


def test_run_cache_dir_default_is_the_folder():
    """The default of --cache-dir once was `.ragmeter/cache/--cache-dir` (typer.Option's
    arguments had ended up inside Path(...))."""
    import inspect
    import subprocess
    import sys
    from pathlib import Path

    import typer

    from ragmeter.cli import run as run_module
    from tests.helpers import REPO

    app = typer.Typer()
    run_module.register(app)
    params = {}
    for info in app.registered_commands:
        params.update(inspect.signature(info.callback).parameters)
    assert params["cache_dir"].default == Path(".ragmeter/cache")
    assert "[default: .ragmeter/cache]" in invoke("run", "--help").stdout
    code = "import ragmeter.cli.app as a; [__import__(m) for m in a.COMMAND_MODULES]"
    env_path = str(REPO / "src")
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": ""},
    )
    assert (out.returncode, out.stderr) == (0, "")


def test_shell_completion_completes_command_names():
    res = run_cli(env={"_RAGMETER_COMPLETE": "complete_bash", "COMP_WORDS": "ragmeter ru",
                       "COMP_CWORD": "1"})  # fmt: skip
    assert (res.code, res.stdout.split()) == (0, ["run", "runs"])
