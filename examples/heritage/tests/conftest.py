"""Fixtures of the heritage example's quality tests (docs/pytest.md).

The plugin's ``ragmeter_run`` evaluates the whole of ragmeter.yaml once per session. These tests
read the deterministic tasks only, through the cached factory ``ragmeter_runs``: the semantic
task loads the MiniLM embedder (ragmeter[semantic]) and the judge task needs an LLM endpoint, so
a project usually runs those in jobs of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# the example's config, wherever pytest is started (`pytest examples/heritage`, `pytest examples`)
CONFIG = Path(__file__).resolve().parents[1] / "ragmeter.yaml"

DETERMINISTIC = ["retrieval", "answers", "grounded", "steps", "ner", "classification", "linking"]


@pytest.fixture(scope="session")
def heritage_config() -> Path:
    """The example's ragmeter.yaml (an absolute path: the rootdir depends on how pytest runs)."""
    return CONFIG


@pytest.fixture(scope="session")
def heritage(ragmeter_runs: Any) -> Any:
    """ragmeter.yaml evaluated on its deterministic tasks, once per session."""
    return ragmeter_runs(CONFIG, tasks=DETERMINISTIC)
