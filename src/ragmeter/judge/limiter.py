"""Rate limits, retry delays and the injectable clock (docs/judge.md).

Every wait goes through a :class:`Clock`, so tests drive the limiter and the retry backoff with
a :class:`FakeClock` that records sleeps and advances instantly instead of sleeping.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Mapping
from typing import Protocol

__all__ = [
    "Clock",
    "FakeClock",
    "RateLimiter",
    "RealClock",
    "TokenBucket",
    "backoff_delay",
    "parse_retry_after",
]

MAX_RETRY_AFTER_S = 120.0
MAX_BACKOFF_S = 60.0
SLOWDOWN_S = 60.0  # after a 429 the rate halves, then recovers linearly over this long


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock for tests: ``sleep`` records the delay and advances time without waiting."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self.sleeps.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


class TokenBucket:
    """A bucket of ``capacity`` units refilling at ``rate`` units per second.

    A request larger than the capacity waits for a full bucket and then drives it negative,
    so it can never deadlock. ``factor`` (0–1] scales the refill rate (slow-down after 429s).
    """

    def __init__(self, capacity: float, rate: float, clock: Clock) -> None:
        self.capacity = float(capacity)
        self.rate = float(rate)
        self.clock = clock
        self.level = float(capacity)
        self.stamp = clock.now()
        self._lock = asyncio.Lock()

    def _refill(self, factor: float) -> None:
        now = self.clock.now()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate * factor)
        self.stamp = now

    async def acquire(self, amount: float, factor_fn=lambda: 1.0) -> None:
        async with self._lock:
            target = min(float(amount), self.capacity)
            self._refill(factor_fn())
            while self.level + 1e-9 < target:
                await self.clock.sleep((target - self.level) / (self.rate * factor_fn()))
                self._refill(factor_fn())
            self.level -= float(amount)

    def adjust(self, delta: float) -> None:
        """Take ``delta`` more units (negative: give back), e.g. actual − estimated tokens."""
        self.level = min(self.capacity, self.level - delta)


class RateLimiter:
    """Request and token buckets for one endpoint, plus the pause after a 429.

    >>> import asyncio
    >>> clock = FakeClock()
    >>> lim = RateLimiter(rpm=60, tpm=None, clock=clock)
    >>> async def eight():
    ...     for _ in range(8):
    ...         await lim.acquire(0)
    >>> asyncio.run(eight()); clock.sleeps
    [1.0, 1.0]
    """

    def __init__(self, *, rpm: float | None, tpm: float | None, clock: Clock) -> None:
        self.clock = clock
        self.requests = TokenBucket(max(1.0, rpm / 10), rpm / 60, clock) if rpm else None
        self.tokens = TokenBucket(tpm / 10, tpm / 60, clock) if tpm else None
        self.pause_until = -float("inf")
        self.slow_since: float | None = None

    def factor(self) -> float:
        if self.slow_since is None:
            return 1.0
        elapsed = self.clock.now() - self.slow_since
        if elapsed >= SLOWDOWN_S:
            self.slow_since = None
            return 1.0
        return 0.5 + 0.5 * max(0.0, elapsed) / SLOWDOWN_S

    async def acquire(self, est_tokens: float) -> None:
        wait = self.pause_until - self.clock.now()
        if wait > 0:
            await self.clock.sleep(wait)
        if self.requests is not None:
            await self.requests.acquire(1, self.factor)
        if self.tokens is not None:
            await self.tokens.acquire(est_tokens, self.factor)

    def correct(self, estimated: float, actual: float | None) -> None:
        """After the reply: charge the token bucket the difference actual − estimate."""
        if self.tokens is not None and actual is not None:
            self.tokens.adjust(actual - estimated)

    def on_rate_limited(self, delay: float) -> None:
        self.pause_until = max(self.pause_until, self.clock.now() + delay)
        self.slow_since = self.clock.now()


def backoff_delay(attempt: int, rng: random.Random) -> float:
    """Full jitter: U(0, min(60 s, 1 s × 2^(attempt−1))).

    >>> 0 <= backoff_delay(3, random.Random(1)) <= 4
    True
    """
    return rng.uniform(0.0, min(MAX_BACKOFF_S, 2.0 ** (attempt - 1)))


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date), ≤ 120.

    >>> parse_retry_after({"retry-after-ms": "50"})
    0.05
    >>> parse_retry_after({"Retry-After": "3"})
    3.0
    >>> parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0)
    10.0
    >>> parse_retry_after({"Retry-After": "9999"})
    120.0
    """
    lower = {k.lower(): v for k, v in headers.items()}
    value: float | None = None
    if "retry-after-ms" in lower:
        try:
            value = float(lower["retry-after-ms"]) / 1000.0
        except ValueError:
            value = None
    if value is None and "retry-after" in lower:
        raw = lower["retry-after"].strip()
        try:
            value = float(raw)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                return None
            value = when.timestamp() - (time.time() if now is None else now)
    if value is None:
        return None
    return min(MAX_RETRY_AFTER_S, max(0.0, value))
