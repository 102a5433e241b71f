"""The runtime against the fake server: the scenario table and required properties
(docs/judge.md)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

import ragmeter.judge as rj
from ragmeter.judge.cache import JudgeCache
from ragmeter.judge.client import FatalJudgeError
from ragmeter.judge.limiter import FakeClock, RateLimiter
from tests.judge.fake_openai import SENTINEL_KEY, Reply

FOUR = "One fact. Two fact. Three fact. Four fact."


def faith_sample(tag: str, sid: str = "q") -> rj.Sample:
    return rj.Sample(
        sid,
        question="Q",
        answer=f"{FOUR} [[rm-test:{tag}]]",
        contexts=(f"one fact and two fact [[rm-test:{tag}]]",),
    )


def ac_sample(tag: str, sid: str = "q") -> rj.Sample:
    return rj.Sample(sid, question="Q", reference=f"Paris. [[rm-test:{tag}]]", answer="Paris.")


def run(samples, metrics, cfg, **kw):
    return rj.evaluate(samples, metrics, config=cfg, **kw)


# -- the scenario table --------------------------------------------------------------------------


def test_ok_reply_exact_value_and_ledger_cost(fake, make_config):
    cfg = make_config(price_in=1.0, price_out=2.0)
    res = run([ac_sample("ok")], ["answer_correctness"], cfg)
    assert res.values("answer_correctness") == {"q": 1.0}
    cost = res.metadata["cost"]
    assert cost["calls_sent"] == 1 and cost["tokens_in"] == 100 and cost["tokens_out"] == 20
    assert cost["usd"] == pytest.approx(100 * 1.0 / 1e6 + 20 * 2.0 / 1e6)
    assert res.records[0]["cost_usd"] == pytest.approx(0.00014)
    (row,) = res.ledger_rows
    assert (row["kind"], row["stage"], row["cache_hit"], row["attempts"], row["status"]) == (
        "call",
        "answer_correctness.claims",
        False,
        1,
        "ok",
    )


@pytest.mark.parametrize("tag", ["fence", "think"])
def test_fenced_and_thinking_replies_parse(fake, make_config, tag):
    res = run([ac_sample(tag)], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "ok"}


def test_malformed_once_is_repaired(fake, make_config):
    res = run([ac_sample("malformed_once")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert len(fake.requests) == 2
    repair = fake.requests[1]
    assert [m["role"] for m in repair.messages] == ["system", "user", "assistant", "user"]
    assert repair.messages[2]["content"] == "Sure! Here is my verdict: supported."
    assert "not valid JSON" in repair.messages[3]["content"]
    assert [r["kind"] for r in res.ledger_rows] == ["call", "repair"]
    assert res.records[0]["calls"] == 2


def test_malformed_twice_is_parse_error(fake, make_config):
    res = run([ac_sample("malformed")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "parse_error"}
    assert res.records[0]["detail"].startswith("not valid JSON")
    assert len(fake.requests) == 2


def test_wrong_verdict_count(fake, make_config):
    res = run([faith_sample("wrong_count")], ["faithfulness"], make_config())
    assert res.statuses("faithfulness") == {"q": "parse_error"}
    assert res.records[0]["detail"] == "verdict count 3 != statements 4"
    assert [r.stage for r in fake.requests] == [
        "faithfulness.statements",
        "faithfulness.verify",
        "faithfulness.verify",
    ]


def test_verbose_verdict_is_never_read_as_supported(fake, make_config):
    res = run([faith_sample("verbose_verdict")], ["faithfulness"], make_config())
    assert res.statuses("faithfulness") == {"q": "parse_error"}
    assert (
        res.records[0]["detail"]
        == "verdicts.0.verdict: Input should be 'supported', 'contradicted' or 'not_found'"
    )
    assert fake.requests[-1].repair


def test_rate_limited_waits_retry_after_on_the_clock(fake, make_config):
    clock = FakeClock()
    res = run([ac_sample("rate_limited")], ["answer_correctness"], make_config(), clock=clock)
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert len(fake.requests) == 3
    assert clock.sleeps == [0.05, 0.05]
    assert res.ledger_rows[0]["attempts"] == 3


def test_server_error_is_retried(fake, make_config):
    clock = FakeClock()
    res = run([ac_sample("server_error")], ["answer_correctness"], make_config(), clock=clock)
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert len(fake.requests) == 2 and len(clock.sleeps) == 1 and 0 <= clock.sleeps[0] <= 1


def test_always_429_is_timeout_after_6_attempts(fake, make_config):
    res = run([ac_sample("always_429")], ["answer_correctness"], make_config(), clock=FakeClock())
    assert res.statuses("answer_correctness") == {"q": "timeout"}
    assert res.records[0]["detail"] == "HTTP 429 after 6 attempts"
    assert len(fake.requests) == 6
    assert res.aggregates["answer_correctness"].status_counts == {"timeout": 1}


def test_slow_server_is_timeout(fake, make_config):
    fake.slow_seconds = 1.0
    res = run(
        [ac_sample("slow")],
        ["answer_correctness"],
        make_config(timeout_s=0.2, max_attempts=2),
        clock=FakeClock(),
    )
    assert res.statuses("answer_correctness") == {"q": "timeout"}
    assert res.records[0]["detail"] == "read timeout after 2 attempts"


def test_truncated_reply_is_retried_with_doubled_max_tokens(fake, make_config):
    res = run([ac_sample("truncated")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert [r.max_tokens for r in fake.requests] == [2048, 4096]


def test_truncated_twice_is_parse_error(fake, make_config):
    res = run([ac_sample("always_truncated")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "parse_error"}
    assert res.records[0]["detail"] == "truncated"
    assert [r.max_tokens for r in fake.requests] == [2048, 4096]


@pytest.mark.parametrize("tag", ["refusal", "content_filter"])
def test_refusals(fake, make_config, tag):
    res = run([ac_sample(tag)], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "refused"}
    assert len(fake.requests) == 1


def test_context_too_long_is_refused_without_retry(fake, make_config):
    res = run([ac_sample("too_long")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "refused"}
    assert "context length exceeded" in res.records[0]["detail"]
    assert len(fake.requests) == 1


@pytest.mark.parametrize(("tag", "match"), [("auth", "HTTP 401"), ("quota", "quota exhausted")])
def test_fatal_errors_stop_the_run(fake, make_config, tag, match):
    samples = [ac_sample(tag, f"q{i}") for i in range(20)]
    with pytest.raises(FatalJudgeError, match=match):
        run(samples, ["answer_correctness"], make_config(concurrency=2))
    assert len(fake.requests) <= 4  # in-flight calls only; nothing after the stop


def test_no_schema_support_downgrades_and_remembers(fake, make_config):
    cfg = make_config()
    res = run(
        [ac_sample("no_schema_support", "a"), ac_sample("no_schema_support", "b")],
        ["answer_correctness"],
        cfg,
    )
    assert res.statuses("answer_correctness") == {"a": "ok", "b": "ok"}
    assert res.metadata["judge"]["structured"] == "prompt"
    assert "response_format" not in fake.requests[-1].body
    # the mode learnt is stored with the endpoint: a re-run sends nothing at all
    fake.requests.clear()
    again = run(
        [ac_sample("no_schema_support", "a"), ac_sample("no_schema_support", "b")],
        ["answer_correctness"],
        cfg,
    )
    assert len(fake.requests) == 0 and again.metadata["judge"]["structured"] == "prompt"


def test_json_object_fallback(fake, make_config):
    res = run([ac_sample("no_json_schema")], ["answer_correctness"], make_config())
    assert res.metadata["judge"]["structured"] == "json_object"
    assert fake.requests[-1].body["response_format"] == {"type": "json_object"}


def test_explicit_mode_rejected_is_fatal(fake, make_config):
    with pytest.raises(FatalJudgeError, match="structured mode json_schema"):
        run(
            [ac_sample("no_json_schema")],
            ["answer_correctness"],
            make_config(structured="json_schema"),
        )


def test_prompt_mode_sends_no_response_format(fake, make_config):
    run([ac_sample("ok")], ["answer_correctness"], make_config(structured="prompt"))
    assert "response_format" not in fake.requests[0].body


def test_reasoning_model_negotiation(fake, make_config):
    res = run([ac_sample("reasoning_model")], ["answer_correctness"], make_config())
    assert res.statuses("answer_correctness") == {"q": "ok"}
    last = fake.requests[-1].body
    assert "max_tokens" not in last and last["max_completion_tokens"] == 2048
    assert "temperature" not in last
    assert res.metadata["judge"]["temperature"] is None
    assert any("temperature" in w for w in res.warnings)


def test_no_claims_skips_stage_two(fake, make_config):
    res = run([faith_sample("no_claims")], ["faithfulness"], make_config())
    assert res.statuses("faithfulness") == {"q": "no_claims"}
    assert [r.stage for r in fake.requests] == ["faithfulness.statements"]


# -- required properties ------------------------------------------------------------------------


def _mixed_samples(n: int = 6) -> list[rj.Sample]:
    return [
        rj.Sample(
            f"s{i}",
            question=f"Question {i}?",
            answer=f"Answer {i}. Extra {i}.",
            reference=f"Answer {i}.",
            contexts=(f"answer {i} is here", "noise"),
        )
        for i in range(n)
    ]


METRICS = ["faithfulness", "answer_correctness", "context_precision", "context_recall"]


def test_second_identical_run_sends_nothing_and_is_identical(fake, make_config):
    cfg = make_config()
    first = run(_mixed_samples(), METRICS, cfg)
    sent = len(fake.requests)
    assert sent == 6 * (2 + 1 + 1 + 2)
    fake.requests.clear()
    second = run(_mixed_samples(), METRICS, cfg)
    assert len(fake.requests) == 0
    assert second.samples.equals(first.samples)
    assert second.summary == first.summary
    assert (
        second.metadata["cost"]["cache_hits"] == sent and second.metadata["cost"]["calls_sent"] == 0
    )


def test_interrupted_run_resends_only_unfinished_calls(fake, make_config, tmp_path):
    cfg = make_config(concurrency=2)
    total = 6 * (2 + 1 + 1 + 2)
    fake.hold(after=10)

    async def interrupted():
        task = asyncio.ensure_future(rj.aevaluate(_mixed_samples(), METRICS, config=cfg))
        deadline = time.monotonic() + 20
        while fake.completed < 10 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # let the finished replies be committed
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    finished = len(JudgeCache(cfg.cache_path))
    assert finished == 10
    fake.release()
    fake.hold_after = None
    fake.requests.clear()
    res = run(_mixed_samples(), METRICS, cfg)
    assert len(fake.requests) == total - finished
    assert set(res.samples.column("status").to_pylist()) == {"ok"}


def test_concurrency_bound_is_respected(fake, make_config):
    fake.latency = 0.03
    samples = [ac_sample("ok", f"q{i}") for i in range(1)] + [
        rj.Sample(f"x{i}", reference=f"Ref {i}.", answer=f"Ans {i}.") for i in range(24)
    ]
    run(samples, ["answer_correctness"], make_config(concurrency=3))
    assert fake.max_in_flight == 3


def test_requests_carry_temperature_zero_and_the_schema(fake, make_config):
    run([ac_sample("ok")], ["answer_correctness"], make_config())
    body = fake.requests[0].body
    assert body["temperature"] == 0
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["name"] == "ragmeter_answer_correctness_claims"
    assert rf["json_schema"]["schema"]["additionalProperties"] is False
    assert fake.requests[0].system.startswith("ragmeter-task: answer_correctness.claims@1\n")
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test-SENTINEL-7f3a"


def test_budget_stops_before_the_cap(fake, make_config):
    fake.script(
        "paid",
        lambda req: Reply(
            content=json.dumps(
                {
                    "reference_claims": ["a"],
                    "answer_claims": ["a"],
                    "matches": [{"reference": 1, "answer": 1}],
                    "reason": "r",
                }
            ),
            usage=(50, 100),
        ),
    )
    # reservation = max_tokens × out price = 100 × 1e-6 = actual cost of one call
    cfg = make_config(max_tokens=100, price_in=0.0, price_out=1.0, max_cost_usd=3.5e-4)
    samples = [
        rj.Sample(f"q{i}", question="Q", reference=f"R{i} [[rm-test:paid]]", answer="A")
        for i in range(8)
    ]
    res = run(samples, ["answer_correctness"], cfg)
    assert len(fake.requests) == 3
    counts = dict(res.aggregates["answer_correctness"].status_counts)
    assert counts == {"ok": 3, "budget_exceeded": 5}
    assert res.metadata["cost"]["usd"] <= 3.5e-4
    # cached results are still served once the budget is spent
    fake.requests.clear()
    again = run(samples, ["answer_correctness"], cfg)
    assert dict(again.aggregates["answer_correctness"].status_counts) == {
        "ok": 6,
        "budget_exceeded": 2,
    }
    assert len(fake.requests) == 3


def test_repeats_report_spread(fake, make_config):
    scores = iter([4, 2, 3])
    lock = threading.Lock()

    def script(req):
        with lock:
            s = next(scores)
        return {"findings": [{"step": 1, "note": "n"}], "score": s, "reason": "r"}

    fake.script("rep", script)
    from ragmeter.judge.config import config_from_mapping

    cfg = make_config(
        repeats=3,
        temperature=0.7,
        **config_from_mapping(
            {"rubrics": [{"name": "r", "inputs": ["answer"], "scale": [1, 5], "steps": ["Judge."]}]}
        ),
    )
    res = run([rj.Sample("q", answer="A [[rm-test:rep]]")], ["rubric:r"], cfg)
    assert res.values("rubric:r") == {"q": 0.5}  # median of 0.75, 0.25, 0.5
    rec = res.records[0]
    assert rec["repeats"] == 3 and rec["spread"]["n_ok"] == 3
    assert rec["spread"]["min"] == 0.25 and rec["spread"]["max"] == 0.75
    assert rec["spread"]["std"] == pytest.approx(0.2041241452)
    assert res.summary_json()["metrics"]["rubric:r"]["max_std"] == pytest.approx(0.2041241452)
    assert len(fake.requests) == 3  # the repeat index is part of the cache key


def test_repeats_mean_over_ok_and_status_of_last(fake, make_config):
    res = run([ac_sample("ok")], ["answer_correctness"], make_config(repeats=2))
    assert res.records[0]["spread"] == {"std": 0.0, "min": 1.0, "max": 1.0, "n_ok": 2}
    assert res.summary_json()["metrics"]["answer_correctness"]["mean_std"] == 0.0


# -- rate limiter on a fake clock ------------------------------------------------------------------


def test_rpm_60_allows_6_then_one_per_second():
    clock = FakeClock()
    lim = RateLimiter(rpm=60, tpm=None, clock=clock)
    stamps = []

    async def go():
        for _ in range(9):
            await lim.acquire(0)
            stamps.append(clock.now())

    asyncio.run(go())
    assert stamps == [0.0] * 6 + [1.0, 2.0, 3.0]


def test_tpm_bucket_is_corrected_after_the_reply():
    clock = FakeClock()
    lim = RateLimiter(rpm=None, tpm=6000, clock=clock)  # capacity 600, 100 tokens per second

    async def go():
        await lim.acquire(500)  # estimate 500
        lim.correct(500, 100)  # the reply used only 100: 400 go back into the bucket
        await lim.acquire(500)

    asyncio.run(go())
    assert clock.sleeps == []  # without the correction this second request had to wait 4 s
    assert lim.tokens.level == pytest.approx(0.0)


def test_request_larger_than_the_token_bucket_never_deadlocks():
    clock = FakeClock()
    lim = RateLimiter(rpm=None, tpm=600, clock=clock)  # capacity 60, 10 per second

    async def go():
        await lim.acquire(30)
        await lim.acquire(1000)  # waits for a full bucket, then drives it negative
        await lim.acquire(10)

    asyncio.run(go())
    # 3 s to refill to a full bucket (60), which the request drives to −940; the next one waits
    # (10 + 940) / 10 = 95 s
    assert clock.sleeps == [pytest.approx(3.0), pytest.approx(95.0)]


def test_rate_limit_halves_the_rate_then_recovers():
    clock = FakeClock()
    lim = RateLimiter(rpm=60, tpm=None, clock=clock)
    lim.on_rate_limited(2.0)
    assert lim.factor() == 0.5
    clock.t = 30.0
    assert lim.factor() == pytest.approx(0.75)
    clock.t = 61.0
    assert lim.factor() == 1.0

    async def go():
        lim.pause_until = clock.now() + 5
        await lim.acquire(0)

    asyncio.run(go())
    assert clock.sleeps == [pytest.approx(5.0)]


def test_library_entry_point_for_the_runner(fake, tmp_path, monkeypatch):
    """The runner passes dict records, its judge: block and tasks.judge's budget."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SENTINEL-7f3a")
    block = {"base_url": fake.url, "model": "judge-test-model", "cache": str(tmp_path / "c.sqlite")}
    records = [
        {
            "id": "a",
            "question": "Q?",
            "answer": "Paris.",
            "reference": "Paris.",
            "contexts": ["Paris."],
        },
        {
            "user_input": "Q2?",
            "response": "Rome.",
            "ground_truth": "Rome.",
            "retrieved_contexts": [],
        },
    ]
    res = rj.evaluate(
        records, ["answer_correctness", "faithfulness"], config=block, max_cost_usd=1.0
    )
    assert res.values("answer_correctness") == {"a": 1.0, "2": 1.0}
    assert res.metadata["judge"]["model"] == "judge-test-model"
    assert res.summary_json()["cost"]["per_metric"]["faithfulness"]["calls_sent"] == 3
    # the Result round-trips through the store's serialisation unchanged
    from ragmeter.result import Result

    back = Result.from_json(res.to_json())
    assert back.samples.equals(res.samples) and back.summary == res.summary


