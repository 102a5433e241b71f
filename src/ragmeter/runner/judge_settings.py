"""The judge endpoint the runner hands to LLM tasks (``specs/judge.md`` §1).

Order: environment variables, then the config's ``judge:`` block (the runner has no judge flags).
The judge counts as configured when a model is known and either a base URL is known or
``OPENAI_API_KEY`` is set; otherwise LLM metrics report ``needs_llm`` and the task is reported as
skipped with the judge's one-line hint. Only the settings that change replies enter cache keys;
credentials never do.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["NOT_CONFIGURED", "judge_reason", "judge_settings", "reply_settings"]

NOT_CONFIGURED = (
    "LLM metrics skipped (status needs_llm): set RAGMETER_LLM_BASE_URL and RAGMETER_LLM_MODEL "
    "(and OPENAI_API_KEY if the endpoint needs a key)."
)

_REPLY_KEYS = (
    "base_url",
    "model",
    "temperature",
    "max_tokens",
    "max_tokens_cap",
    "structured",
    "repeats",
    "cache_namespace",
)


def judge_settings(block: Mapping[str, Any] | None, base_dir: str | None = None) -> dict[str, Any]:
    """The config's judge block with the environment applied (env wins, as judge.md §1 says)."""
    settings = dict(block or {})
    env_url = os.environ.get("RAGMETER_LLM_BASE_URL")
    env_model = os.environ.get("RAGMETER_LLM_MODEL")
    if env_url:
        settings["base_url"] = env_url
    if env_model:
        settings["model"] = env_model
    if os.environ.get("RAGMETER_JUDGE_CACHE"):
        settings["cache"] = os.environ["RAGMETER_JUDGE_CACHE"]
    elif settings.get("cache") and base_dir and not os.path.isabs(str(settings["cache"])):
        settings["cache"] = os.path.join(base_dir, str(settings["cache"]))
    if settings.get("prices") and base_dir and not os.path.isabs(str(settings["prices"])):
        settings["prices"] = os.path.join(base_dir, str(settings["prices"]))
    return settings


def judge_reason(settings: Mapping[str, Any]) -> str | None:
    """``None`` when the judge is configured, else the one-line hint."""
    key_env = settings.get("api_key_env") or "OPENAI_API_KEY"
    has_key = bool(os.environ.get(key_env) or os.environ.get("OPENAI_API_KEY"))
    if settings.get("model") and (settings.get("base_url") or has_key):
        return None
    return NOT_CONFIGURED


def reply_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that change the judge's replies (part of cache keys; no credentials)."""
    from ragmeter.runner.config import redact

    return redact({k: settings[k] for k in _REPLY_KEYS if k in settings})
