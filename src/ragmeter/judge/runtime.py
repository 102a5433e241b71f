"""The judge runtime: one call = cache, budget, limiter, retries, validation, repair (§3–§8).

:meth:`JudgeRuntime.call` renders a prompt, looks the request up in the cache (and among the
identical calls in flight), and only on a miss reserves budget, waits for the rate limiter,
takes a concurrency slot and sends it, retrying transient errors with backoff. The reply is
committed to the cache at once (valid or not), a ledger row is written, and the reply is
parsed and validated; a ``length`` finish is retried once with doubled ``max_tokens`` and an
invalid reply gets one repair call. The outcome is a status of judge.md §4, never an exception,
except :class:`~ragmeter.judge.client.FatalJudgeError`, which stops the run.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.cache import JudgeCache, cache_key
from ragmeter.judge.client import (
    FatalJudgeError,
    JudgeClient,
    JudgeRequest,
    JudgeResponse,
    Negotiation,
    RequestRejected,
    TransientError,
    effective_params,
)
from ragmeter.judge.config import JudgeConfig, is_local_endpoint
from ragmeter.judge.ledger import (
    Budget,
    Ledger,
    PriceTable,
    call_cost,
    estimate_prompt_tokens,
    reservation,
)
from ragmeter.judge.limiter import Clock, RateLimiter, RealClock, backoff_delay
from ragmeter.judge.parsing import clean_text, parse_reply
from ragmeter.judge.schemas import OutputSpec
from ragmeter.judge.secrets import Redactor, endpoint_id

__all__ = ["CallOutcome", "CallStats", "Ctx", "JudgeRuntime", "Stop"]

TRUNCATED = "truncated"
REPAIR_CHARS = 4000


@dataclass
class CallStats:
    """Accounting of one (sample, metric, repeat): the per-sample record's cost fields (§8)."""

    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    prompt_versions: list[str] = field(default_factory=list)
    # the judge-cache entries the sample's result came from, in call order: what lets the
    # dashboard show the prompts and replies (hashes and stage names only, never the text)
    cache_keys: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: CallStats) -> None:
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd
        for p in other.prompt_versions:
            if p not in self.prompt_versions:
                self.prompt_versions.append(p)
        self.cache_keys.extend(other.cache_keys)


@dataclass
class Ctx:
    sample_id: str
    metric: str
    repeat: int = 0
    stats: CallStats = field(default_factory=CallStats)
    key_extra: Mapping[str, Any] = field(default_factory=dict)  # cache-key only, never sent

    def sub(self, **key_extra: Any) -> Ctx:
        """The same sample, metric and accounting, with extra cache-key fields."""
        return Ctx(
            self.sample_id, self.metric, self.repeat, self.stats, {**self.key_extra, **key_extra}
        )


@dataclass(frozen=True)
class CallOutcome:
    status: str
    detail: str | None = None
    value: Any = None  # the validated pydantic object, or the text of a free-text call
    logprobs: list[Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == st.OK


class Stop(Exception):
    """A pipeline stage did not give ``ok``: carries the sample's status and detail."""

    def __init__(self, status: str, detail: str | None = None) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"{status}: {detail}")


@dataclass
class _Exchange:
    status: str  # ok | parse_error | refused | truncated | timeout | budget_exceeded
    detail: str | None
    response: dict[str, Any] | None = None
    obj: Any = None
    errors: list[str] = field(default_factory=list)
    cache_hit: bool = False
    key: str | None = None  # the cache entry that holds ``response``


def _response_dict(r: JudgeResponse) -> dict[str, Any]:
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


def _assess(resp: Mapping[str, Any], spec: OutputSpec | None) -> _Exchange:
    """The status of one HTTP-200 reply as it stands (before truncation retry or repair)."""
    if resp.get("refusal"):
        return _Exchange(st.REFUSED, f"refusal: {str(resp['refusal'])[:200]}", dict(resp))
    if resp.get("finish_reason") == "content_filter":
        return _Exchange(st.REFUSED, "content_filter", dict(resp))
    if resp.get("finish_reason") == "length":
        return _Exchange(TRUNCATED, TRUNCATED, dict(resp))
    text = resp.get("text")
    if spec is None:
        if text is None or not str(text).strip():
            return _Exchange(st.PARSE_ERROR, "empty reply", dict(resp), errors=["empty reply"])
        return _Exchange(st.OK, None, dict(resp), obj=clean_text(str(text)))
    obj, errors = parse_reply(text, spec)
    if errors:
        return _Exchange(st.PARSE_ERROR, errors[0], dict(resp), errors=errors)
    return _Exchange(st.OK, None, dict(resp), obj=obj)