def test_default_metric_set_without_endpoint():
    res = rj.evaluate([{"question": "Q", "answer": "A", "reference": "R", "contexts": ["c"]}])
    assert set(res.summary) == {
        "answer_relevance",
        "faithfulness",
        "faithfulness_contradiction_rate",
        "context_precision",
        "context_recall",
    }
    assert set(res.samples.column("status").to_pylist()) == {"needs_llm"}


def test_sync_api_inside_a_running_event_loop(fake, make_config):
    """Notebooks: the sync API runs on a private loop in a worker thread, no nest_asyncio."""
    cfg = make_config()

    async def notebook_cell():
        return rj.evaluate([ac_sample("ok")], ["answer_correctness"], config=cfg)

    res = asyncio.run(notebook_cell())
    assert res.values("answer_correctness") == {"q": 1.0}


# -- cache keys in the per-sample detail (the dashboard's link to the cache) ---------------------


def _cached_keys(path) -> set[str]:
    cache = JudgeCache(path)
    try:
        return cache.keys()
    finally:
        cache.close()


def _details(res) -> dict[str, str]:
    rows = res.samples.to_pylist()
    return {r["id"]: r["detail"] for r in rows if r["metric"] == res.records[0]["metric"]}


def test_details_record_the_cache_keys_of_every_call_in_order(fake, make_config, tmp_path):
    cfg = make_config(repeats=2)
    samples = [faith_sample("ok", "a"), faith_sample("wrong_count", "b")]
    first = run(samples[:2], ["faithfulness"], cfg)
    details = _details(first)
    ok = json.loads(details["a"])
    refs = ok["cache_keys"]
    assert [(c["stage"], c["kind"], c["repeat"]) for c in refs] == [
        ("faithfulness.statements", "call", 0),
        ("faithfulness.verify", "call", 0),
        ("faithfulness.statements", "call", 1),
        ("faithfulness.verify", "call", 1),
    ]
    assert {c["key"] for c in refs} <= _cached_keys(tmp_path / "cache.sqlite")
    # a failed sample keeps its reason and the calls that led to it, the repair included
    bad = json.loads(details["b"])
    assert bad["reason"] == "verdict count 3 != statements 4"
    assert [(c["stage"], c["kind"]) for c in bad["cache_keys"] if c["repeat"] == 0] == [
        ("faithfulness.statements", "call"),
        ("faithfulness.verify", "call"),
        ("faithfulness.verify", "repair"),
    ]
    assert first.records[0]["cache_keys"] == refs
    assert SENTINEL_KEY not in json.dumps(first.records) + "".join(details.values())
    # a re-run answered by the cache gives the same table
    sent = len(fake.requests)
    again = run(samples[:2], ["faithfulness"], cfg)
    assert len(fake.requests) == sent
    assert _details(again) == details


