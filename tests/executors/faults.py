"""Task wrappers that kill the worker running them (module-level: workers import them)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any


def kill_once(task: Callable[[Any], Any], marker: str, victim: int, shard: Any) -> Any:
    """Run ``task``, except that the first worker to run shard ``victim`` dies mid-task."""
    if shard.index == victim:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return task(shard)


def kill_always(task: Callable[[Any], Any], victim: int, shard: Any) -> Any:
    """Shard ``victim`` kills every worker that runs it."""
    if shard.index == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    return task(shard)


class FaultyExecutor:
    """Wraps an executor so that its tasks go through a fault wrapper."""

    def __init__(self, inner: Any, wrap: Callable[[Callable[[Any], Any]], Callable[[Any], Any]]):
        self.inner = inner
        self.wrap = wrap
        self.kind = inner.kind

    def run(
        self, task: Callable[[Any], Any], shards: Any, *, label: str = "shards", **more: Any
    ) -> Any:
        return self.inner.run(self.wrap(task), shards, label=label, **more)

    def __getattr__(self, name: str) -> Any:  # the rest (its client, ...) is the inner one's
        return getattr(self.inner, name)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> FaultyExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bad_line(shard: int) -> int:
    """Shards 2 and 3 hold bad input; 3 fails first in time, 2 first in input order."""
    import time

    from ragmeter.errors import InputError

    if shard == 2:
        time.sleep(0.3)
    if shard in (2, 3):
        raise InputError(f"bad value in shard {shard}", path="in.jsonl", line=10 * shard)
    return shard * shard


def fail_once(task: Callable[[Any], Any], marker: str, victim: int, shard: Any) -> Any:
    """Run ``task``, except that shard ``victim`` raises the first time it runs."""
    if shard.index == victim:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            raise RuntimeError(f"shard {victim} failed once")
    return task(shard)


def count_runs(task: Callable[[Any], Any], folder: str, shard: Any) -> Any:
    """Run ``task`` and leave one file per run in ``folder`` (workers are other processes)."""
    import uuid

    with open(os.path.join(folder, f"{shard.index}-{uuid.uuid4().hex}"), "w"):
        pass
    return task(shard)


def kill_bucket(task: Callable[[Any], Any], victim: int, parts_too: bool, shard: Any) -> Any:
    """Every reduce of hash-plan bucket ``victim`` kills its worker: the whole bucket always,
    its parts too when ``parts_too``."""
    if shard.bucket == victim and (shard.select is None or parts_too):
        os.kill(os.getpid(), signal.SIGKILL)
    return task(shard)
