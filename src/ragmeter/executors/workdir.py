"""The work dir: files the workers read, and finished shards that a re-run reuses.

``WORK_DIR/payloads/<sha256>.pkl`` holds what the driver hands to workers that is too large for
a task (a runner task's gold units and outputs, a comparison's two results); it is named by its
content, so a re-run of the same command writes the same names. ``WORK_DIR/<plan-digest>/``
holds one ``shard-NNNNN.pkl`` per finished shard and a ``manifest.json``. The plan digest covers
the ragmeter version, the task function, every shard (paths, ranges, settings, payload
digests) and the identity of every input file a shard names (size, mtime and the sha256 of its
first and last MiB), so a re-run after a crash or a lost worker finds the same directory and
recomputes only the shards that are not in it (docs/scaleout.md, "Resume").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.executors.base import Split

MAX_AGE_S = 7 * 86400  # plan directories older than this are left-overs of abandoned runs
_MIB = 1 << 20


def file_identity(path: str) -> tuple[Any, ...]:
    """What makes a re-run's input "the same file": size, mtime and its first and last MiB."""
    st = os.stat(path)
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        digest.update(fh.read(_MIB))
        if st.st_size > 2 * _MIB:
            fh.seek(st.st_size - _MIB)
            digest.update(fh.read(_MIB))
    return (os.path.abspath(path), st.st_size, st.st_mtime_ns, digest.hexdigest())


def _paths(shard: Any) -> list[str]:
    """The input files a shard names (its ``path``, ``run`` or ``qrels`` fields)."""
    found: list[str] = []
    if not is_dataclass(shard):
        return found
    for f in fields(shard):
        value = getattr(shard, f.name)
        if isinstance(value, tuple) and value and isinstance(value[-1], str):
            value = value[-1]  # (as given, absolute)
        if f.name in ("path", "run", "qrels") and isinstance(value, str) and os.path.isfile(value):
            found.append(value)
    return found


def _plain(shards: Sequence[Any]) -> list[Any]:
    """The shards without live handles (a coordinator differs from run to run)."""
    from dataclasses import replace

    return [
        replace(s, coordinator=None) if getattr(s, "coordinator", None) is not None else s
        for s in shards
    ]


