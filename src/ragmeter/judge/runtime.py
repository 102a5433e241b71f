"""The judge runtime: one call = cache, budget, limiter, retries, validation, repair.

:meth:`JudgeRuntime.call` renders a prompt, looks the request up in the cache (and among the
identical calls in flight), and only on a miss reserves budget, waits for the rate limiter,
takes a concurrency slot and sends it, retrying transient errors with backoff. The reply is
committed to the cache at once (valid or not), a ledger row is written, and the reply is
parsed and validated; a ``length`` finish is retried once with doubled ``max_tokens`` and an
invalid reply gets one repair call. The outcome is a status of docs/judge.md, never an exception,
except :class:`~ragmeter.judge.call_errors.FatalJudgeError`, which stops the run.

Two bounds hold against any endpoint: ``timeout_s`` caps one attempt's total time and
``deadline_s`` the whole call across attempts, however slowly the bytes arrive; and a reply
over ``max_reply_bytes`` is never kept (it is cached as a small marker, so a re-run reproduces
its ``parse_error`` with reason ``reply_too_large`` for free). Every reply is passed through the
redactor before it is parsed, cached or shown, so a key the endpoint echoes is never written.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter import status as st
from ragmeter.judge import coordinator, prompts
from ragmeter.judge.cache import JudgeCache, cache_key, canonical_json
from ragmeter.judge.calls import CallOutcome, CallStats, Ctx, Stop, prompt_versions
from ragmeter.judge.client import (
    FatalJudgeError,
    JudgeClient,
    JudgeRequest,
    JudgeResponse,
    ReplyTooLarge,
    RequestRejected,
    TransientError,
)
from ragmeter.judge.config import JudgeConfig, is_local_endpoint
from ragmeter.judge.ledger import (
    Ledger,
    PriceTable,
    call_cost,
    estimate_prompt_tokens,
    reservation,
)
from ragmeter.judge.limiter import Clock, RateLimiter, RealClock, backoff_delay
from ragmeter.judge.negotiation import Negotiation, effective_params
from ragmeter.judge.replies import (
    TRUNCATED,
    Exchange,
    assess,
    plural,
    response_dict,
    scrub,
    too_large,
    was_fault,
)
from ragmeter.judge.schemas import OutputSpec
from ragmeter.judge.secrets import Redactor, endpoint_id, url_secrets

__all__ = ["CallOutcome", "CallStats", "Ctx", "JudgeRuntime", "Stop"]

REPAIR_CHARS = 4000


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
        self.redact: Redactor = getattr(client, "redact", None) or Redactor(
            [config.api_key, *url_secrets(config.base_url)]
        )
        self.shared = coordinator.current()  # shards in several processes share its limits
        self.limiter, self.budget = coordinator.limits(self.shared, config, self.clock)
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: dict[str, asyncio.Future[Exchange]] = {}
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
                "prompt_versions": prompt_versions(self.used_prompts),
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
        if (
            ex.status == st.PARSE_ERROR
            and ex.response is not None
            and not ex.response.get("fault")
            and spec is not None
        ):
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
        bad: Exchange,
    ) -> Exchange:
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
            return Exchange(st.PARSE_ERROR, ex.errors[0] if ex.errors else ex.detail, ex.response)
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
    ) -> Exchange:
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
    ) -> Exchange:
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
            return Exchange(ex.status, ex.detail, ex.response, ex.obj, ex.errors, True, ex.key)

        cached = functools.partial(self._cached, key, spec, ctx, stage, kind)
        ex = None if self.refresh_cache else cached()
        if ex is None and self.shared is not None:  # another process may be sending this key
            ex = await self.shared.single_flight(key, cached)
        if ex is not None:
            return ex

        fut: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()
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
            if self.shared is not None:
                self.shared.post("sent", key)

    def _cached(self, key: str, spec: Any, ctx: Ctx, stage: str, kind: str) -> Exchange | None:
        entry = self.cache.get(key)
        if entry is not None and not entry.valid and was_fault(entry.response):
            entry = None  # a fault stored by an earlier release is asked again, not replayed
        if entry is None or (not entry.valid and self.retry_errors):
            return None
        # entries written before replies were redacted are masked on the way out
        ex = assess(scrub(entry.response, self.redact), spec)
        ex.cache_hit, ex.key = True, key
        self._hit(ctx, stage, kind, ex.status)
        return ex

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

    def _semaphore(self) -> Any:
        if self.shared is not None:
            return self.shared.slots(self.clock)
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
    ) -> Exchange:
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
                return Exchange(st.BUDGET_EXCEEDED, f"max cost {cfg.max_cost_usd} USD reached")
        req = JudgeRequest(
            messages=messages,
            schema=dict(schema) if schema is not None else None,
            schema_name=spec.name if spec is not None else "text",
            params=params,
            timeout_s=cfg.timeout_s,
        )
        sem = self._semaphore()  # before the limiter: both are bound to the running loop
        # the deadline starts with the first attempt, not while the call queues for a slot
        deadline: float | None = None
        attempts = 0
        reached = False
        resp: JudgeResponse | None = None
        failure: Exchange | None = None
        cut: int | None = None  # the size cap a reply passed (reply_too_large)
        while True:
            attempts += 1
            await self.limiter.acquire(est_in + max_tokens)
            try:
                async with sem:
                    now = self.clock.now()
                    if deadline is None:
                        deadline = now + cfg.deadline_s
                    resp = await self._attempt(req, min(cfg.timeout_s, deadline - now))
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
                assert deadline is not None
                if attempts >= cfg.max_attempts or self.clock.now() + delay >= deadline:
                    # an endpoint that keeps answering 200 with something that is not a reply
                    # gave no usable answer to parse: parse_error with the reason
                    status = st.PARSE_ERROR if exc.kind == "bad_reply" else st.TIMEOUT
                    detail = f"{exc.label} after {plural(attempts, 'attempt')}"
                    failure = Exchange(status, self.redact(detail))
                    break
                await self.clock.sleep(delay)
            except ReplyTooLarge as exc:
                # tokens were spent but the rest of the body was never read: the reason is
                # cached (not the reply), so a re-run does not pay again
                reached, cut = True, exc.limit
                resp = JudgeResponse(None, None, None, None, None, None, None, None, 0.0)
                break
            except RequestRejected as exc:
                reached = True
                failure = Exchange(st.REFUSED, self.redact(str(exc)))
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
        response = response_dict(resp)
        if cut is None and len(canonical_json(response)) > cfg.max_reply_bytes:
            cut = cfg.max_reply_bytes  # a client that cannot stop reading early (LiteLLM)
        response = too_large(cut, response["usage"]) if cut else scrub(response, self.redact)
        ex = assess(response, spec)
        key_only = {"repeat", "cache_namespace", *ctx.key_extra}
        if resp.sent_params is not None and dict(resp.sent_params) != {
            k: v for k, v in eff.items() if k not in key_only
        }:
            key, _ = self._key(messages, params, schema, prompt_ref, ctx, resp.sent_params)
            self.save_negotiation()
        cost = call_cost(
            self.price, resp.prompt_tokens, resp.completion_tokens, resp.cached_prompt_tokens
        )
        if resp.prompt_tokens is None and resp.completion_tokens is None and cut is not None:
            cost = None  # unknown: the budget keeps the whole reservation
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

    async def _attempt(self, req: JudgeRequest, budget_s: float) -> JudgeResponse:
        """One attempt, bounded in total time: a server that drips bytes slowly keeps the
        client's read timeout from firing, so the whole attempt runs under ``wait_for``."""
        cfg = self.config
        if budget_s <= 0:
            raise TransientError("timeout", None, f"deadline_s {cfg.deadline_s:g} reached")
        # the attempt's own limit reads like the client's read timeout (the reply did not
        # arrive in time); the call's deadline is named, since it stops the retries as well
        label = (
            "read timeout"
            if budget_s >= cfg.timeout_s
            else f"deadline_s {cfg.deadline_s:g} reached"
        )
        self.calls_in_flight += 1
        try:
            return await asyncio.wait_for(self.client.complete(req), budget_s)
        except asyncio.TimeoutError:
            raise TransientError("timeout", None, label) from None
        finally:
            self.calls_in_flight -= 1

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
