"""Text of the inner sessions' files, shared by the plugin's tests."""

from __future__ import annotations

import pytest

SPY = """
import os
from ragmeter.runner import pipeline

_original = pipeline.run_pipeline


def _spy(cfg, **kwargs):
    # counts evaluations in a file, so that xdist workers (other processes) add up
    with open(os.path.join(os.path.dirname(__file__), "evaluations.log"), "a") as fh:
        fh.write(str(cfg.path) + "\\n")
    return _original(cfg, **kwargs)


def pytest_configure(config):
    pipeline.run_pipeline = _spy


def pytest_unconfigure(config):
    pipeline.run_pipeline = _original
"""


def evaluations(pytester: pytest.Pytester) -> list[str]:
    log = pytester.path / "evaluations.log"
    return log.read_text().splitlines() if log.exists() else []