def _write_atomic(path: str, data: bytes, command: str | None) -> None:
    """``data`` to ``path`` through a temporary name; a full disk or a folder that went away is
    one line (the temporary file removed), not a traceback."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise UsageError(
            f"cannot write {path} in the work dir ({exc.strerror or exc}; expected a writable "
            "folder with free space, set with --work-dir)",
            command=command,
        ) from None


class PlanDir:
    """The finished shards of one plan (one command's phase), in ``WORK_DIR/<digest>/``."""

    def __init__(self, path: str, n_shards: int, command: str | None = None) -> None:
        self.path = path
        self.n_shards = n_shards
        self.command = command
        self.manifest_path = os.path.join(path, "manifest.json")
        self.reused = 0
        self.computed = 0
        os.makedirs(path, exist_ok=True)
        try:
            with open(self.manifest_path, encoding="utf-8") as fh:
                self.done: dict[str, str] = dict(json.load(fh).get("done", {}))
        except (OSError, ValueError):
            self.done = {}

    def _shard_path(self, index: int) -> str:
        return os.path.join(self.path, f"shard-{index:05d}.pkl")

    def load(self, index: int) -> tuple[bool, Any]:
        """``(True, result)`` for a finished shard whose file is intact, else ``(False, None)``;
        a missing or altered file is recomputed."""
        digest = self.done.get(str(index))
        if digest is None:
            return False, None
        try:
            with open(self._shard_path(index), "rb") as fh:
                data = fh.read()
        except OSError:
            return False, None
        if hashlib.sha256(data).hexdigest() != digest:
            return False, None
        return True, pickle.loads(data)

    def save(self, index: int, result: Any) -> None:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        _write_atomic(self._shard_path(index), data, self.command)
        self.done[str(index)] = hashlib.sha256(data).hexdigest()
        manifest = {"shards": self.n_shards, "done": self.done}
        _write_atomic(
            self.manifest_path, json.dumps(manifest, sort_keys=True).encode(), self.command
        )


# The work dirs this process holds: root -> [lock file descriptor, users]. A command that opens
# the same work dir twice (the runner, then a phase of its own) shares its lock.
_HELD: dict[str, list[int]] = {}


def _lock(root: str) -> bool:
    """Take (or share, within this process) the lock of the work dir ``root``: False when
    another process holds it. A filesystem without locks counts as taken: the work dir is then
    shared as it was before locks."""
    held = _HELD.get(root)
    if held is not None:
        held[1] += 1
        return True
    fd = os.open(os.path.join(root, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    except (ImportError, OSError):  # no locks here (Windows; ENOLCK on some network filesystems)
        pass
    _HELD[root] = [fd, 1]
    return True


def _unlock(root: str) -> None:
    held = _HELD.get(root)
    if held is None:
        return
    held[1] -= 1
    if held[1] == 0:
        del _HELD[root]
        os.close(held[0])  # closing the descriptor releases the lock


class WorkDir:
    """A command's work dir (``--work-dir``, ``executor.work_dir``; default ``.ragmeter/work``).

    It must be visible under the same path from every worker. After a successful command
    the plans and payloads it used are removed unless ``keep`` (``--keep-work``); after a
    failure they stay, and re-running the same command resumes from them. As a context
    manager, the block's outcome decides which.

    One command at a time owns a work dir (a lock on its ``.lock`` file): a command started
    while another runs there works in a private folder of its own, ``private-PID``, removed
    when it ends, so that neither removes files the other still reads.
    """

    def __init__(self, root: str, *, keep: bool = False, command: str | None = None) -> None:
        self.root = os.path.abspath(root)
        self.keep = keep
        self.command = command
        self.used: list[str] = []
        self.plans: list[PlanDir] = []
        self._locked: str | None = None
        self.private = False
        try:
            os.makedirs(os.path.join(self.root, "payloads"), exist_ok=True)
            if _lock(self.root):
                self._locked = self.root
            else:
                self.private = True
                self.root = os.path.join(self.root, f"private-{os.getpid()}")
                os.makedirs(os.path.join(self.root, "payloads"), exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"cannot create the work dir {root} ({exc.strerror or exc}; expected a "
                "writable directory, set with --work-dir)",
                command=command,
            ) from None
        if self.private:
            import sys

            who = f"ragmeter {command}" if command else "ragmeter"
            sys.stderr.write(
                f"{who}: another ragmeter command is using the work dir {root}; this one works "
                f"in {os.path.join(root, os.path.basename(self.root))}, removed when it ends\n"
            )
        self.removed_old = self._remove_old()

    def _remove_old(self) -> int:
        cutoff = time.time() - MAX_AGE_S
        removed = 0
        for name in os.listdir(self.root):
            path = os.path.join(self.root, name)
            if name == "payloads" or not os.path.isdir(path):
                continue
            with contextlib.suppress(OSError):
                if os.path.getmtime(path) < cutoff:
                    shutil.rmtree(path, ignore_errors=True)
                    removed += 1
        return removed

    def payload(self, obj: Any) -> tuple[str, str]:
        """Write ``obj`` once, named by its content; returns ``(path, sha256)``."""
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        digest = hashlib.sha256(data).hexdigest()
        path = os.path.join(self.root, "payloads", f"{digest}.pkl")
        if not os.path.exists(path):
            _write_atomic(path, data, self.command)
        self.used.append(path)
        return path, digest

    def plan(
        self,
        label: str,
        task: Callable[..., Any],
        shards: Sequence[Any],
        *,
        inputs: Sequence[str] = (),
    ) -> PlanDir:
        """The plan directory of ``shards``; ``inputs`` are files the shards read that they do
        not name in a ``path``, ``run`` or ``qrels`` field (a qrels file inside a recipe)."""
        from ragmeter import __version__

        # each file once: the shards of a plan mostly name the same one (the run)
        paths = {p for s in shards for p in _paths(s)} | {p for p in inputs if os.path.isfile(p)}
        identity = {
            "ragmeter": __version__,
            "label": label,
            "task": f"{task.__module__}.{task.__qualname__}",
            "shards": hashlib.sha256(pickle.dumps(_plain(shards), protocol=4)).hexdigest(),
            "inputs": sorted({file_identity(p) for p in paths}),
        }
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        path = os.path.join(self.root, f"{label}-{digest[:16]}")
        plan = PlanDir(path, len(shards), self.command)
        self.used.append(plan.path)
        self.plans.append(plan)
        return plan

    @classmethod
    def of(cls, settings: Any, command: str, *, keep: bool | None = None) -> WorkDir:
        """The work dir an executor's settings name (``--work-dir``, ``--keep-work``)."""
        from ragmeter.executors.settings import DEFAULT_WORK_DIR

        keep = settings.keep_work if keep is None else keep
        return cls(settings.work_dir or DEFAULT_WORK_DIR, keep=keep, command=command)

    def __enter__(self) -> WorkDir:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.finish(success=exc_type is None)

    def finish(self, *, success: bool) -> None:
        """Remove what this command used after a success (unless ``keep``), and a private
        folder in any case (no re-run would find it); then release the work dir."""
        try:
            if not self.keep and (success or self.private):
                for path in self.used:  # maps under --spill DIR lie outside the work dir
                    if os.path.isdir(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        with contextlib.suppress(OSError):
                            os.remove(path)
                if self.private:
                    shutil.rmtree(self.root, ignore_errors=True)
        finally:
            if self._locked is not None:
                _unlock(self._locked)
                self._locked = None


def run_resumable(
    executor: Any,
    task: Callable[[Any], Any],
    shards: Sequence[Any],
    *,
    label: str,
    plan: PlanDir | None,
    split: Split | None = None,
) -> Iterator[Any]:
    """``executor.run`` that skips the shards ``plan`` already holds and saves each new one.

    Results still come back in shard order; a shard's result is saved before it is yielded,
    so a crash after it never recomputes it. ``split`` goes to ``executor.run`` (the retry of
    a shard that killed its workers).
    """
    if plan is None:
        yield from executor.run(task, shards, label=label, split=split)
        return
    ready: dict[int, Any] = {}
    todo: list[int] = []
    for i in range(len(shards)):
        ok, value = plan.load(i)
        if ok:
            ready[i] = value
        else:
            todo.append(i)
    plan.reused = len(ready)
    if ready:  # one line, so that a user sees why a re-run is quicker
        import sys

        who = f"ragmeter {plan.command}" if plan.command else "ragmeter"
        sys.stderr.write(
            f"{who}: resuming {label}: {len(ready)} of {len(shards)} shards finished by an "
            f"earlier run ({plan.path})\n"
        )
    fresh = (
        executor.run(task, [shards[i] for i in todo], label=label, split=split)
        if todo
        else iter(())
    )
    try:
        for i in range(len(shards)):
            if i in ready:
                yield ready.pop(i)
                continue
            value = next(fresh)
            plan.save(i, value)
            plan.computed += 1
            yield value
    finally:
        # cancels the executor's tasks now, while its client is open (not when the garbage
        # collector finds the abandoned generator, after the client closed)
        close = getattr(fresh, "close", None)
        if close is not None:
            close()
