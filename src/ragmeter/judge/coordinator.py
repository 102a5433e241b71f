"""One judge's limits shared by every process of a run (docs/scaleout.md, "The judge").

In one process the judge's runtime keeps its own token buckets, in-flight semaphore, 429
back-off and ``--max-cost`` budget. When shards of one judge run in several worker processes,
those must hold for the run as a whole, not per process: :class:`JudgeCoordinator` keeps them
in one place (a Dask actor started by the executor), and each worker's runtime asks it through
the shims below, which :func:`install` puts in place for the duration of a shard. The
coordinator also owns single-flight across processes: a cache key being sent by one worker is
not sent by another, which waits for the reply to land in the shared cache.

The coordinator never blocks: :meth:`JudgeCoordinator.try_start` grants a call now or says how
long to wait before asking again, so one thread serves every worker. Across processes there is
no initial burst: the request bucket holds one call, so the calls granted in any one-second
window are at most ``rpm/60 + 1``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import functools
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from ragmeter.errors import RagmeterError
from ragmeter.judge.ledger import Budget
from ragmeter.judge.limiter import SLOWDOWN_S

__all__ = ["JudgeCoordinator", "current", "install"]

POLL_S = 0.005  # how often a waiting worker asks again for a slot or a key being sent
# The coordinator answers at once, so a call to it that takes longer than this means the worker
# that holds it is gone: the shard fails with one line (and a re-run resumes) instead of waiting.
REMOTE_TIMEOUT_S = 120.0
# what a Dask wait raises on timeout (three distinct classes before Python 3.11)
TIMEOUTS = (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)


class _Bucket:
    """A token bucket kept as the time at which it is full again (GCRA)."""

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.full_at = -float("inf")

    def wait(self, n: float, now: float, factor: float) -> float:
        """Seconds until ``n`` units are available (0: now)."""
        need = min(n, self.capacity)
        return max(0.0, self.full_at - (self.capacity - need) / (self.rate * factor) - now)

    def take(self, n: float, now: float, factor: float) -> None:
        self.full_at = max(self.full_at, now) + n / (self.rate * factor)

    def adjust(self, delta: float) -> None:
        self.full_at += delta / self.rate


class JudgeCoordinator:
    """Rate limits, in-flight slots, 429 back-off, the cost budget and single-flight for one
    judge endpoint across processes. Thread-safe; every method returns at once."""

    def __init__(
        self,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        concurrency: int = 8,
        max_cost_usd: float | None = None,
        lease_s: float = 660.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self.clock = clock
        self.requests = _Bucket(1.0, rpm / 60) if rpm else None
        self.tokens = _Bucket(max(1.0, tpm / 10), tpm / 60) if tpm else None
        self.concurrency = max(1, int(concurrency))
        # A slot or a claim is a lease: a worker that dies holding one never gives it back, so
        # after lease_s (a call's whole deadline, retries included) it counts as given back.
        self.lease_s = float(lease_s)
        # the start of each taken slot, oldest first
        self.slot_times: collections.deque[float] = collections.deque()
        self.max_in_flight = 0
        self.pause_until = -float("inf")
        self.slow_since: float | None = None
        self.budget = Budget(max_cost_usd)
        self.sending: dict[str, float] = {}  # key -> when it was claimed
        self.starts: list[float] = []

    def ping(self) -> bool:
        return True

    def _factor(self, now: float) -> float:
        if self.slow_since is None:
            return 1.0
        elapsed = now - self.slow_since
        if elapsed >= SLOWDOWN_S:
            self.slow_since = None
            return 1.0
        return 0.5 + 0.5 * max(0.0, elapsed) / SLOWDOWN_S

    # -- rate -----------------------------------------------------------------------------------
    def try_start(self, est_tokens: float) -> float:
        """0 when the caller's call may start now (its request and tokens are taken), else
        the seconds to wait before asking again (nothing is taken). Granting only at the
        moment of the call keeps a worker that wakes up late from sending a backlog of calls
        at once."""
        with self._lock:
            now = self.clock()
            factor = self._factor(now)
            wait = self.pause_until - now
            if self.requests is not None:
                wait = max(wait, self.requests.wait(1.0, now, factor))
            if self.tokens is not None:
                wait = max(wait, self.tokens.wait(est_tokens, now, factor))
            if wait > 0:
                return wait
            if self.requests is not None:
                self.requests.take(1.0, now, factor)
            if self.tokens is not None:
                self.tokens.take(est_tokens, now, factor)
            self.starts.append(now)
            return 0.0

    def correct(self, estimated: float, actual: float | None) -> None:
        with self._lock:
            if self.tokens is not None and actual is not None:
                self.tokens.adjust(actual - estimated)

    def rate_limited(self, delay: float) -> None:
        """A 429 seen by any worker pauses and slows them all."""
        with self._lock:
            now = self.clock()
            self.pause_until = max(self.pause_until, now + delay)
            self.slow_since = now

    def begin(self, est_tokens: float) -> float:
        """:meth:`try_start` and an in-flight slot in one round trip: 0 when the call may
        start now (both are taken), else the seconds to wait before asking again."""
        with self._lock:
            if not self._slot_free():
                return POLL_S
        wait = self.try_start(est_tokens)
        if wait > 0:
            return wait
        with self._lock:
            self._take_slot()
        return 0.0

    # -- in-flight slots ------------------------------------------------------------------------
    @property
    def in_flight(self) -> int:
        return len(self.slot_times)

    def _slot_free(self) -> bool:
        expired = self.clock() - self.lease_s
        while self.slot_times and self.slot_times[0] <= expired:
            self.slot_times.popleft()
        return len(self.slot_times) < self.concurrency

    def _take_slot(self) -> None:
        self.slot_times.append(self.clock())
        self.max_in_flight = max(self.max_in_flight, len(self.slot_times))

    def take_slot(self) -> bool:
        with self._lock:
            if not self._slot_free():
                return False
            self._take_slot()
            return True

    def release_slot(self) -> None:
        # slots are counted, not named: giving back the oldest keeps the rest's leases fresh
        with self._lock:
            if self.slot_times:
                self.slot_times.popleft()

    # -- budget ---------------------------------------------------------------------------------
    def try_reserve(self, amount: float) -> bool:
        with self._lock:
            return self.budget.try_reserve(amount)

    def settle(self, reserved: float, actual: float | None) -> None:
        with self._lock:
            self.budget.settle(reserved, actual)

    def release(self, reserved: float) -> None:
        with self._lock:
            self.budget.release(reserved)

    # -- single-flight --------------------------------------------------------------------------
    def claim(self, key: str) -> bool:
        """True: the caller sends ``key``; False: another process is sending it."""
        with self._lock:
            if self._held(key):
                return False
            self.sending[key] = self.clock()
            return True

    def sent(self, key: str) -> None:
        with self._lock:
            self.sending.pop(key, None)

    def busy(self, key: str) -> bool:
        with self._lock:
            return self._held(key)

    def _held(self, key: str) -> bool:
        since = self.sending.get(key)
        return since is not None and self.clock() - since < self.lease_s

    # -- many messages in one round trip --------------------------------------------------------
    def exchange(
        self, ops: list[tuple[Any, ...]], claims: list[str], begins: list[float]
    ) -> tuple[list[bool], list[float]]:
        """What one worker's event loop gathered since its last round trip: first the
        fire-and-forget ``ops`` (``sent``, ``release_slot``, ``correct``, ``rate_limited``),
        then each of ``claims`` as :meth:`claim`, then ``begins`` (estimated tokens) in order as
        :meth:`begin`. The first refused begin ends the list, so a worker's calls start in the
        order they asked; its wait is the last entry of the answer."""
        for name, *args in ops:
            if name not in _OPS:
                raise ValueError(f"not a coordinator message: {name!r}")
            getattr(self, name)(*args)
        got = [self.claim(key) for key in claims]
        waits: list[float] = []
        for est in begins:
            waits.append(self.begin(est))
            if waits[-1] > 0:
                break
        return got, waits

    def report(self) -> dict[str, Any]:
        """What the run used: for the benchmark and the tests."""
        with self._lock:
            return {
                "starts": list(self.starts),
                "max_in_flight": self.max_in_flight,
                "spent": self.budget.spent,
                "exhausted": self.budget.closed,
            }


_OPS = frozenset({"sent", "release_slot", "correct", "rate_limited"})

# -- the worker side ----------------------------------------------------------------------------


class _Remote:
    """Calls a coordinator's methods by name; a Dask actor returns futures, resolved here."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def __call__(self, method: str, *args: Any) -> Any:
        value = getattr(self.target, method)(*args)
        result = getattr(value, "result", None)
        if not callable(result):
            return value
        try:
            return result(timeout=REMOTE_TIMEOUT_S)
        except TIMEOUTS:
            raise RagmeterError(
                f"the judge coordinator did not answer within {REMOTE_TIMEOUT_S:.0f} s (the "
                "worker that holds it may have died); run the command again to resume"
            ) from None

    def send(self, method: str, *args: Any) -> None:
        """A call whose answer nobody needs: an actor runs it without the caller waiting."""
        getattr(self.target, method)(*args)

    async def call(self, method: str, *args: Any) -> Any:
        # a pool of its own: the default one has a handful of threads, one per waiting call
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_pool(), functools.partial(self, method, *args))


