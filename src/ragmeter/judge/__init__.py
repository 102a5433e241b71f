"""``ragmeter.judge``: LLM-as-judge metrics and the runtime that makes them cheap and honest.

Metrics (docs/judge.md, "Metrics"): answer correctness by claims, answer relevance (offline MiniLM),
faithfulness, context precision / utilization, context recall, context entity recall,
graphrag-eval's ``retrieval_answer_*`` and ``retrieval_context_*``, and rubrics. The runtime:
any OpenAI-compatible endpoint through the ``openai`` SDK, structured output validated locally,
explicit per-sample statuses, a SQLite request cache with resume, bounded concurrency with
rate limits and retries, a token and cost ledger with dry runs and a budget, and keys that
never leave the environment.

Nothing heavy is imported here: the registry reads ``ragmeter.judge.registry`` alone.

>>> import ragmeter.judge as rj
>>> res = rj.evaluate([rj.Sample("q1", question="Q?", answer="A.")], ["faithfulness"],
...                   config=rj.JudgeConfig())          # no endpoint configured: nothing is sent
>>> res.statuses("faithfulness"), res.warnings[0].split(":")[0]
({'q1': 'needs_llm'}, 'LLM metrics skipped (status needs_llm)')
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str]] = {
    "evaluate": ("ragmeter.judge.engine", "evaluate"),
    "aevaluate": ("ragmeter.judge.engine", "aevaluate"),
    "plan_metrics": ("ragmeter.judge.engine", "plan_metrics"),
    "Sample": ("ragmeter.judge.metrics._common", "Sample"),
    "JudgeConfig": ("ragmeter.judge.config", "JudgeConfig"),
    "RubricDef": ("ragmeter.judge.config", "RubricDef"),
    "resolve_config": ("ragmeter.judge.config", "resolve_config"),
    "load_config_file": ("ragmeter.judge.config", "load_config_file"),
    "JudgeResult": ("ragmeter.judge.result", "JudgeResult"),
    "JudgeCache": ("ragmeter.judge.cache", "JudgeCache"),
    "JudgeRuntime": ("ragmeter.judge.runtime", "JudgeRuntime"),
    "OpenAIJudgeClient": ("ragmeter.judge.client", "OpenAIJudgeClient"),
    "JudgeRequest": ("ragmeter.judge.client", "JudgeRequest"),
    "JudgeResponse": ("ragmeter.judge.client", "JudgeResponse"),
    "TransientError": ("ragmeter.judge.client", "TransientError"),
    "RequestRejected": ("ragmeter.judge.client", "RequestRejected"),
    "FatalJudgeError": ("ragmeter.judge.client", "FatalJudgeError"),
    "estimate": ("ragmeter.judge.estimate", "estimate"),
    "steps_judge": ("ragmeter.judge.adapters", "steps_judge"),
    "StepsJudge": ("ragmeter.judge.adapters", "StepsJudge"),
    "JudgeCallError": ("ragmeter.judge.adapters", "JudgeCallError"),
    "samples_from_records": ("ragmeter.io.judge", "samples_from_records"),
}

__all__ = sorted(_LAZY)


_SUBMODULES = frozenset({"metrics", "prompts", "adapters", "cache", "client", "config", "ledger"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"ragmeter.judge.{name}")
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ragmeter.judge' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