def test_calls_without_a_reply_leave_no_cache_key(fake, make_config):
    res = run([ac_sample("always_429")], ["answer_correctness"], make_config(), clock=FakeClock())
    assert res.statuses("answer_correctness") == {"q": "timeout"}
    assert res.records[0]["cache_keys"] == []
    assert _details(res) == {"q": "HTTP 429 after 6 attempts"}


def test_an_unknown_price_is_null_in_every_total_never_zero(fake, make_config, monkeypatch):
    """docs/judge.md: a cost leaving out calls of unknown price is null, overall and per metric."""
    import ragmeter.judge.runtime as runtime_mod

    # the fake server is on 127.0.0.1, which counts as a free local endpoint: make it a paid one
    monkeypatch.setattr(runtime_mod, "is_local_endpoint", lambda url: False)
    samples = [rj.Sample("q1", question="Q", reference="R", answer="A")]
    res = run(samples, ["answer_correctness"], make_config())
    cost = res.metadata["cost"]
    assert cost["calls_sent"] >= 1 and cost["usd_unknown_calls"] == cost["calls_sent"]
    assert cost["usd"] is None
    assert res.metadata["cost_per_metric"]["answer_correctness"]["usd"] is None
    # with a price, the same call costs a number
    priced = run(samples, ["answer_correctness"], make_config(price_in=1.0, price_out=1.0))
    assert priced.metadata["cost"]["usd_unknown_calls"] == 0