_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="ragmeter-judge")
    return _POOL


class _Begin:
    __slots__ = ("est", "fut")

    def __init__(self, est: float, fut: asyncio.Future[None]) -> None:
        self.est, self.fut = est, fut


class _Channel:
    """One event loop's traffic to the coordinator, gathered into one round trip at a time.

    Each call used to cost a round trip for its claim and one for its start (and one more every
    ``POLL_S`` while every slot was taken), plus three one-way messages; with dozens of calls
    in flight per worker these round trips, not the endpoint, bounded the rate. Here whatever
    the loop's calls asked for while the previous round trip was under way goes in the next
    :meth:`JudgeCoordinator.exchange`, and calls waiting for a slot ask again as soon as one of
    this loop's calls gives one back, else after the coordinator's wait. The coordinator still
    grants each call separately at the moment it asks, so the rate bound and the leases hold
    as they did call by call.
    """

    def __init__(self, remote: _Remote, loop: asyncio.AbstractEventLoop) -> None:
        self.remote = remote
        self.loop = loop
        self.ops: list[tuple[Any, ...]] = []
        self.claims: list[tuple[str, asyncio.Future[bool]]] = []
        self.begins: list[_Begin] = []  # oldest first; a call leaves the list once granted
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def post(self, *op: Any) -> None:
        self.ops.append(op)
        self._kick()

    async def claim(self, key: str) -> bool:
        fut: asyncio.Future[bool] = self.loop.create_future()
        self.claims.append((key, fut))
        self._kick()
        return await fut

    async def begin(self, est_tokens: float) -> None:
        fut: asyncio.Future[None] = self.loop.create_future()
        self.begins.append(_Begin(est_tokens, fut))
        self._kick()
        await fut

    def _kick(self) -> None:
        self.wake.set()
        if self.task is None or self.task.done():
            self.task = self.loop.create_task(self._run())

    async def _run(self) -> None:
        while self.ops or self.claims or self.begins:
            await asyncio.sleep(0)  # the messages of this turn of the loop travel together
            self.wake.clear()
            ops, self.ops = self.ops, []
            claims, self.claims = self.claims, []
            self.begins = [b for b in self.begins if not b.fut.cancelled()]
            asked = len(self.begins)
            if not claims and not asked:
                if ops:
                    self.remote.send("exchange", ops, [], [])
                continue
            try:
                got, waits = await self.remote.call(
                    "exchange", ops, [k for k, _ in claims], [b.est for b in self.begins[:asked]]
                )
            except BaseException as exc:
                failed = [f for _, f in claims] + [b.fut for b in self.begins[:asked]]
                del self.begins[:asked]
                for f in failed:
                    if f.done():
                        continue
                    if isinstance(exc, Exception):
                        f.set_exception(exc)
                    else:
                        f.cancel()
                if not isinstance(exc, Exception):
                    raise
                continue
            for (key, f), ok in zip(claims, got, strict=True):
                if f.cancelled():
                    if ok:  # nobody will send it: let the other processes have it
                        self.ops.append(("sent", key))
                else:
                    f.set_result(ok)
            granted = sum(1 for w in waits if w <= 0)
            for b in self.begins[:granted]:
                if b.fut.cancelled():
                    self.ops.append(("release_slot",))  # granted to a call that is gone
                else:
                    b.fut.set_result(None)
            del self.begins[:granted]
            if self.begins and not self.ops and not self.claims and waits and waits[-1] > 0:
                # ask again after the coordinator's wait, or at once when a call of this loop
                # gives its slot back or another call asks for something
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), waits[-1])


