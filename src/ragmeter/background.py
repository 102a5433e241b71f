"""A call run on a plain thread, whose result (or exception) is taken later.

A plain thread, not :mod:`concurrent.futures`: that module imports logging, and
``ragmeter trec`` keeps its imports lean (docs/retrieval.md#speed). numpy's sorts and large
array operations release the GIL, so numpy work on the thread overlaps the caller's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Background"]

T = TypeVar("T")


class Background(Generic[T]):
    """``fn(*args)`` started on a daemon thread; :meth:`result` waits for it and returns its
    value or raises its exception in the caller's thread."""

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self._result: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, args=(fn, args), daemon=True)
        self._thread.start()

    def _work(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            self._result = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]
