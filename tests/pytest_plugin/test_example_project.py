"""The heritage example's own quality tests (examples/heritage/tests) pass with plain pytest.

They run in a subprocess, from the repository root, the way a user runs them, as
``pytest examples/heritage`` (the example's pytest.ini makes it the rootdir) and as ``pytest
examples`` (the repository is the rootdir); the main suite never collects them itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.mark.parametrize("target", ["examples/heritage", "examples"])
def test_heritage_example_tests_pass(entry_point_dir: Path, target: str) -> None:
    # "examples": the repository's pyproject.toml is the session's ini; the example's own
    # pytest.ini still names its config (docs/pytest.md, "Nested projects")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RAGMETER_LLM_", "PYTEST_", "RAGMETER_REQUIRE"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(entry_point_dir)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", target, "-p", "no:cacheprovider", "-q"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("6 passed") for line in lines), proc.stdout
    assert any(line.startswith("checks: 16 passed, 0 failed, 0 skipped") for line in lines)