class SharedLimiter:
    """:class:`~ragmeter.judge.limiter.RateLimiter`'s interface over the coordinator."""

    def __init__(self, shared: Shared, clock: Any) -> None:
        self.shared = shared
        self.clock = clock

    async def acquire(self, est_tokens: float) -> None:
        # the rate and an in-flight slot together; the slots release it
        await self.shared.channel().begin(float(est_tokens))

    def correct(self, estimated: float, actual: float | None) -> None:
        if actual is not None:
            self.shared.post("correct", float(estimated), float(actual))

    def on_rate_limited(self, delay: float) -> None:
        self.shared.post("rate_limited", float(delay))

    def factor(self) -> float:
        return 1.0


class SharedSlots:
    """The in-flight semaphore of the run, held by the coordinator: the slot was taken with
    the rate by :meth:`SharedLimiter.acquire`, which the runtime calls just before."""

    def __init__(self, shared: Shared, clock: Any) -> None:
        self.shared = shared
        self.clock = clock

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        self.shared.post("release_slot")


class SharedBudget:
    """:class:`~ragmeter.judge.ledger.Budget`'s interface over the coordinator."""

    def __init__(self, remote: _Remote, cap: float | None) -> None:
        self.remote = remote
        self.cap = cap

    def try_reserve(self, amount: float) -> bool:
        return True if self.cap is None else bool(self.remote("try_reserve", float(amount)))

    def settle(self, reserved: float, actual: float | None) -> None:
        if self.cap is not None:
            self.remote.send("settle", float(reserved), None if actual is None else float(actual))

    def release(self, reserved: float) -> None:
        if self.cap is not None:
            self.remote.send("release", float(reserved))

    @property
    def closed(self) -> bool:
        return False if self.cap is None else bool(self.remote("report")["exhausted"])


