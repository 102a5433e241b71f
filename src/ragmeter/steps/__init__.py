"""Agent step evaluation: a graphrag-eval drop-in with exact, fast SPARQL comparison.

>>> from ragmeter.steps import run_evaluation, compute_aggregates
>>> ref = [{"template_id": "t", "questions": [{"id": "q", "question_text": "?",
...         "reference_steps": [[{"name": "lookup", "output": "L"}]]}]}]
>>> results = run_evaluation(ref, {"q": {"question_id": "q", "actual_steps": [
...     {"id": "1", "name": "lookup", "status": "success", "output": "L"}]}})
>>> compute_aggregates(results)["micro"]["steps_score"]["mean"]
1.0

User guide and decisions: ``docs/steps.md``; migration:
``docs/migrating-from-graphrag-eval.md``.
"""

from __future__ import annotations

from ragmeter.errors import InputError
from ragmeter.steps.aggregates import compute_aggregates, stats_for_series
from ragmeter.steps.matching import Match, match_groups, steps_score
from ragmeter.steps.pipeline import arun_evaluation, run_evaluation
from ragmeter.steps.protocol import Claims, JudgeCallError, Judgement, StepsJudge
from ragmeter.steps.result import to_result
from ragmeter.steps.retrieval_steps import average_precision, recall_at_k
from ragmeter.steps.scoring import score_step
from ragmeter.steps.sparql import compare_sparql_results, find_column_mapping

__all__ = [
    "Claims",
    "InputError",
    "JudgeCallError",
    "Judgement",
    "Match",
    "StepsJudge",
    "arun_evaluation",
    "average_precision",
    "compare_sparql_results",
    "compute_aggregates",
    "find_column_mapping",
    "match_groups",
    "recall_at_k",
    "run_evaluation",
    "score_step",
    "stats_for_series",
    "steps_score",
    "to_result",
]
