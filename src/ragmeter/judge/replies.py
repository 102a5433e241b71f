"""Judge replies: reading an HTTP-200 body, and the status one reply gives (docs/judge.md).

:func:`decode_reply` turns whatever an endpoint sends with status 200 into a
:class:`~ragmeter.judge.client.JudgeResponse` or an endpoint fault; :func:`scrub` masks the key
in a reply before anything reads it; :func:`assess` gives the status of one reply as it stands
(before the runtime's truncation retry or repair).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.judge.client import JudgeResponse, TransientError
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


def _bad(reason: str) -> TransientError:
    return TransientError("bad_reply", None, f"HTTP 200 with {reason}")


def _describe(data: Any) -> str:
    if data is None:
        return "JSON null"
    if isinstance(data, bool):
        return f"JSON {str(data).lower()}"
    if isinstance(data, (int, float)):
        return "a JSON number"
    return {list: "a JSON array", str: "a JSON string"}.get(type(data), "a JSON value")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _content_text(content: Any) -> str | None:
    """``message.content`` as text: a string, or a list of text parts joined (some servers)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and isinstance(p.get("text"), str) for p in content
    ):
        return "".join(p["text"] for p in content)
    raise _bad(f"a message.content that is {_describe_value(content)} (expected a string)")


def _describe_value(value: Any) -> str:
    return "a JSON object" if isinstance(value, Mapping) else _describe(value)


def _logprobs(choice: Mapping[str, Any]) -> list[Any] | None:
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, Mapping) else None
    if not isinstance(content, list) or not content:
        return None
    out = []
    for t in content:
        if not isinstance(t, Mapping):
            return None  # logprobs are optional: an odd shape is dropped, not an error
        alts = t.get("top_logprobs") if isinstance(t.get("top_logprobs"), list) else []
        out.append(
            {
                "token": t.get("token"),
                "logprob": t.get("logprob"),
                "top_logprobs": [
                    {"token": a.get("token"), "logprob": a.get("logprob")}
                    for a in alts
                    if isinstance(a, Mapping)
                ],
            }
        )
    return out


def decode_reply(
    body: bytes, latency_ms: float, sent: Mapping[str, Any], redact: Redactor | None = None
) -> JudgeResponse:
    """Read an HTTP-200 body as a chat completion, or raise ``TransientError("bad_reply")``.

    Whatever an endpoint or a proxy in front of it sends with status 200 is classified: a
    body that is not JSON (cut off, an HTML error page), JSON that is not an object (``null``,
    ``[1,2,3]``), an ``error`` object, no ``choices``, or a ``message.content`` that is not
    text is an endpoint fault, retried like a 5xx and never cached as a reply.

    >>> decode_reply(b'{"choices": [{"message": {"content": "hi"}}]}', 1.0, {}).text
    'hi'
    >>> decode_reply(b"<html>502 Bad Gateway</html>", 1.0, {})
    Traceback (most recent call last):
    ragmeter.judge.client.TransientError: HTTP 200 with an HTML page instead of JSON
    >>> decode_reply(b"[1,2,3]", 1.0, {})
    Traceback (most recent call last):
    ragmeter.judge.client.TransientError: HTTP 200 with a JSON array instead of a chat completion
    """
    text = body.decode("utf-8", errors="replace").strip()
    if not text:
        raise _bad("an empty body")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        if text[:1] == "<":
            raise _bad("an HTML page instead of JSON") from None
        where = f" ({exc.msg} at char {exc.pos})" if isinstance(exc, json.JSONDecodeError) else ""
        raise _bad(f"a body that is not JSON{where}") from None
    if not isinstance(data, Mapping):
        raise _bad(f"{_describe(data)} instead of a chat completion")
    err = data.get("error")
    if err is not None:
        msg = err.get("message") if isinstance(err, Mapping) else err
        shown = (redact(str(msg)) if redact else str(msg)) or ""
        raise _bad(f"an error object: {shown[:200]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _bad("no choices")
    choice = choices[0]
    msg = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(msg, Mapping):
        raise _bad("a choice without a message object")
    usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
    details = usage.get("prompt_tokens_details")
    cached = _int_or_none(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    refusal = msg.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        refusal = json.dumps(refusal)  # still a refusal, shown as it came
    return JudgeResponse(
        text=_content_text(msg.get("content")),
        refusal=refusal or None,
        finish_reason=_str_or_none(choice.get("finish_reason")),
        prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
        completion_tokens=_int_or_none(usage.get("completion_tokens")),
        cached_prompt_tokens=cached,
        model=_str_or_none(data.get("model")),
        logprobs=_logprobs(choice),
        latency_ms=latency_ms,
        sent_params=sent,
    )


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
