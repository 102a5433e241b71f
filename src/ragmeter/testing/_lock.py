"""Evaluate once across pytest-xdist workers: a stdlib file lock and a hand-over file.

Session fixtures are per worker, so ``pytest -n 4`` would otherwise evaluate a config four
times (and could send one judge request from two workers before either cached it). The first
worker to create ``<shared>/ragmeter-<key>.lock`` (``O_CREAT | O_EXCL``, its PID inside)
evaluates and leaves the result in ``ragmeter-<key>.pickle`` beside it; the others poll until
the lock is gone and load that file. A lock whose PID no longer runs was left by a crashed
worker and is removed. The key includes xdist's ``testrunuid``, so nothing is shared between
two pytest sessions.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["LockTimeout", "evaluate_once", "parse_duration"]


class LockTimeout(Exception):
    """Another worker held the lock for longer than ``ragmeter_lock_timeout``."""


def parse_duration(text: str) -> float:
    """Seconds in ``"6h"``, ``"90m"``, ``"30s"`` or a bare number of seconds.

    >>> parse_duration("6h"), parse_duration("1.5m"), parse_duration("20")
    (21600.0, 90.0, 20.0)
    """
    text = str(text).strip().lower()
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0}.get(text[-1:])
    number = text[:-1] if scale is not None else text
    try:
        value = float(number) * (scale or 1.0)
    except ValueError:
        raise ValueError(
            f"ragmeter_lock_timeout: cannot read {text!r} (expected e.g. 6h, 90m or 30s)"
        ) from None
    if value <= 0:
        raise ValueError(f"ragmeter_lock_timeout: {text!r} is not a positive duration")
    return value


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _owner(lock: Path) -> int | None:
    try:
        return int(lock.read_text().strip() or "0") or None
    except (OSError, ValueError):
        return None


def _load(path: Path) -> Any:
    with path.open("rb") as fh:
        return pickle.load(fh)


def _dump(path: Path, value: Any) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def evaluate_once(
    shared: Path,
    key: str,
    compute: Callable[[], Any],
    *,
    timeout: float,
    poll: float = 0.05,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[Any, bool]:
    """``(value, computed_here)``: ``compute()`` runs in exactly one of the cooperating workers.

    When the evaluating worker fails, it removes its lock without a result, and the next
    waiter evaluates (and reports the same error itself).
    """
    shared.mkdir(parents=True, exist_ok=True)
    lock = shared / f"ragmeter-{key}.lock"
    done = shared / f"ragmeter-{key}.pickle"
    start = clock()
    while True:
        if done.exists():
            return _load(done), False
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            pid = _owner(lock)
            if pid is not None and not _alive(pid):
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()  # left by a crashed worker
                continue
            if clock() - start > timeout:
                raise LockTimeout(
                    f"waited {timeout:g} s for another pytest worker (PID {pid}) to finish "
                    f"evaluating; lock file {lock} (raise ragmeter_lock_timeout, or delete the "
                    "file if no worker is running)"
                ) from None
            sleep(poll)
            continue
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            if done.exists():  # finished between our check and our lock
                return _load(done), False
            value = compute()
            _dump(done, value)
            return value, True
        finally:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
