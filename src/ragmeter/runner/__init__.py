"""The evaluation runner (docs/runner.md): one YAML config drives every engine.

>>> import ragmeter
>>> callable(ragmeter.evaluate)
True
"""

from __future__ import annotations

from typing import Any

from ragmeter.runner.config import RunConfig, load_config
from ragmeter.runner.evaluation import EvaluationResult
from ragmeter.runner.gates import GATE_PROFILES, GateReport
from ragmeter.runner.pipeline import evaluate

__all__ = [
    "GATE_PROFILES",
    "EvaluationResult",
    "GateReport",
    "RunConfig",
    "evaluate",
    "load_config",
]


def __getattr__(name: str) -> Any:
    if name == "PROFILES":  # deprecated name of GATE_PROFILES (it warns)
        from ragmeter.runner import gates

        return gates.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
