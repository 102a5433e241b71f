"""``ragmeter judge`` across Dask workers: one coordinator for the run's limits and budget,
one SQLite cache, no key sent twice, and the scores of the in-process run."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.judge.coordinator import POLL_S, JudgeCoordinator
from tests.helpers import invoke
from tests.judge.fake_openai import SENTINEL_KEY, FakeOpenAI
from tests.judge.test_cli import samples, write_jsonl

METRICS = ("-m", "faithfulness", "-m", "context_precision")


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.chdir(tmp_path)
    for var in ("RAGMETER_EXECUTOR", "RAGMETER_DASK_SCHEDULER", "RAGMETER_JUDGE_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RAGMETER_LLM_BASE_URL", fake_server.url)
    monkeypatch.setenv("RAGMETER_LLM_MODEL", "judge-test-model")
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    fake_server.reset()
    return fake_server


def _judge(inp: Path, name: str, *extra: str) -> tuple[dict, str]:
    per = Path(f"per-{name}.jsonl")
    r = invoke(
        "judge", str(inp), *METRICS, "--cache", f"{name}.sqlite", "--per-sample", str(per), *extra
    )
    assert r.code == 0, r.stderr
    return json.loads(r.stdout), per.read_text(encoding="utf-8")


def _max_per_second(times: list[float]) -> int:
    times = sorted(times)
    return max(sum(1 for t in times if start <= t < start + 1.0) for start in times)


def test_two_workers_judge_as_in_process_and_send_each_key_once(fake, tmp_path, scheduler):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(9))
    local, local_rows = _judge(inp, "local")
    sent_locally = len(fake.requests)
    fake.reset()
    remote, remote_rows = _judge(inp, "remote", "--scheduler", scheduler, "--partitions", "4")
    where = remote.pop("executor")
    assert (where["kind"], where["cluster"], where["workers"]) == ("dask", "existing", 2)
    assert remote == local  # scores, statuses, counts and cost
    assert remote_rows == local_rows  # every per-sample record, in input order
    assert sent_locally == len(fake.requests) == remote["cost"]["calls_sent"] == 27
    assert max(Counter(r.digest for r in fake.requests).values()) == 1  # no key sent twice
    assert (tmp_path / "remote.sqlite").is_file()  # the workers used the driver's cache file
    # a re-run is served from the one cache the workers shared: nothing is sent again
    fake.reset()
    again, again_rows = _judge(inp, "remote", "--scheduler", scheduler, "--partitions", "3")
    assert fake.requests == []
    scores = [
        [
            (r["id"], r["metric"], r["status"], r["value"])
            for r in map(json.loads, rows.splitlines())
        ]
        for rows in (again_rows, remote_rows)
    ]
    assert scores[0] == scores[1]
    assert again["cost"]["cache_hits"] == 27
    assert again.pop("executor") == where
    assert again["metrics"] == remote["metrics"]


def test_the_rate_limit_holds_across_workers(fake, tmp_path, scheduler):
    from ragmeter.executors.judge import judge_on
    from ragmeter.executors.settings import resolve_settings
    from ragmeter.io.judge import read_samples
    from ragmeter.judge.config import resolve_config

    inp = write_jsonl(tmp_path / "in.jsonl", samples(6))
    rpm = 180  # 3 calls a second for the whole run, whatever the number of workers
    config = resolve_config({"rpm": rpm, "cache_path": str(tmp_path / "rpm.sqlite")})
    xsettings = resolve_settings(scheduler=scheduler, partitions=4, env={})
    granted: dict = {}
    result, _ = judge_on(
        xsettings,
        read_samples(str(inp), key_map={}, required=set()),
        ["faithfulness", "context_precision"],
        config,
        options={},
        report=granted,
    )
    assert len(fake.requests) == result.summary_json()["cost"]["calls_sent"] == 18
    assert len(granted["starts"]) == 18
    assert _max_per_second(granted["starts"]) <= rpm / 60 + 1
    gaps = [b - a for a, b in zip(granted["starts"], granted["starts"][1:], strict=False)]
    assert min(gaps) >= 60 / rpm - 1e-9  # one call every 1/3 s, never two at once


def test_in_flight_calls_are_shared_across_workers(fake, tmp_path, scheduler):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(6))
    fake.latency = 0.05
    _judge(inp, "slots", "--scheduler", scheduler, "--partitions", "4", "--concurrency", "2")
    assert len(fake.requests) == 18
    assert fake.max_in_flight == 2


def test_the_budget_stops_every_worker(fake, tmp_path, scheduler):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(8))
    # each call reserves its max_tokens at 1000 USD per million output tokens (about 2 USD)
    # and costs its 20 reply tokens (0.02 USD): a 5 USD cap holds two reservations at a time
    prices = ("--price-in", "0", "--price-out", "1000")
    summary, rows = _judge(
        inp, "budget", "--scheduler", scheduler, "--partitions", "4", "--max-cost", "5", *prices
    )
    statuses = Counter(json.loads(line)["status"] for line in rows.splitlines())
    # which rows end ok depends on how the workers' reservations interleave (a faithfulness row
    # needs two granted calls); that the cap refuses some and every row has a status does not
    assert statuses["budget_exceeded"] > 0
    assert statuses["ok"] + statuses["budget_exceeded"] == 16
    # the first reservation to reach the coordinator always fits under the cap
    assert 0 < summary["cost"]["usd"] <= 5
    assert len(fake.requests) == summary["cost"]["calls_sent"] < 24
    assert summary["cost"]["usd"] == pytest.approx(0.02 * len(fake.requests))


def test_stdin_and_graphrag_are_refused_under_dask(fake, tmp_path):
    r = invoke("judge", "-", *METRICS, "--workers", "2")
    assert (r.code, r.stderr.strip()) == (
        2,
        "ragmeter judge: --executor dask reads INPUT from a file every worker can see, not "
        "from stdin (expected a file path)",
    )
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    r = invoke("judge", str(inp), "--format", "graphrag", "--workers", "2")
    assert r.code == 2
    assert r.stderr.startswith("ragmeter judge: --format graphrag does not run under --executor")


# -- the coordinator itself, on a clock the test drives ---------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_coordinator_spaces_calls_at_the_rate_without_a_burst():
    clock = Clock()
    co = JudgeCoordinator(rpm=60, concurrency=4, clock=clock)
    assert co.try_start(0) == 0.0
    assert co.try_start(0) == 1.0  # ask again in a second; nothing was taken
    clock.t += 0.5
    assert co.try_start(0) == 0.5
    clock.t += 0.5
    assert co.try_start(0) == 0.0
    clock.t += 10  # an idle spell does not bank calls: the next two are a second apart
    assert [co.try_start(0), co.try_start(0)] == [0.0, 1.0]
    starts = co.report()["starts"]
    assert starts == [100.0, 101.0, 111.0]
    assert _max_per_second(starts) <= 60 / 60 + 1


def test_coordinator_429_pauses_and_halves_the_rate():
    clock = Clock()
    co = JudgeCoordinator(rpm=600, clock=clock)
    assert co.try_start(0) == 0.0
    co.rate_limited(2.0)
    assert co.try_start(0) == 2.0  # the pause, for every worker
    clock.t += 2.0
    assert co.try_start(0) == 0.0
    # just after the 429 the rate is about half: 0.1 s between calls becomes about 0.19 s
    assert co.try_start(0) == pytest.approx(0.1 / (0.5 + 0.5 * 2.0 / 60))


def test_coordinator_tokens_slots_budget_and_single_flight():
    clock = Clock()
    co = JudgeCoordinator(tpm=600, concurrency=2, max_cost_usd=1.0, clock=clock)
    assert co.try_start(60) == 0.0  # the token bucket holds tpm/10 = 60
    assert co.try_start(60) == 6.0  # 60 more tokens at 10 a second
    assert [co.take_slot(), co.take_slot(), co.take_slot()] == [True, True, False]
    co.release_slot()
    assert co.take_slot() is True
    assert [co.try_reserve(0.4), co.try_reserve(0.4), co.try_reserve(0.4)] == [True, True, False]
    co.settle(0.4, 0.1)
    assert co.try_reserve(0.1) is False  # exhausted latches: no worker starts another call
    assert co.report()["exhausted"] is True
    assert [co.claim("k"), co.claim("k"), co.busy("k")] == [True, False, True]
    co.sent("k")
    assert (co.busy("k"), co.claim("k")) == (False, True)


def test_slots_and_claims_of_a_dead_worker_expire_after_the_lease():
    """A worker that dies mid-call never gives back its slot or its claim: after the lease
    (a call's deadline) both count as given back, so the other workers go on."""
    clock = Clock()
    co = JudgeCoordinator(concurrency=1, lease_s=60, clock=clock)
    assert co.begin(0) == 0.0 and co.claim("k")  # then the worker holding both dies
    clock.t += 59
    assert (co.begin(0), co.busy("k"), co.claim("k")) == (POLL_S, True, False)
    clock.t += 1
    assert (co.busy("k"), co.claim("k")) == (False, True)  # taken over by the caller
    assert co.begin(0) == 0.0
    assert (co.in_flight, co.report()["max_in_flight"]) == (1, 1)


def test_a_coordinator_that_does_not_answer_is_one_error(monkeypatch):
    import ragmeter.judge.coordinator as coordinator
    from ragmeter.errors import RagmeterError

    class Silent:  # an actor handle whose worker is gone: its futures never resolve
        def ping(self):
            return self

        def result(self, timeout=None):
            assert timeout == coordinator.REMOTE_TIMEOUT_S
            raise TimeoutError

    with pytest.raises(RagmeterError, match=r"did not answer within 120 s .*to resume$"):
        coordinator.Shared(Silent())


def test_shared_limiter_waits_for_a_free_slot():
    from ragmeter.judge.coordinator import Shared
    from ragmeter.judge.limiter import RealClock

    co = JudgeCoordinator(concurrency=1)
    shared = Shared(co)

    async def two() -> list[str]:
        order: list[str] = []

        async def call(name: str, hold: float) -> None:
            await shared.limiter(RealClock()).acquire(0)  # the rate and a slot
            async with shared.slots(None):
                order.append(f"{name}+")
                await asyncio.sleep(hold)
                order.append(f"{name}-")

        await asyncio.gather(call("a", 0.05), call("b", 0.0))
        return order

    assert asyncio.run(two()) == ["a+", "a-", "b+", "b-"]


class CountingCoordinator(JudgeCoordinator):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.round_trips = 0

    def exchange(self, ops, claims, begins):
        self.round_trips += 1
        return super().exchange(ops, claims, begins)


def test_the_calls_of_one_loop_share_round_trips_and_keep_the_limits():
    from ragmeter.judge.coordinator import Shared
    from ragmeter.judge.limiter import RealClock

    co = CountingCoordinator(concurrency=4)
    shared = Shared(co)
    seen: list[int] = []

    async def call(i: int) -> None:
        assert await shared.single_flight(f"k{i}", lambda: None) is None  # claimed
        await shared.limiter(RealClock()).acquire(0)
        async with shared.slots(None):
            seen.append(co.in_flight)
            await asyncio.sleep(0.01)
        shared.post("sent", f"k{i}")

    async def run() -> None:
        await asyncio.gather(*(call(i) for i in range(40)))
        await asyncio.sleep(0.05)  # the last one-way messages leave with the next turn

    asyncio.run(run())
    assert len(seen) == 40 and max(seen) <= 4
    assert co.report()["max_in_flight"] == 4
    assert (co.in_flight, co.sending) == (0, {})  # every slot and claim given back
    assert co.round_trips < 40  # 40 claims and 40 starts, gathered


def test_a_call_cancelled_while_it_waits_for_a_slot_takes_none():
    from ragmeter.judge.coordinator import Shared
    from ragmeter.judge.limiter import RealClock

    co = JudgeCoordinator(concurrency=1)
    shared = Shared(co)

    async def run() -> list[int]:
        limiter = shared.limiter(RealClock())
        await limiter.acquire(0)  # the only slot
        waiting = asyncio.ensure_future(limiter.acquire(0))
        await asyncio.sleep(0.02)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        async with shared.slots(None):
            pass  # gives the first slot back
        await asyncio.wait_for(limiter.acquire(0), 5)  # not taken by the cancelled call
        held = co.in_flight
        async with shared.slots(None):
            pass
        await asyncio.sleep(0.05)
        return [held, co.in_flight]

    assert asyncio.run(run()) == [1, 0]


def test_a_key_committed_just_before_the_claim_is_read_not_sent_again():
    from ragmeter.judge.coordinator import Shared

    co = JudgeCoordinator()
    shared = Shared(co)

    async def run() -> object:
        # the caller's lookup missed, then another process committed the reply and reported
        # it sent: the claim succeeds, and the reply is read from the cache instead
        got = await shared.single_flight("k", lambda: "the committed reply")
        await asyncio.sleep(0.05)
        return got

    assert asyncio.run(run()) == "the committed reply"
    assert co.sending == {}  # the claim was given back at once


def test_the_coordinator_refuses_an_unknown_message():
    co = JudgeCoordinator()
    with pytest.raises(ValueError, match="not a coordinator message"):
        co.exchange([("try_reserve", 1.0)], [], [])
    assert co.exchange([], ["k", "k"], [0.0, 0.0]) == ([True, False], [0.0, 0.0])


def test_a_rerun_after_a_failed_shard_reuses_the_finished_ones(fake, tmp_path, scheduler):
    from tests.judge.fake_openai import Reply

    inp = write_jsonl(tmp_path / "in.jsonl", samples(8))
    reference, _ = _judge(inp, "reference")
    failing = {"on": True}

    def fail_once(req):  # the last shard (samples q6, q7) meets a revoked key, once
        if failing["on"] and "Answer 7" in req.user:
            return Reply(status=401, error={"message": "Incorrect API key provided"})
        return None

    fake.script("*", fail_once)
    args = ("--scheduler", scheduler, "--partitions", "4")
    per = Path("per-resume.jsonl")
    first = invoke(
        "judge", str(inp), *METRICS, "--cache", "resume.sqlite", "--per-sample", str(per), *args
    )
    assert first.code == 2
    assert first.stderr.startswith("ragmeter judge: ")
    assert "internal error" not in first.stderr and "API key" in first.stderr
    assert len(first.stderr.strip().splitlines()) == 1
    failing["on"] = False
    fake.requests.clear()
    second = invoke(
        "judge", str(inp), *METRICS, "--cache", "resume.sqlite", "--per-sample", str(per), *args
    )
    assert second.code == 0, second.stderr
    line = second.stderr.strip()
    assert line.startswith(
        "ragmeter judge: resuming judge: 3 of 4 shards finished by an earlier run"
    )
    # only the unfinished shard ran again, and its committed calls were cache hits
    assert 0 < len(fake.requests) <= 6
    assert {r.user.split("Answer ")[1][0] for r in fake.requests if "Answer " in r.user} <= {
        "6",
        "7",
    }
    summary = json.loads(second.stdout)
    summary.pop("executor")
    assert summary["metrics"] == reference["metrics"]
