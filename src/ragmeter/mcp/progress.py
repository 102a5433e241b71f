"""Progress and cancellation of one tool call, without any SDK import.

The server sets a :class:`CallState` for each call (a context variable, which anyio copies into
the worker thread); the tools report ``(done, total, message)`` through it and check
:meth:`CallState.check` between units of work. Reports are throttled to four a second.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ragmeter.errors import Interrupted

__all__ = ["CallState", "RunProgress", "check", "current", "report"]

_MIN_INTERVAL = 0.25  # seconds between two progress notifications (at most 4 a second)


class CallState:
    """The progress sink and the cancel flag of one tool call."""

    def __init__(
        self,
        sink: Callable[[float, float, str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sink = sink
        self.clock = clock
        self.cancelled = threading.Event()
        self._last = -1e9

    def report(self, done: float, total: float, message: str = "", *, force: bool = False) -> None:
        if self.sink is None:
            return
        now = self.clock()
        if not force and now - self._last < _MIN_INTERVAL and done < total:
            return
        self._last = now
        self.sink(done, total, message)

    def check(self) -> None:
        """Raise :class:`~ragmeter.errors.Interrupted` once the client cancelled the call."""
        if self.cancelled.is_set():
            raise Interrupted("ragmeter mcp: the call was cancelled (finished work is kept)")


_STATE: contextvars.ContextVar[CallState | None] = contextvars.ContextVar(
    "ragmeter_mcp_call", default=None
)


def current() -> CallState:
    return _STATE.get() or CallState()


def bind(state: CallState) -> contextvars.Token[CallState | None]:
    return _STATE.set(state)


def unbind(token: contextvars.Token[CallState | None]) -> None:
    _STATE.reset(token)


def report(done: float, total: float, message: str = "") -> None:
    current().report(done, total, message)


def check() -> None:
    current().check()


class RunProgress:
    """The runner's progress protocol (``add``/``advance``/``finish``) as MCP notifications.

    Totals add up over tasks, so a client sees one bar: units scored so far over all units.
    """

    def __init__(self, state: CallState) -> None:
        self.state = state
        self.totals: dict[Any, int] = {}
        self.done: dict[Any, int] = {}
        self.names: dict[Any, str] = {}

    def add(self, task: str, total: int) -> Any:
        handle = len(self.totals)
        self.totals[handle] = max(total, 1)
        self.done[handle] = 0
        self.names[handle] = task
        self._emit(handle)
        return handle

    def advance(self, handle: Any, n: int) -> None:
        self.state.check()
        self.done[handle] = min(self.done[handle] + n, self.totals[handle])
        self._emit(handle)

    def finish(self, handle: Any, *, skipped: bool = False) -> None:
        """Complete the task's units; a task no system was scored on counts only what it did
        (a full share would claim work that was not done)."""
        if skipped:
            self.totals[handle] = self.done[handle]
        else:
            self.done[handle] = self.totals[handle]
        self._emit(handle, force=True)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        yield

    def _emit(self, handle: Any, force: bool = False) -> None:
        self.state.report(
            sum(self.done.values()), sum(self.totals.values()), self.names[handle], force=force
        )
