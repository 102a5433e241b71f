"""graphrag-eval 6.6.1 as a test oracle, run in its own Python 3.12 venv through a subprocess.

graphrag-eval requires Python >=3.12,<3.13 while ragmeter's test venv runs 3.11, so
``make .venv-graphrag-eval/.installed`` builds a separate venv (git-ignored) and the tests send
it batches of cases. ``RAGMETER_GRAPHRAG_EVAL_PYTHON`` overrides the interpreter.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import REPO

WORKER = Path(__file__).with_name("graphrag_eval_worker.py")
VERSION = "6.6.1"
MISSING = (
    f"graphrag-eval {VERSION} oracle venv missing (build it with "
    "`make .venv-graphrag-eval/.installed`; needs python3.12)"
)


def interpreter() -> Path:
    override = os.environ.get("RAGMETER_GRAPHRAG_EVAL_PYTHON")
    if override:
        return Path(override)
    return REPO / ".venv-graphrag-eval" / "bin" / "python"


@functools.lru_cache(maxsize=1)
def available() -> bool:
    python = interpreter()
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('graphrag-eval'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return probe.returncode == 0 and probe.stdout.strip() == VERSION


def _call(request: dict[str, Any], timeout: float) -> list[Any]:
    proc = subprocess.run(
        [str(interpreter()), str(WORKER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"graphrag-eval worker failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)["results"]


def compare(cases: list[dict[str, Any]], *, timeout: float = 600) -> list[Any]:
    """graphrag-eval's ``compare_sparql_results`` on each case (1.0, 0.0 or "error: ...")."""
    return _call({"op": "compare", "cases": cases}, timeout)


def time_cases(
    cases: list[dict[str, Any]], *, repeat: int = 5, case_timeout: float = 60
) -> list[dict[str, Any]]:
    """Median seconds of graphrag-eval's comparison per case (or ``{"timeout": s}``)."""
    budget = len(cases) * repeat * case_timeout + 60
    return _call({"op": "time", "cases": cases, "repeat": repeat, "timeout": case_timeout}, budget)
