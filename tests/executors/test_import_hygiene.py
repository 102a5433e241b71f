"""Without ``--executor dask``, neither dask nor distributed is imported."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import CONFORMANCE, REPO

TREC = [str(CONFORMANCE / "trec_eval" / f) for f in ("qrels.test", "results.test")]

SCRIPT = """
import json, sys
import ragmeter
from ragmeter.cli.entry import main
codes = [main(["answers", sys.argv[1], "-m", "em,f1"]),
         main(["compare", "--per-sample", sys.argv[2], sys.argv[3], "-m", "f1", "--json"]),
         main(["trec", sys.argv[4], sys.argv[5]])]
print(json.dumps({"codes": codes,
                  "loaded": sorted(m for m in sys.modules
                                   if m.split(".")[0] in ("dask", "distributed"))}))
"""


def test_in_process_commands_import_no_dask(tmp_path):
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"golden_answers": ["x"], "pred_answer": "x"}\n' * 3)
    a, b = tmp_path / "s1.jsonl", tmp_path / "s2.jsonl"
    a.write_text("".join(json.dumps({"id": i, "f1": i / 10}) + "\n" for i in range(5)))
    b.write_text("".join(json.dumps({"id": i, "f1": i / 7}) + "\n" for i in range(5)))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(answers), str(a), str(b), *TREC],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": f"{REPO / 'src'}", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report == {"codes": [0, 0, 0], "loaded": []}


def _imported_modules(path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_executors_do_not_import_the_command_line():
    """Workers import the executors' task functions; the CLI (typer, rich) stays out of them,
    and the engines never depend on the commands."""
    offenders = {
        path.name: sorted(m for m in _imported_modules(path) if m.startswith("ragmeter.cli"))
        for path in sorted((REPO / "src" / "ragmeter" / "executors").glob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert "typer" not in _imported_modules(REPO / "src" / "ragmeter" / "executors" / "tasks.py")


RUN_SCRIPT = """
import json, sys
import ragmeter
sys.path.insert(0, sys.argv[1])
from tests.runner.test_engines import config
res = ragmeter.evaluate(config({"retrieval": {}, "answers": {}}), cache_dir=None)
print(json.dumps({"executor": res.summary.get("executor"),
                  "loaded": sorted(m for m in sys.modules
                                   if m.split(".")[0] in ("dask", "distributed"))}))
"""


def test_a_run_without_an_executor_imports_no_dask(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(REPO)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": f"{REPO / 'src'}", "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report == {"executor": None, "loaded": []}
