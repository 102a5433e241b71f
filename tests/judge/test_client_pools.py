"""The judge's HTTP client spreads calls in flight over small connection pools."""

from __future__ import annotations

import asyncio
import importlib

import pytest

from ragmeter.judge.client import SHARD_CALLS, JudgeRequest, OpenAIJudgeClient
from tests.judge.fake_openai import SENTINEL_KEY


def _request(i: int) -> JudgeRequest:
    return JudgeRequest(
        messages=[{"role": "user", "content": f"Say hi {i}"}],
        schema=None,
        schema_name="reply",
        params={"temperature": 0.0, "max_tokens": 16},
        timeout_s=10.0,
    )


def test_calls_in_flight_spread_over_small_pools_with_one_tls_context(fake, monkeypatch):
    import openai

    # the SDK's HTTP library (httpx, or httpx2 in later SDK releases), its TLS builder counted
    http = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__)
    built = []
    original = http.create_ssl_context
    monkeypatch.setattr(http, "create_ssl_context", lambda: built.append(1) or original())
    fake.latency = 0.3  # every call is still in flight when the last one starts
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)
    peaks: list[list[int]] = []

    async def go() -> list[object]:
        calls = [asyncio.ensure_future(judge.complete(_request(i))) for i in range(5 * SHARD_CALLS)]
        await asyncio.sleep(0.1)
        peaks.append([shard.in_flight for shard in judge._shards])
        try:
            return await asyncio.gather(*calls)
        finally:
            after = [shard.in_flight for shard in judge._shards]
            await judge.aclose()
            peaks.append(after)

    replies = asyncio.run(go())
    assert len(replies) == 5 * SHARD_CALLS and all(r.text for r in replies)
    assert len(fake.requests) == 5 * SHARD_CALLS
    assert peaks == [[SHARD_CALLS] * 5, [0] * 5]  # five pools of eight, all given back
    assert built == [1]  # one TLS context for the five clients


def test_few_calls_use_one_pool(fake):
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)

    async def go() -> int:
        for i in range(3 * SHARD_CALLS):  # one at a time: never more than one in flight
            await judge.complete(_request(i))
        try:
            return len(judge._shards)
        finally:
            await judge.aclose()

    assert asyncio.run(go()) == 1


@pytest.mark.parametrize("n", [1, SHARD_CALLS, SHARD_CALLS + 1])
def test_the_pool_count_follows_the_calls_in_flight(fake, n):
    fake.latency = 0.2
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)

    async def go() -> int:
        try:
            await asyncio.gather(*(judge.complete(_request(i)) for i in range(n)))
            return len(judge._shards)
        finally:
            await judge.aclose()

    assert asyncio.run(go()) == -(-n // SHARD_CALLS)
