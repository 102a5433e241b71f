"""Calling one method of a live system for many inputs: cache first, then concurrent calls.

Sync methods run on a small pool of daemon threads, async ones under an asyncio semaphore; both
keep at most ``concurrency`` calls in flight and give each ``timeout_s`` seconds. Every result
is checked (:mod:`ragmeter.systems.shapes`) and committed to the call cache as it arrives, on the
collecting thread, so an interrupted run keeps every finished call. A call that raises, times out
or returns the wrong shape is an error for its input, never cached; past ``max_errors`` the
system's calls stop with :class:`TooManyErrors`.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.systems.cache import CallCache, call_key
from ragmeter.systems.loader import LiveSystem
from ragmeter.systems.shapes import ShapeError, check_result

__all__ = ["ErrorBudget", "MethodStats", "TooManyErrors", "run_method"]


@dataclass
class MethodStats:
    """What one method cost in one evaluation."""

    calls: int = 0  # calls made (cache misses), failed ones included
    cache_hits: int = 0
    errors: int = 0
    seconds: float = 0.0  # wall time of this method's phase

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
        }


class TooManyErrors(Exception):
    """More failed calls than ``max_errors`` allows; the message is the one-line reason."""


@dataclass
class ErrorBudget:
    """Failed calls of one system, against its ``max_errors``."""

    limit: int
    count: int = 0
    last: str = ""
    samples: list[str] = field(default_factory=list)

    def add(self, reason: str) -> None:
        self.count += 1
        self.last = reason
        if self.count > self.limit:
            raise TooManyErrors(
                f"{self.count} calls failed, more than max_errors {self.limit} "
                f"(last: {reason}); finished calls are kept in the call cache"
            )


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def invoke(fn: Callable[..., Any], method: str, args: Mapping[str, Any]) -> Any:
    """Call ``fn`` the way the protocol names its arguments."""
    if method == "retrieve":
        return fn(args["question"], k=args["k"])
    if method == "answer":
        return fn(args["question"], contexts=args["contexts"])
    if method in ("extract_entities", "classify"):
        return fn(args["text"])
    if method == "link":
        return fn(args["mention"], context=args["context"])
    raise ValueError(f"unknown method {method!r}")  # pragma: no cover


Done = Callable[[int, Any, "BaseException | None", float], None]


def _run_threads(
    fn: Callable[..., Any],
    method: str,
    jobs: Sequence[Mapping[str, Any]],
    concurrency: int,
    timeout: float,
    done: Done,
) -> None:
    """Sync calls on daemon threads (a hung call never blocks the process from exiting)."""
    todo: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    results: queue.SimpleQueue[tuple[int, Any, BaseException | None, float]] = queue.SimpleQueue()
    running: dict[int, float] = {}  # job -> start time, of the calls in flight only
    abandoned: set[int] = set()  # timed out: their threads were replaced
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            idx = todo.get()
            if idx is None or stop.is_set():
                return
            t0 = time.monotonic()
            running[idx] = t0
            try:
                value, error = invoke(fn, method, jobs[idx]), None
            except Exception as exc:  # the system's failure, reported for this input
                value, error = None, exc
            results.put((idx, value, error, time.monotonic() - t0))
            if idx in abandoned:  # a replacement took this thread's slot
                return

    def spawn() -> None:
        threading.Thread(target=worker, daemon=True, name=f"ragmeter-{method}").start()

    for i in range(len(jobs)):
        todo.put(i)
    workers = min(concurrency, len(jobs))
    for _ in range(workers):
        spawn()
    pending = set(range(len(jobs)))
    try:
        while pending:
            # list() copies under the GIL while workers add entries
            starts = list(running.items())
            now = time.monotonic()
            wait = max(0.001, min(t for _, t in starts) + timeout - now) if starts else 0.5
            try:
                idx, value, error, seconds = results.get(timeout=min(wait, timeout))
            except queue.Empty:
                now = time.monotonic()
                for i, t0 in sorted(starts):
                    if now - t0 >= timeout and i in pending:
                        pending.discard(i)
                        running.pop(i, None)
                        abandoned.add(i)
                        spawn()  # the hung thread keeps its slot busy: give the pool a new one
                        done(i, None, TimeoutError(f"timed out after {timeout:g} s"), timeout)
                continue
            running.pop(idx, None)
            if idx in pending:  # else: the late result of a call that already timed out
                pending.discard(idx)
                done(idx, value, error, seconds)
    finally:
        stop.set()
        for _ in range(workers + len(jobs)):
            todo.put(None)


class _Collector:
    """Runs ``done`` for finished async calls on a thread of its own, in arrival order, so that
    checking and committing a result never holds up the event loop's timers. The first
    exception ``done`` raises (TooManyErrors) is kept; later results are still committed."""

    def __init__(self, done: Done) -> None:
        self.done = done
        self.queue: queue.SimpleQueue[tuple[int, Any, BaseException | None, float] | None]
        self.queue = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, daemon=True, name="ragmeter-collect")
        self.thread.start()

    def _work(self) -> None:
        while (item := self.queue.get()) is not None:
            try:
                self.done(*item)
            except BaseException as exc:
                if self.error is None:
                    self.error = exc

    def close(self) -> None:
        """Wait until every result handed over is committed."""
        self.queue.put(None)
        self.thread.join()


class _Stop(Exception):
    """The collector saw too many errors: no new call starts."""


async def _run_async(
    fn: Callable[..., Any],
    method: str,
    jobs: Sequence[Mapping[str, Any]],
    concurrency: int,
    timeout: float,
    done: Done,
) -> None:
    sem = asyncio.Semaphore(concurrency)
    # asyncio.timeout (3.11+) needs no extra task per call, unlike wait_for
    deadline = getattr(asyncio, "timeout", None)
    collector = _Collector(done)

    async def call(idx: int) -> Any:
        if deadline is not None:
            async with deadline(timeout):
                return await invoke(fn, method, jobs[idx])
        return await asyncio.wait_for(invoke(fn, method, jobs[idx]), timeout)

    async def one(idx: int) -> None:
        async with sem:
            if collector.error is not None:
                raise _Stop
            t0 = time.monotonic()
            try:
                value, error = await call(idx), None
            except asyncio.TimeoutError:
                value, error = None, TimeoutError(f"timed out after {timeout:g} s")
            except Exception as exc:
                value, error = None, exc
            collector.queue.put((idx, value, error, time.monotonic() - t0))

    tasks = [asyncio.ensure_future(one(i)) for i in range(len(jobs))]
    try:
        await asyncio.gather(*tasks)
    except _Stop:
        pass
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        collector.close()  # every finished call is committed, even after Ctrl-C
    if collector.error is not None:
        raise collector.error


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _run_coroutine(coro_factory: Callable[[], Any]) -> None:
    """``asyncio.run``, or on a helper thread when a loop already runs here (a notebook)."""
    if not _in_running_loop():
        asyncio.run(coro_factory())
        return
    box: dict[str, BaseException] = {}

    def target() -> None:
        try:
            asyncio.run(coro_factory())
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]


def run_method(
    live: LiveSystem,
    method: str,
    inputs: Mapping[str, Mapping[str, Any]],
    cache: CallCache,
    budget: ErrorBudget,
    *,
    progress: Callable[[int], None] = lambda n: None,
) -> tuple[dict[str, Any], dict[str, str], MethodStats]:
    """Results and errors of ``method`` for each input (by unit id), and what it cost.

    Inputs with the same arguments share one call. Cached results are used as they are.
    """
    t0 = time.monotonic()
    stats = MethodStats()
    keys = {unit: call_key(args) for unit, args in inputs.items()}
    by_key: dict[str, list[str]] = {}
    for unit, key in keys.items():
        by_key.setdefault(key, []).append(unit)
    cached = cache.lookup(live.name, live.version, method, by_key)
    results: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key, value in cached.items():
        for unit in by_key[key]:
            results[unit] = value
    stats.cache_hits = sum(len(by_key[k]) for k in cached)
    progress(stats.cache_hits)
    missing = [k for k in by_key if k not in cached]
    jobs = [dict(inputs[by_key[k][0]]) for k in missing]

    def done(idx: int, value: Any, error: BaseException | None, seconds: float) -> None:
        key = missing[idx]
        units = by_key[key]
        stats.calls += 1
        if error is None:
            try:
                checked = check_result(method, value, jobs[idx])
            except ShapeError as exc:
                error_text = str(exc)
            except Exception as exc:  # a value too odd to check: still this input's failure
                error_text = (
                    f"{method} returned a value that could not be checked ({_first_line(exc)})"
                )
            else:
                cache.put(live.name, live.version, method, key, jobs[idx], checked, seconds)
                for unit in units:
                    results[unit] = checked
                progress(len(units))
                return
        elif isinstance(error, TimeoutError) and str(error).startswith("timed out"):
            error_text = f"{method} {error}"
        else:
            error_text = f"{method} raised {_first_line(error)}"
        stats.errors += 1
        for unit in units:
            errors[unit] = error_text
        progress(len(units))
        budget.add(f"{method} on {units[0]!r}: {error_text}")

    fn = live.methods[method]
    try:
        if jobs and live.is_async[method]:
            _run_coroutine(
                lambda: _run_async(fn, method, jobs, live.concurrency, live.timeout_s, done)
            )
        elif jobs:
            _run_threads(fn, method, jobs, live.concurrency, live.timeout_s, done)
    finally:
        stats.seconds = time.monotonic() - t0
    return results, errors, stats
