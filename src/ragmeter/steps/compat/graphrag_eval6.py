"""Drop-in for ``graphrag_eval`` 6.x: ``from ragmeter.steps.compat.graphrag_eval6 import
run_evaluation, compute_aggregates`` gives upstream's signatures, async behaviour and numbers.

>>> import asyncio
>>> ref = [{"template_id": "t", "questions": [{"id": "q", "question_text": "?",
...         "reference_steps": [[{"name": "lookup", "output": "L"}]]}]}]
>>> resp = {"q": {"question_id": "q", "actual_steps": [
...     {"id": "1", "name": "lookup", "status": "success", "output": "L"}]}}
>>> [r["steps_score"] for r in asyncio.run(run_evaluation(ref, resp))]
[1.0]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.steps import aggregates as _aggregates
from ragmeter.steps import pipeline as _pipeline
from ragmeter.steps.modes import V6

__all__ = ["compute_aggregates", "run_evaluation"]


async def run_evaluation(
    qa_dataset: Sequence[Mapping[str, Any]],
    responses_dict: Mapping[Any, Mapping[str, Any]],
    config_file_path: str | os.PathLike[str] | None = None,
) -> list[dict]:
    """graphrag-eval 6's ``run_evaluation`` (async), scored as ``compat="graphrag-eval-6"``."""
    return await _pipeline.arun_evaluation(qa_dataset, responses_dict, config_file_path, compat=V6)


def compute_aggregates(
    samples: Sequence[Mapping[str, Any]],
    config_file_path: str | os.PathLike[str] | None = None,
) -> dict:
    """graphrag-eval 6's ``compute_aggregates``."""
    return _aggregates.compute_aggregates(samples, config_file_path, compat=V6)
