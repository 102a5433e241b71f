"""``LiteLLMJudgeClient`` (extra ``ragmeter[litellm]``), for providers that are not
OpenAI-compatible (docs/judge.md).

``litellm`` is imported lazily, with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first so that the
import never fetches the cost map from the network. The compromised releases 1.82.7 and 1.82.8
are excluded by the extra's requirement. ragmeter's ledger stays authoritative; litellm's own
cost data is ignored.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

from ragmeter.judge.client import (
    JudgeRequest,
    JudgeResponse,
    RequestRejected,
    TransientError,
    classify_status,
)
from ragmeter.judge.negotiation import Negotiation, effective_params
from ragmeter.judge.replies import decode_reply
from ragmeter.judge.secrets import Redactor

__all__ = ["LiteLLMJudgeClient", "import_litellm"]


def _plain(obj: Any) -> Any:
    """litellm's response objects (pydantic models, or any attribute bag) as plain JSON."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "model_dump"):
        return _plain(obj.model_dump())
    if hasattr(obj, "__dict__"):
        return _plain(vars(obj))
    return str(obj)


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


class LiteLLMJudgeClient:
    def __init__(
        self,
        *,
        provider: str,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 120.0,
        structured: str = "auto",
        extra_params: Mapping[str, Any] | None = None,
        redactor: Redactor | None = None,
        negotiation: Mapping[str, Any] | None = None,
    ) -> None:
        self._litellm = import_litellm()
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.negotiation = Negotiation.start(structured, negotiation)
        self.extra_params = dict(extra_params or {})
        self.redact = redactor or Redactor([api_key])

    async def aclose(self) -> None:
        return None

    async def complete(self, req: JudgeRequest) -> JudgeResponse:
        litellm = self._litellm
        neg = Negotiation(**self.negotiation.__dict__)
        kw: dict[str, Any] = {
            "model": f"{self.provider}/{self.model}",
            "messages": req.messages,
            "timeout": req.timeout_s,
            "num_retries": 0,
            **self.extra_params,
        }
        if self.base_url:
            kw["api_base"] = self.base_url
        if self._api_key:
            kw["api_key"] = self._api_key
        for k, v in req.params.items():
            if v is None or (k == "temperature" and not neg.temperature):
                continue
            kw[neg.token_param if k == "max_tokens" else k] = v
        if req.schema is not None and neg.structured == "json_schema":
            kw["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": req.schema_name, "schema": req.schema, "strict": True},
            }
        elif req.schema is not None and neg.structured == "json_object":
            kw["response_format"] = {"type": "json_object"}
        t0 = time.perf_counter()
        try:
            resp = await litellm.acompletion(**kw)
        except Exception as exc:  # litellm maps provider errors onto OpenAI-like classes
            status = getattr(exc, "status_code", None)
            name = type(exc).__name__
            if "Timeout" in name:
                raise TransientError("timeout", None, "read timeout") from None
            if "Connection" in name and status is None:
                raise TransientError("connection", None, "connection error") from None
            if isinstance(status, int):
                if (
                    status == 400
                    and req.schema is not None
                    and neg.auto
                    and "response_format" in kw
                ):
                    msg = str(getattr(exc, "message", exc)).lower()
                    if "response_format" in msg or "schema" in msg:
                        if neg.structured == "json_schema":
                            self.negotiation.structured = "json_object"
                        elif neg.structured == "json_object":
                            self.negotiation.structured = "prompt"
                        return await self.complete(req)
                headers = getattr(getattr(exc, "response", None), "headers", {}) or {}
                raise classify_status(
                    status,
                    str(getattr(exc, "message", exc)),
                    dict(headers),
                    getattr(exc, "code", None),
                    self.redact,
                ) from None
            raise RequestRejected(400, self.redact(str(exc)) or name) from None
        latency = (time.perf_counter() - t0) * 1000.0
        # the same reading as the OpenAI client's, so an odd reply is classified the same way
        body = json.dumps(_plain(resp)).encode("utf-8")
        return decode_reply(
            body,
            latency,
            effective_params(req.params, neg, has_schema=req.schema is not None),
            self.redact,
        )