class Shared:
    """What a runtime uses instead of its own limits while :func:`install`-ed."""

    def __init__(self, target: Any) -> None:
        self.remote = _Remote(target)
        self.remote("ping")  # a Dask actor handle binds to the thread that uses it first
        self._channels: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Channel] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def channel(self) -> _Channel:
        """The running event loop's channel (shards in threads of one worker run each their
        own loop)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            ch = self._channels.get(loop)
            if ch is None:
                ch = self._channels[loop] = _Channel(self.remote, loop)
            return ch

    def post(self, method: str, *args: Any) -> None:
        """A message whose answer nobody needs, sent with the loop's next round trip."""
        try:
            ch = self.channel()
        except RuntimeError:  # no running loop: on its own
            self.remote.send("exchange", [(method, *args)], [], [])
            return
        ch.post(method, *args)

    def limiter(self, clock: Any) -> SharedLimiter:
        return SharedLimiter(self, clock)

    def slots(self, clock: Any) -> SharedSlots:
        return SharedSlots(self, clock)

    def budget(self, cap: float | None) -> SharedBudget:
        return SharedBudget(self.remote, cap)

    async def single_flight(self, key: str, cached: Callable[[], Any]) -> Any:
        """``None`` once this process holds ``key`` (it sends it, then reports ``sent``); or
        the reply another process sent meanwhile, read from the shared cache by ``cached``."""
        while True:
            if await self.channel().claim(key):
                # another process may have committed it and reported it sent between the
                # caller's cache lookup and this claim: then it is read, not sent again
                found = cached()
                if found is None:
                    return None
                self.post("sent", key)
                return found
            while await self.remote.call("busy", key):
                await asyncio.sleep(POLL_S)
            found = cached()
            if found is not None:
                return found


_CURRENT: Shared | None = None


def limits(shared: Shared | None, config: Any, clock: Any) -> tuple[Any, Any]:
    """A runtime's rate limiter and budget: its own, or the coordinator's while installed."""
    if shared is not None:
        return shared.limiter(clock), shared.budget(config.max_cost_usd)
    from ragmeter.judge.limiter import RateLimiter

    return RateLimiter(rpm=config.rpm, tpm=config.tpm, clock=clock), Budget(config.max_cost_usd)


def install(target: Any) -> None:
    """Make runtimes created in this process use the coordinator ``target`` (``None``: their
    own limits again)."""
    global _CURRENT
    _CURRENT = None if target is None else Shared(target)


def current() -> Shared | None:
    return _CURRENT
