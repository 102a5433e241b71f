"""Drop-in for ``graphrag_eval`` 5.1: ``from ragmeter.steps.compat.graphrag_eval5 import
run_evaluation, compute_aggregates`` gives upstream's synchronous signatures and numbers.

graphrag-eval 5 called OpenAI whenever answers or retrieval steps existed; this shim never
calls an LLM. For the judged keys, call :func:`ragmeter.steps.run_evaluation` with
``compat="graphrag-eval-5"`` and ``judge=``.

>>> ref = [{"template_id": "t", "questions": [{"id": "q", "question_text": "?",
...         "reference_steps": [[{"name": "lookup", "output": "L"}]]}]}]
>>> resp = {"q": {"question_id": "q", "actual_steps": [
...     {"id": "1", "name": "lookup", "status": "success", "output": "L"}]}}
>>> [r["steps_score"] for r in run_evaluation(ref, resp)]
[1.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.steps import aggregates as _aggregates
from ragmeter.steps import pipeline as _pipeline
from ragmeter.steps.modes import V5

__all__ = ["compute_aggregates", "run_evaluation"]


def run_evaluation(
    qa_dataset: Sequence[Mapping[str, Any]],
    responses_dict: Mapping[Any, Mapping[str, Any]],
) -> list[dict]:
    """graphrag-eval 5's ``run_evaluation``, scored as ``compat="graphrag-eval-5"``."""
    return _pipeline.run_evaluation(qa_dataset, responses_dict, compat=V5)


def compute_aggregates(samples: Sequence[Mapping[str, Any]]) -> dict:
    """graphrag-eval 5's ``compute_aggregates`` (error samples only counted)."""
    return _aggregates.compute_aggregates(samples, compat=V5)
