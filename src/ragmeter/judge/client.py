"""The client layer (docs/judge.md): one protocol, the OpenAI-compatible client, error classes.

:class:`OpenAIJudgeClient` talks Chat Completions to any OpenAI-compatible ``base_url``
(OpenAI, vLLM, Ollama, the llama.cpp server, LM Studio): the ``openai`` SDK gives the URL and
the headers, and :mod:`ragmeter.judge.transport` sends the request over aiohttp, without
retries of its own, so that the runtime counts attempts, keeps the ledger and classifies
errors. It negotiates what the endpoint supports (structured mode, ``max_tokens`` spelling,
``temperature``) from 400 replies, adapts, resends, and remembers the result for the endpoint.

It reads the HTTP-200 body itself (:func:`decode_reply`, here so that the client never imports
:mod:`ragmeter.judge.replies`, which builds on the client's types) instead of
trusting a typed model, so that whatever an endpoint or a proxy in front of it sends (a
cut-off body, an HTML page, ``null``, an error object, a ``content`` that is not text) becomes
a classified error, and it stops reading a body at ``max_reply_bytes``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ragmeter.judge.call_errors import (
    FatalJudgeError,
    ReplyTooLarge,
    RequestRejected,
    TransientError,
)
from ragmeter.judge.negotiation import (
    _DOWNGRADE,
    _UNSUPPORTED,
    Negotiation,
    _mentions,
    effective_params,
)
from ragmeter.judge.secrets import Redactor
from ragmeter.judge.transport import Transport, status_error

__all__ = [
    "FatalJudgeError",
    "JudgeClient",
    "JudgeRequest",
    "JudgeResponse",
    "Negotiation",
    "OpenAIJudgeClient",
    "ReplyTooLarge",
    "RequestRejected",
    "TransientError",
    "decode_reply",
    "run_sync",
]

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeRequest:
    messages: list[dict[str, str]]
    schema: dict[str, Any] | None
    schema_name: str
    params: dict[str, Any]  # temperature, max_tokens, seed?, top_p?, stop?, logprobs?, ...
    timeout_s: float


@dataclass(frozen=True)
class JudgeResponse:
    text: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_prompt_tokens: int | None
    model: str | None
    logprobs: list[Any] | None
    latency_ms: float
    # what was actually sent after negotiation (ragmeter extension; part of the cache key)
    sent_params: Mapping[str, Any] | None = None


class JudgeClient(Protocol):
    model: str

    async def complete(self, req: JudgeRequest) -> JudgeResponse: ...

    async def aclose(self) -> None: ...


class OpenAIJudgeClient:
    """The default client: Chat Completions against an OpenAI-compatible base URL, with the
    ``openai`` SDK's URL and headers."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout_s: float = 120.0,
        structured: str = "auto",
        negotiation: Mapping[str, Any] | None = None,
        extra_params: Mapping[str, Any] | None = None,
        redactor: Redactor | None = None,
        max_reply_bytes: int | None = None,
    ) -> None:
        self.max_reply_bytes = max_reply_bytes
        self.model = model
        self.base_url = base_url
        self.negotiation = Negotiation.start(structured, negotiation)
        self.extra_params = dict(extra_params or {})
        self.redact = redactor or Redactor([api_key])
        self._transport = Transport(
            base_url=base_url, api_key=api_key or "EMPTY", timeout_s=timeout_s
        )
        self._lock = threading.Lock()

    async def aclose(self) -> None:
        await self._transport.aclose()

    def _kwargs(self, req: JudgeRequest, neg: Negotiation) -> dict[str, Any]:
        kw: dict[str, Any] = {"model": self.model, "messages": req.messages}
        for k, v in req.params.items():
            if v is None:
                continue
            if k == "max_tokens":
                kw[neg.token_param] = v
            elif k == "temperature":
                if neg.temperature:
                    kw["temperature"] = v
            elif k in ("top_p", "seed", "stop", "logprobs", "top_logprobs"):
                kw[k] = v
        if req.schema is not None:
            if neg.structured == "json_schema":
                kw["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": req.schema_name, "schema": req.schema, "strict": True},
                }
            elif neg.structured == "json_object":
                kw["response_format"] = {"type": "json_object"}
        if self.extra_params:
            kw["extra_body"] = dict(self.extra_params)
        return kw

    def _adapt(self, message: str, neg: Negotiation, sent: Mapping[str, Any]) -> bool:
        """Learn from a 400 reply; return True when the request should be resent."""
        text = message.lower()
        with self._lock:
            if (
                "max_tokens" in text
                and neg.token_param == "max_tokens"
                and ("max_completion_tokens" in text or _mentions(text, *_UNSUPPORTED))
            ):
                self.negotiation.token_param = "max_completion_tokens"
                return True
            if (
                "temperature" in text
                and neg.temperature
                and "temperature" in sent
                and _mentions(text, *_UNSUPPORTED)
            ):
                self.negotiation.temperature = False
                return True
            if "response_format" in sent and _mentions(
                text, "response_format", "json_schema", "schema", "json_object"
            ):
                if not neg.auto:
                    raise FatalJudgeError(
                        f"the endpoint rejected structured mode {neg.structured} "
                        f"({self.redact(message)}); use --structured auto"
                    )
                if self.negotiation.structured == neg.structured:
                    self.negotiation.structured = _DOWNGRADE[neg.structured]
                return True
        return False

    async def complete(self, req: JudgeRequest) -> JudgeResponse:
        for _ in range(8):  # each adaptation is one-way, so this always ends
            with self._lock:
                neg = Negotiation(**self.negotiation.__dict__)
            kw = self._kwargs(req, neg)
            body = dict(kw)
            body.update(body.pop("extra_body", None) or {})
            t0 = time.perf_counter()
            status, headers, content = await self._transport.post(
                body, req.timeout_s, self.max_reply_bytes
            )
            if status >= 400:
                message, code = status_error(status, content)
                if status == 400 and self._adapt(message, neg, kw):
                    continue
                raise classify_status(status, message, headers, code, self.redact)
            latency = (time.perf_counter() - t0) * 1000.0
            return decode_reply(
                content,
                latency,
                effective_params(req.params, neg, has_schema=req.schema is not None),
                self.redact,
            )
        raise RequestRejected(400, "the endpoint kept rejecting the request")


