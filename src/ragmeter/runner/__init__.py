"""The evaluation runner (docs/runner.md): one YAML config drives every engine.

>>> import ragmeter
>>> callable(ragmeter.evaluate)
True
"""

from __future__ import annotations

from ragmeter.runner.config import RunConfig, load_config
from ragmeter.runner.evaluation import EvaluationResult
from ragmeter.runner.gates import PROFILES, GateReport
from ragmeter.runner.pipeline import evaluate

__all__ = ["PROFILES", "EvaluationResult", "GateReport", "RunConfig", "evaluate", "load_config"]
