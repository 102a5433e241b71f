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
