"""Judge replies: reading an HTTP-200 body, and the status one reply gives (docs/judge.md).

:func:`decode_reply` (the client's, re-exported) turns whatever an endpoint sends with status
200 into a :class:`~ragmeter.judge.client.JudgeResponse` or an endpoint fault; :func:`scrub`
masks the key in a reply before anything reads it; :func:`assess` gives the status of one reply
as it stands (before the runtime's truncation retry or repair).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.judge.client import JudgeResponse, decode_reply
from ragmeter.judge.parsing import clean_text, parse_reply
from ragmeter.judge.schemas import OutputSpec
from ragmeter.judge.secrets import Redactor

__all__ = [
    "REPLY_TOO_LARGE",
    "TRUNCATED",
    "Exchange",
    "assess",
    "decode_reply",
    "response_dict",
    "scrub",
    "too_large",
    "was_fault",
]

TRUNCATED = "truncated"
REPLY_TOO_LARGE = "reply_too_large"


@dataclass
class Exchange:
    status: str  # ok | parse_error | refused | truncated | timeout | budget_exceeded
    detail: str | None
    response: dict[str, Any] | None = None
    obj: Any = None
    errors: list[str] = field(default_factory=list)
    cache_hit: bool = False
    key: str | None = None  # the cache entry that holds ``response``


def response_dict(r: JudgeResponse) -> dict[str, Any]:
    return {
        "text": r.text,
        "refusal": r.refusal,
        "finish_reason": r.finish_reason,
        "usage": {
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "cached_prompt_tokens": r.cached_prompt_tokens,
        },
        "model": r.model,
        "logprobs": r.logprobs,
    }


def too_large(limit: int, usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The cache entry of a reply over ``max_reply_bytes``: the reason, never the reply."""
    return {
        "text": None,
        "refusal": None,
        "finish_reason": None,
        "usage": dict(usage or {}),
        "model": None,
        "logprobs": None,
        "fault": f"{REPLY_TOO_LARGE}: the reply has more than {limit} bytes (max_reply_bytes)",
    }


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def assess(resp: Mapping[str, Any], spec: OutputSpec | None) -> Exchange:
    """The status of one HTTP-200 reply as it stands (before truncation retry or repair)."""
    if resp.get("fault"):  # a reply that was not kept (reply_too_large): no repair either
        return Exchange(st.PARSE_ERROR, str(resp["fault"]), dict(resp), errors=[])
    if resp.get("refusal"):
        return Exchange(st.REFUSED, f"refusal: {str(resp['refusal'])[:200]}", dict(resp))
    if resp.get("finish_reason") == "content_filter":
        return Exchange(st.REFUSED, "content_filter", dict(resp))
    if resp.get("finish_reason") == "length":
        return Exchange(TRUNCATED, TRUNCATED, dict(resp))
    text = resp.get("text")
    if spec is None:
        if text is None or not str(text).strip():
            return Exchange(st.PARSE_ERROR, "empty reply", dict(resp), errors=["empty reply"])
        return Exchange(st.OK, None, dict(resp), obj=clean_text(str(text)))
    obj, errors = parse_reply(text, spec)
    if errors:
        return Exchange(st.PARSE_ERROR, errors[0], dict(resp), errors=errors)
    return Exchange(st.OK, None, dict(resp), obj=obj)


def scrub(response: dict[str, Any], redact: Redactor) -> dict[str, Any]:
    """The reply with every trace of the key masked before it is parsed, cached or shown.

    Log-probabilities spell the reply token by token, where no redactor can see a key, so
    they are dropped from a reply that needed masking.
    """
    out = dict(response)
    changed = False
    mask = getattr(redact, "reply", redact)  # data in a reply is not an HTTP header
    for k in ("text", "refusal", "model"):
        if isinstance(out.get(k), str):
            masked = mask(out[k])
            changed = changed or masked != out[k]
            out[k] = masked
    if changed:
        out["logprobs"] = None
    return out


def was_fault(response: Mapping[str, Any]) -> bool:
    """A cached "reply" that is an endpoint fault stored by an earlier release: one that carries
    nothing a chat completion has (no text, refusal, finish reason, model or usage: a proxy's
    HTML page, ``null`` or an error object, replayed as ``parse_error: empty reply``), or whose
    text is not text (a ``message.content`` that was a JSON object).
    """
    if response.get("fault"):
        return False  # reply_too_large: a real reply, deliberately not kept
    if not isinstance(response.get("text"), (str, type(None))):
        return True  # a message.content that was a JSON object, cached as it came
    usage = response.get("usage") or {}
    return all(
        response.get(k) is None for k in ("text", "refusal", "finish_reason", "model")
    ) and all(v is None for v in usage.values())
