"""The judge endpoint the runner hands to LLM tasks (docs/judge.md, "Configuring an endpoint").

The judge engine resolves it (:func:`ragmeter.judge.resolve_config`: environment variables, then
the config's ``judge:`` block; the runner has no judge flags). The judge counts as configured
when a model is known and either a base URL is known or the API key variable is set; otherwise
LLM metrics report ``needs_llm`` and the task is reported as skipped with the judge's one-line
hint. Only the settings that change replies enter cache keys; credentials never do.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_CONFIGURED", "JudgeSettings", "resolve_judge"]

NOT_CONFIGURED = (
    "LLM metrics skipped (status needs_llm): set RAGMETER_LLM_BASE_URL and RAGMETER_LLM_MODEL "
    "(and OPENAI_API_KEY if the endpoint needs a key)."
)


@dataclass(frozen=True)
class JudgeSettings:
    """The resolved judge: the engine's ``JudgeConfig`` (or ``None`` without the engine)."""

    config: Any
    reason: str | None  # why LLM metrics cannot run, or None
    public: Mapping[str, Any]  # what changes replies; part of cache keys, no secrets

    @property
    def configured(self) -> bool:
        return self.reason is None


def _with_paths(block: Mapping[str, Any] | None, base_dir: str | None) -> dict[str, Any] | None:
    """Relative ``cache`` and ``prices`` paths in the config are relative to the config file."""
    if block is None:
        return None
    out = dict(block)
    if base_dir:
        cache = out.get("cache")
        if isinstance(cache, str) and not os.path.isabs(cache) and "://" not in cache:
            out["cache"] = os.path.join(base_dir, cache)  # a postgresql:// URL stays as it is
        prices = out.get("prices")
        if isinstance(prices, str):
            prices = [prices]
        if isinstance(prices, list):
            out["prices"] = [
                p if not isinstance(p, str) or os.path.isabs(p) else os.path.join(base_dir, p)
                for p in prices
            ]
    return out


def resolve_judge(block: Mapping[str, Any] | None, base_dir: str | None = None) -> JudgeSettings:
    """The judge settings of a run (environment over the config's ``judge:`` block)."""
    if importlib.util.find_spec("ragmeter.judge") is None:
        return JudgeSettings(None, "the judge engine is not part of this build of ragmeter", {})
    from ragmeter.judge.config import HINT, HINT_EXTRA, resolve_config

    config = resolve_config(block=_with_paths(block, base_dir))
    reason = None
    if not config.configured:
        reason = HINT
    elif not config.is_litellm and importlib.util.find_spec("openai") is None:
        reason = HINT_EXTRA
    return JudgeSettings(config, reason, config.public())