def classify_status(
    status: int,
    message: str,
    headers: Mapping[str, str],
    code: str | None,
    redact: Redactor,
) -> Exception:
    """Map an HTTP error to the runtime's classes (docs/judge.md, retries)."""
    from ragmeter.judge.limiter import parse_retry_after

    msg = redact(message) or ""
    if status == 429:
        if code == "insufficient_quota" or ("quota" in msg.lower() and "exceeded" in msg.lower()):
            return FatalJudgeError(f"HTTP 429: quota exhausted ({msg})")
        return TransientError("rate_limit", parse_retry_after(headers), "HTTP 429")
    if status in (408, 409) or status >= 500:
        return TransientError("server", parse_retry_after(headers), f"HTTP {status}")
    if status in (401, 403):
        return FatalJudgeError(f"HTTP {status}: the endpoint refused the credentials ({msg})")
    if status == 404:
        return FatalJudgeError(f"HTTP 404: unknown model or endpoint path ({msg})")
    return RequestRejected(status, msg)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code.

    Without a running loop this is ``asyncio.run``; inside one (Jupyter) the coroutine runs on
    a private loop in a worker thread, so no ``nest_asyncio`` is ever needed.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=worker, name="ragmeter-judge", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- reading an HTTP-200 body ---------------------------------------------------------------


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
    ragmeter.judge.call_errors.TransientError: HTTP 200 with an HTML page instead of JSON
    >>> decode_reply(b"[1,2,3]", 1.0, {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragmeter.judge.call_errors.TransientError: HTTP 200 with a JSON array instead of a chat ...
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
