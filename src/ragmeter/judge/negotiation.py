"""What a judge endpoint accepts, learnt from its 400 replies (docs/judge.md).

An OpenAI-compatible server may refuse ``json_schema`` response formats, ``max_tokens`` (newer
models want ``max_completion_tokens``) or a temperature; the client adapts once and remembers it
in a :class:`Negotiation`, which the cache key includes through :func:`effective_params`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Negotiation", "effective_params"]


@dataclass
class Negotiation:
    """What the endpoint accepts, learnt from its 400 replies."""

    structured: str = "json_schema"  # the mode in use: json_schema | json_object | prompt
    token_param: str = "max_tokens"  # or max_completion_tokens
    temperature: bool = True  # False once the endpoint rejected temperature
    auto: bool = True  # structured: auto may downgrade

    def to_dict(self) -> dict[str, Any]:
        return {
            "structured": self.structured,
            "token_param": self.token_param,
            "temperature": self.temperature,
        }

    @classmethod
    def start(cls, structured: str, saved: Mapping[str, Any] | None = None) -> Negotiation:
        neg = cls(
            structured="json_schema" if structured == "auto" else structured,
            auto=structured == "auto",
        )
        if saved:
            if neg.auto and saved.get("structured") in ("json_schema", "json_object", "prompt"):
                neg.structured = saved["structured"]
            if saved.get("token_param") in ("max_tokens", "max_completion_tokens"):
                neg.token_param = saved["token_param"]
            if saved.get("temperature") is False:
                neg.temperature = False
        return neg


_DOWNGRADE = {"json_schema": "json_object", "json_object": "prompt"}


def effective_params(
    params: Mapping[str, Any], neg: Negotiation, *, has_schema: bool
) -> dict[str, Any]:
    """The output-affecting parameters as they are sent under ``neg`` (part of the cache key).

    >>> effective_params({"temperature": 0, "max_tokens": 64}, Negotiation(token_param=
    ...     "max_completion_tokens", temperature=False), has_schema=True)
    {'max_completion_tokens': 64, 'structured': 'json_schema', 'temperature': None}
    """
    out: dict[str, Any] = {}
    for k, v in params.items():
        if k == "max_tokens":
            out[neg.token_param] = v
        elif k == "temperature":
            out["temperature"] = v if neg.temperature else None
        elif v is not None:
            out[k] = v
    out["structured"] = neg.structured if has_schema else "text"
    return dict(sorted(out.items()))


def _mentions(text: str, *words: str) -> bool:
    return any(w in text for w in words)


_UNSUPPORTED = (
    "unsupported",
    "not supported",
    "does not support",
    "not support",
    "only the default",
    "invalid parameter",
    "unknown parameter",
    "unrecognized",
)