def _versions(refs: set[str]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for ref in sorted(refs):
        for part in ref.split("+"):
            pid, _, ver = part.partition("@")
            out[pid] = int(ver) if ver.isdigit() else ver
    return out


class JudgeRuntime:
    """Everything one run's LLM calls share: client, cache, ledger, budget, limiter, clock."""

    def __init__(
        self,
        config: JudgeConfig,
        client: JudgeClient,
        *,
        cache: JudgeCache | None = None,
        ledger: Ledger | None = None,
        prices: PriceTable | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        refresh_cache: bool = False,
        retry_errors: bool = False,
        run_id: str | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.model = config.model or getattr(client, "model", "")
        self.base_url = config.effective_base_url
        self.endpoint = config.cache_namespace or endpoint_id(self.base_url)
        self.cache = cache if cache is not None else JudgeCache(None)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.ledger = ledger if ledger is not None else Ledger(self.run_id, sink=self.cache)
        self.prices = prices or PriceTable(
            config.prices, price_in=config.price_in, price_out=config.price_out
        )
        self.price = self.prices.resolve(self.model, local=is_local_endpoint(self.base_url))
        self.clock = clock or RealClock()
        self.rng = rng or random.Random(0)
        self.refresh_cache = refresh_cache
        self.retry_errors = retry_errors
        self.redact: Redactor = getattr(client, "redact", None) or Redactor([config.api_key])
        self.limiter = RateLimiter(rpm=config.rpm, tpm=config.tpm, clock=self.clock)
        self.budget = Budget(config.max_cost_usd)
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: dict[str, asyncio.Future[_Exchange]] = {}
        self.fatal: FatalJudgeError | None = None
        self.used_prompts: set[str] = set()
        self.calls_in_flight = 0
        self._neg_key = f"negotiation:{self.endpoint}|{self.model}"
        saved = self.cache.get_meta(self._neg_key)
        neg = getattr(client, "negotiation", None)
        if saved and isinstance(neg, Negotiation):
            start = Negotiation.start(config.structured, json.loads(saved))
            neg.structured, neg.token_param, neg.temperature = (
                start.structured,
                start.token_param,
                start.temperature,
            )
        self._saved_neg = saved

    # -- negotiation -----------------------------------------------------------------------
    @property
    def negotiation(self) -> Negotiation:
        neg = getattr(self.client, "negotiation", None)
        if isinstance(neg, Negotiation):
            return neg
        return Negotiation.start(self.config.structured)

    def save_negotiation(self) -> None:
        now = json.dumps(self.negotiation.to_dict(), sort_keys=True)
        if now != self._saved_neg:
            self.cache.set_meta(self._neg_key, now)
            self._saved_neg = now

    def metadata(self) -> dict[str, Any]:
        neg = self.negotiation
        meta = self.config.public()
        meta.update(
            {
                "model": self.model,
                "structured": neg.structured,
                "temperature": self.config.temperature if neg.temperature else None,
                "token_param": neg.token_param,
                "prompt_versions": _versions(self.used_prompts),
                "price": None
                if self.price is None
                else {
                    "input_per_mtok": self.price.input_per_mtok,
                    "output_per_mtok": self.price.output_per_mtok,
                    "cached_input_per_mtok": self.price.cached_input_per_mtok,
                    "as_of": self.price.as_of,
                    "source": self.price.source,
                    "key": self.price.key or None,
                },
            }
        )
        return meta

    # -- the public call -------------------------------------------------------------------
    def base_params(
        self, max_tokens: int, extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        cfg = self.config
        params: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": max_tokens}
        if cfg.top_p is not None:
            params["top_p"] = cfg.top_p
        if cfg.seed is not None:
            params["seed"] = cfg.seed
        if cfg.stop:
            params["stop"] = list(cfg.stop)
        for k, v in (extra or {}).items():
            params[k] = v
        return params

    def too_long(self, messages: Sequence[Mapping[str, str]]) -> bool:
        limit = self.config.max_input_tokens
        return limit is not None and estimate_prompt_tokens(messages) > limit

    async def call(
        self,
        prompt: prompts.Prompt,
        values: Mapping[str, Any],
        spec: OutputSpec | None,
        ctx: Ctx,
        *,
        items: int = 0,
        extra: Mapping[str, Any] | None = None,
    ) -> CallOutcome:
        messages = prompt.render(values)
        return await self.call_messages(
            messages,
            prompt.ref,
            spec,
            ctx,
            est_out=prompt.estimate_output(values, items),
            extra=extra,
        )

    async def call_messages(
        self,
        messages: list[dict[str, str]],
        prompt_ref: str,
        spec: OutputSpec | None,
        ctx: Ctx,
        *,
        est_out: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> CallOutcome:
        self.used_prompts.add(prompt_ref)
        if prompt_ref not in ctx.stats.prompt_versions:
            ctx.stats.prompt_versions.append(prompt_ref)
        if self.too_long(messages):
            return CallOutcome(st.REFUSED, "input too long")
        max_tokens = self.config.max_tokens
        ex = await self._exchange(messages, prompt_ref, spec, ctx, max_tokens, extra, "call")
        if ex.status == TRUNCATED:
            doubled = min(max_tokens * 2, max(self.config.max_tokens_cap, max_tokens))
            if doubled > max_tokens:
                ex = await self._exchange(messages, prompt_ref, spec, ctx, doubled, extra, "call")
            if ex.status == TRUNCATED:
                return CallOutcome(st.PARSE_ERROR, TRUNCATED)
            max_tokens = doubled
        if ex.status == st.PARSE_ERROR and ex.response is not None and spec is not None:
            ex = await self._repair(messages, prompt_ref, spec, ctx, max_tokens, extra, ex)
        if ex.status == TRUNCATED:
            return CallOutcome(st.PARSE_ERROR, TRUNCATED)
        logprobs = ex.response.get("logprobs") if ex.response else None
        return CallOutcome(ex.status, ex.detail, ex.obj, logprobs)

    async def _repair(
        self,
        messages: list[dict[str, str]],
        prompt_ref: str,
        spec: OutputSpec,
        ctx: Ctx,
        max_tokens: int,
        extra: Mapping[str, Any] | None,
        bad: _Exchange,
    ) -> _Exchange:
        repair = prompts.get("repair")
        self.used_prompts.add(repair.ref)
        text = str((bad.response or {}).get("text") or "")[:REPAIR_CHARS]
        errors = "; ".join(bad.errors[:10]) or (bad.detail or "invalid reply")
        msgs = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": repair.render({"errors": errors})[1]["content"]},
        ]
        ex = await self._exchange(
            msgs, f"{prompt_ref}+{repair.ref}", spec, ctx, max_tokens, extra, "repair"
        )
        if ex.status == st.PARSE_ERROR:
            # the first error of the last attempt explains the parse_error
            return _Exchange(st.PARSE_ERROR, ex.errors[0] if ex.errors else ex.detail, ex.response)
        return ex

    # -- one request: dedup, cache, budget, send -------------------------------------------
    async def _exchange(
        self,
        messages: list[dict[str, str]],
        prompt_ref: str,
        spec: OutputSpec | None,
        ctx: Ctx,
        max_tokens: int,
        extra: Mapping[str, Any] | None,
        kind: str,
    ) -> _Exchange:
        ex = await self._lookup_or_send(messages, prompt_ref, spec, ctx, max_tokens, extra, kind)
        if ex.key is not None and ex.response is not None:
            # a sample's calls are sequential, so this order is the pipeline's and is the same
            # when a re-run answers from the cache
            ctx.stats.cache_keys.append(
                {
                    "stage": prompt_ref.split("@")[0],
                    "kind": kind,
                    "repeat": ctx.repeat,
                    "key": ex.key,
                }
            )
        return ex

    async def _lookup_or_send(
        self,
        messages: list[dict[str, str]],
        prompt_ref: str,
        spec: OutputSpec | None,
        ctx: Ctx,
        max_tokens: int,
        extra: Mapping[str, Any] | None,
        kind: str,
    ) -> _Exchange:
        if self.fatal is not None:
            raise self.fatal
        params = self.base_params(max_tokens, extra)
        schema = spec.schema if spec is not None else None
        key, eff = self._key(messages, params, schema, prompt_ref, ctx)
        stage = prompt_ref.split("@")[0]

        pending = self._inflight.get(key)
        if pending is not None:
            ex = await asyncio.shield(pending)
            if ex.status in (st.TIMEOUT, st.BUDGET_EXCEEDED) or ex.response is None:
                return ex
            self._hit(ctx, stage, kind, ex.status)
            return _Exchange(ex.status, ex.detail, ex.response, ex.obj, ex.errors, True, ex.key)

        if not self.refresh_cache:
            entry = self.cache.get(key)
            if entry is not None and (entry.valid or not self.retry_errors):
                ex = _assess(entry.response, spec)
                ex.cache_hit = True
                ex.key = key
                self._hit(ctx, stage, kind, ex.status)
                return ex

        fut: asyncio.Future[_Exchange] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            ex = await self._send(messages, params, eff, schema, spec, prompt_ref, key, ctx, kind)
            fut.set_result(ex)
            return ex
        except Exception as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        except BaseException:
            fut.cancel()
            raise
        finally:
            self._inflight.pop(key, None)

    def _key(
        self,
        messages: list[dict[str, str]],
        params: Mapping[str, Any],
        schema: Mapping[str, Any] | None,
        prompt_ref: str,
        ctx: Ctx,
        sent: Mapping[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        eff = dict(
            sent
            if sent is not None
            else effective_params(params, self.negotiation, has_schema=schema is not None)
        )
        eff["repeat"] = ctx.repeat
        eff.update(ctx.key_extra)
        if self.config.cache_namespace:
            eff["cache_namespace"] = self.config.cache_namespace
        key = cache_key(
            endpoint=self.endpoint,
            model=self.model,
            messages=messages,
            params=eff,
            schema=schema,
            prompt_version=prompt_ref,
        )
        return key, eff

    def _hit(self, ctx: Ctx, stage: str, kind: str, status: str) -> None:
        ctx.stats.cache_hits += 1
        self.ledger.record(
            sample_id=ctx.sample_id,
            metric=ctx.metric,
            stage=stage,
            kind=kind,
            repeat=ctx.repeat,
            attempts=0,
            cache_hit=True,
            model=self.model,
            prompt_tokens=None,
            completion_tokens=None,
            cached_prompt_tokens=None,
            cost_usd=0.0,
            latency_ms=None,
            status=st.OK
            if status == st.OK
            else (st.PARSE_ERROR if status == TRUNCATED else status),
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._sem is None or self._loop is not loop:
            # a runtime reused from another event loop (notebooks, adapters) gets fresh primitives
            self._loop = loop
            self._sem = asyncio.Semaphore(self.config.concurrency)
            self.limiter = RateLimiter(rpm=self.config.rpm, tpm=self.config.tpm, clock=self.clock)
        return self._sem

    async def _send(
        self,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        eff: dict[str, Any],
        schema: Mapping[str, Any] | None,
        spec: OutputSpec | None,
        prompt_ref: str,
        key: str,
        ctx: Ctx,
        kind: str,
    ) -> _Exchange:
        cfg = self.config
        stage = prompt_ref.split("@")[0]
        est_in = estimate_prompt_tokens(messages)
        max_tokens = int(params["max_tokens"])
        reserved = 0.0
        if self.budget.cap is not None:
            if self.price is None:  # the CLI refuses this combination before sending anything
                raise FatalJudgeError("--max-cost needs a known price for the judge model")
            reserved = reservation(self.price, est_in, max_tokens)
            if not self.budget.try_reserve(reserved):
                return _Exchange(st.BUDGET_EXCEEDED, f"max cost {cfg.max_cost_usd} USD reached")
        req = JudgeRequest(
            messages=messages,
            schema=dict(schema) if schema is not None else None,
            schema_name=spec.name if spec is not None else "text",
            params=params,
            timeout_s=cfg.timeout_s,
        )
        sem = self._semaphore()  # before the limiter: both are bound to the running loop
        deadline = self.clock.now() + cfg.deadline_s
        attempts = 0
        reached = False
        resp: JudgeResponse | None = None
        failure: _Exchange | None = None
        while True:
            attempts += 1
            await self.limiter.acquire(est_in + max_tokens)
            try:
                async with sem:
                    self.calls_in_flight += 1
                    try:
                        resp = await self.client.complete(req)
                    finally:
                        self.calls_in_flight -= 1
                reached = True
                break
            except TransientError as exc:
                reached = reached or exc.kind != "connection"
                delay = (
                    exc.retry_after
                    if exc.retry_after is not None
                    else backoff_delay(attempts, self.rng)
                )
                if exc.kind == "rate_limit":
                    self.limiter.on_rate_limited(delay)
                if attempts >= cfg.max_attempts or self.clock.now() + delay > deadline:
                    failure = _Exchange(st.TIMEOUT, f"{exc.label} after {attempts} attempts")
                    break
                await self.clock.sleep(delay)
            except RequestRejected as exc:
                reached = True
                failure = _Exchange(st.REFUSED, self.redact(str(exc)))
                break
            except FatalJudgeError as exc:
                self.budget.release(reserved)
                self.fatal = FatalJudgeError(self.redact(str(exc)))
                raise self.fatal from None

        if failure is not None:
            self.budget.release(reserved)
            self.limiter.correct(est_in + max_tokens, 0)
            if reached:
                self._ledger_sent(ctx, stage, kind, attempts, None, failure.status)
            return failure

        assert resp is not None
        response = _response_dict(resp)
        ex = _assess(response, spec)
        key_only = {"repeat", "cache_namespace", *ctx.key_extra}
        if resp.sent_params is not None and dict(resp.sent_params) != {
            k: v for k, v in eff.items() if k not in key_only
        }:
            key, _ = self._key(messages, params, schema, prompt_ref, ctx, resp.sent_params)
            self.save_negotiation()
        cost = call_cost(
            self.price, resp.prompt_tokens, resp.completion_tokens, resp.cached_prompt_tokens
        )
        self.budget.settle(reserved, cost)
        actual = (resp.prompt_tokens or 0) + (resp.completion_tokens or 0)
        self.limiter.correct(
            est_in + max_tokens, actual if resp.prompt_tokens is not None else None
        )
        ledger_status = st.PARSE_ERROR if ex.status == TRUNCATED else ex.status
        self._ledger_sent(ctx, stage, kind, attempts, resp, ledger_status, cost)
        self.cache.put(
            key,
            model=self.model,
            prompt_version=prompt_ref,
            params=eff,
            request={"messages": messages, "params": eff, "schema": schema},
            response=response,
            valid=ex.status == st.OK,
            latency_ms=resp.latency_ms,
            tokens_in=resp.prompt_tokens,
            tokens_out=resp.completion_tokens,
        )
        ex.key = key
        return ex

    def _ledger_sent(
        self,
        ctx: Ctx,
        stage: str,
        kind: str,
        attempts: int,
        resp: JudgeResponse | None,
        status: str,
        cost: float | None = None,
    ) -> None:
        s = ctx.stats
        s.calls += 1
        if resp is not None:
            s.tokens_in += resp.prompt_tokens or 0
            s.tokens_out += resp.completion_tokens or 0
            if s.cost_usd is not None:
                s.cost_usd = None if cost is None else s.cost_usd + cost
        self.ledger.record(
            sample_id=ctx.sample_id,
            metric=ctx.metric,
            stage=stage,
            kind=kind,
            repeat=ctx.repeat,
            attempts=attempts,
            cache_hit=False,
            model=(resp.model if resp is not None and resp.model else self.model),
            prompt_tokens=resp.prompt_tokens if resp is not None else None,
            completion_tokens=resp.completion_tokens if resp is not None else None,
            cached_prompt_tokens=resp.cached_prompt_tokens if resp is not None else None,
            cost_usd=cost if resp is not None else (0.0 if self.price is not None else None),
            latency_ms=resp.latency_ms if resp is not None else None,
            status=status,
        )

    async def aclose(self) -> None:
        self.save_negotiation()
        self.cache.commit()
        await self.client.aclose()
