"""The Dask distributed executor (``--executor dask``, ``--workers N``, ``--scheduler ADDR``).

Imported only when a Dask executor is asked for. It starts a LocalCluster (worker processes of
one thread each on 127.0.0.1, dashboard off) or connects to an existing scheduler, checks that
the workers run the same ragmeter, numpy, pyarrow and scipy as the driver, and submits shards
progressively. Dask's own log messages are kept below ERROR (below CRITICAL on the workers of
our LocalCluster) so that no traceback of theirs reaches the user; failures become one-line
:class:`~ragmeter.errors.UsageError` messages. Our LocalCluster's settings are in
docs/scaleout.md, "The LocalCluster's settings".
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ragmeter.errors import RagmeterError, UsageError
from ragmeter.executors.base import Split
from ragmeter.executors.settings import ExecutorSettings

CHECKED_PACKAGES = ("ragmeter", "numpy", "pyarrow", "scipy")
CONNECT_TIMEOUT = 10  # seconds to reach an existing scheduler
COORDINATOR_TIMEOUT = 120  # seconds for a worker to start the judge coordinator
# A cluster whose workers all died (and whose nannies did not bring them back) holds its tasks
# forever: after this many seconds without a worker, the command fails instead of waiting.
NO_WORKER_TIMEOUT = 120.0
POLL_S = 2.0  # how often a wait for a shard checks that the cluster still has workers
MAIN_GUARD_HINT = (
    "starting Dask workers failed; call ragmeter from inside "
    "\"if __name__ == '__main__':\" in scripts"
)
# Worker processes get one thread each; keep BLAS and OpenMP pools to that thread too.
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# The C allocators of a worker read these when its process starts. Dask's default
# (MALLOC_TRIM_THRESHOLD_=65536) also pins glibc's mmap threshold at 128 KiB, so each array
# over 128 KiB is mapped afresh and faults its pages in again, and mimalloc (pyarrow's pool)
# hands freed pages back after 10 ms; the retrieval tasks also trim the allocator after each
# parse, block and bucket unless RAGMETER_KEEP_FREED_MEMORY is set. Our workers live for one
# command: keeping freed memory for the next shard took one worker from about 97 s to
# 56-66 s on the 100M-line hash plan and from 61 s to 47 s on the randomization tests
# (docs/scaleout.md, "The LocalCluster's settings"). Not MALLOC_ARENA_MAX=1: it made
# answers' scoring 25% slower. A variable set in the environment wins.
KEEP_FREED_MEMORY = {
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "MALLOC_TOP_PAD_": str(64 << 20),
    "MALLOC_MMAP_THRESHOLD_": str(64 << 20),
    "MIMALLOC_PURGE_DELAY": "-1",
    "RAGMETER_KEEP_FREED_MEMORY": "1",
}
# Read by a worker when its process starts (which ``WORKER_ENV`` is too late for: Dask sets up
# its logging on import). A failing shard is reported once, in one line, by the driver: not by
# each worker's log, nor the lost heartbeat a worker may log while the cluster closes.
PRE_SPAWN_ENV = {**KEEP_FREED_MEMORY, "DASK_LOGGING__DISTRIBUTED": "critical"}
# Set around the LocalCluster's start: the nannies hand the driver's config to their workers.
LOCAL_CONFIG: dict[str, Any] = {
    # Dask's statistical profiler samples the running task's stack every 10 ms, on the
    # worker's event loop, for a dashboard our LocalCluster does not serve: on pure-Python
    # tasks (answers' scoring) that is CPU and GIL time taken from the task.
    "distributed.worker.profile.enabled": False,
    # Every server (scheduler, nannies, workers) timed its event loop every 20 ms, to log a
    # blocked loop in logs we silence, and the memory monitors read /proc every 100 ms: with
    # the cores full, that was 2-4% of them taken from the shards.
    "distributed.admin.tick.interval": "1s",
    # the nanny still stops a worker over 95% of --worker-memory within a quarter second
    "distributed.worker.memory.monitor-interval": "250ms",
    **{f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in PRE_SPAWN_ENV.items()},
}


def quiet_dask_logs(level: int = logging.ERROR) -> None:
    """Dask logs heartbeats, closed streams and restarted workers at WARNING and INFO: keep
    them out of the user's terminal (a run that fails says so in one line of its own)."""
    for name in ("distributed", "dask", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL if name == "asyncio" else level)


def _restore_environ(environ: dict[str, str]) -> None:
    for key in set(os.environ) - set(environ):
        del os.environ[key]
    os.environ.update(environ)


def start_local_cluster(
    workers: int, memory_limit: int | str | None = None, *, silence_logs: int = logging.ERROR
) -> Any:
    """The LocalCluster of ``--workers N``: ``workers`` processes of one thread on 127.0.0.1,
    dashboard off, with :data:`LOCAL_CONFIG` and :data:`WORKER_ENV`; ``memory_limit`` per
    worker (default min(4 GiB, 0.8 × RAM / workers)). A nanny writes its
    pre-spawn variables into this process's environment: it is left as it was."""
    import dask
    from distributed import LocalCluster

    environ = dict(os.environ)
    try:
        # distributed warns when its default HTTP port is taken: noise for our users
        with warnings.catch_warnings(), dask.config.set(LOCAL_CONFIG):
            warnings.simplefilter("ignore")
            return LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # the scheduler's health endpoints still listen: on a free loopback port
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                memory_limit=memory_limit or _default_memory(workers),
                silence_logs=silence_logs,
                env=WORKER_ENV,
            )
    finally:
        _restore_environ(environ)


def _swap_handlers(handler: Any, signals: Sequence[int]) -> dict[int, Any]:
    """Set ``handler`` for ``signals``; returns the handlers it replaced, to put back with
    :func:`_restore_handlers` (none off the main thread, where no handler can be set)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in signals}


def _restore_handlers(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _interrupt_on_sigterm() -> dict[int, Any]:
    """While a command runs on Dask, SIGTERM (a CI timeout, ``kill``) is handled as Ctrl-C: the
    command closes its client and the cluster it started, keeps its finished shards and says
    "interrupted" (status 130). Python's default dies at once: a LocalCluster's resource
    tracker then warns about the workers' leaked semaphores, and an existing cluster learns of
    the lost client only when its heartbeats stop. Returns the handler to restore."""
    import signal

    return _swap_handlers(_interrupt, (signal.SIGTERM,))


@contextlib.contextmanager
def _signals_held() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM during the block (a LocalCluster's start, about half a second) take
    effect at its end, so that the cluster they interrupt exists and can be closed: Dask gives
    no handle on a cluster whose start was interrupted, and its workers' semaphores then leak.
    A second signal interrupts at once (a start that hangs can still be stopped)."""
    import signal

    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    previous = _swap_handlers(hold, (signal.SIGINT, signal.SIGTERM))
    try:
        yield held
    finally:
        _restore_handlers(previous)


def _missing(paths: Sequence[str]) -> list[str]:
    """Run on each worker: the paths it cannot see."""
    return [p for p in paths if not os.path.exists(p)]


# A LocalCluster worker holds about 90 MiB once it has imported what a shard needs (63 MiB idle),
# and its nanny stops it at 95% of its limit: under this default share a shard has little room.
MIN_WORKER_MEMORY = 256 << 20


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _default_memory(workers: int) -> int:
    """min(4 GiB, 0.8 × RAM / workers): enough for a shard, and the machine keeps some."""
    ram = _ram()
    if ram is None:
        return 4 << 30
    return int(min(4 << 30, 0.8 * ram / max(1, workers)))


class DaskExecutor:
    """Runs shards on a Dask cluster; results come back in shard order."""

    kind = "dask"

    def __init__(
        self, settings: ExecutorSettings, *, command: str | None = None, client: Any = None
    ) -> None:
        self.settings = settings
        self.command = command
        self._cluster: Any = None
        self._environ: dict[str, str] = {}
        self._owns_client = client is None
        self._actors: list[Any] = []
        self.client: Any = None
        # the SIGTERM handler to restore at close (set first: no moment without one)
        self._sigterm = _interrupt_on_sigterm() if self._owns_client else {}
        quiet_dask_logs()
        try:
            if client is not None:
                self.client = client
                where = "existing"
            elif settings.scheduler:
                self.client = self._connect(settings.scheduler)
                where = "existing"
            else:
                self.client = self._start_local(settings.workers or 1, settings.worker_memory)
                where = "local"
            self._where = where
            self._check_versions()
        except BaseException:
            self.close()
            raise

    # -- setting up ---------------------------------------------------------------------------
    def _error(self, message: str) -> UsageError:
        return UsageError(message, command=self.command)

    def _start_local(self, workers: int, memory: str | None) -> Any:
        from distributed import Client

        share = _default_memory(workers)
        if not memory and share < MIN_WORKER_MEMORY:
            ram = _ram() or 0  # known here: without it the share is 4 GiB
            most = max(1, int(0.8 * ram / MIN_WORKER_MEMORY))
            raise self._error(
                f"--workers {workers} would leave each worker {share >> 20} MiB of this "
                f"machine's {ram / (1 << 30):.1f} GiB (expected at most {most} workers here, or "
                "--worker-memory SIZE)"
            )
        # a worker the nanny restarts puts its variables back: taken out again at close
        self._environ = dict(os.environ)
        with _signals_held() as held:
            try:
                self._cluster = start_local_cluster(workers, memory)
            except RuntimeError as exc:
                # Spawned workers re-import the calling script: without a main guard they fail.
                hint = MAIN_GUARD_HINT if self.command else f"ragmeter: {MAIN_GUARD_HINT}"
                raise self._error(hint) from exc
            except ValueError as exc:
                raise self._error(
                    f"--worker-memory {memory!r} is not a size ({exc}; expected e.g. 2GiB)"
                ) from None
            client = Client(self._cluster)
        if held:  # interrupted while it started: closed (by the caller) now that it can be
            self.client = client
            raise KeyboardInterrupt
        return client

    def _connect(self, scheduler: str) -> Any:
        from distributed import Client

        target = scheduler.strip()
        if "://" in target:
            address = target
        elif os.path.isfile(target):
            address = self._address_in(target)
        else:
            raise self._error(
                f"--scheduler {scheduler!r} is neither an address nor a scheduler file "
                "(expected tcp://HOST:PORT or the path of a Dask scheduler file)"
            )
        try:
            return Client(address=address, timeout=CONNECT_TIMEOUT)
        except Exception as exc:  # Dask's own checks fail with any type (an AssertionError)
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise self._error(
                f"cannot connect to the Dask scheduler at {scheduler} ({reason}; expected a "
                "running scheduler reachable from this machine)"
            ) from None

    def _address_in(self, path: str) -> str:
        """The address in a scheduler file (``dask scheduler --scheduler-file``), read here: Dask
        meets a file without one with an AssertionError."""
        import json

        from ragmeter.io.files import read_text

        try:
            address = json.loads(read_text(path)).get("address")
        except (ValueError, AttributeError):
            address = None
        if not isinstance(address, str) or "://" not in address:
            raise self._error(
                f"--scheduler {path} is not a Dask scheduler file (expected JSON with the "
                'scheduler\'s "address", as `dask scheduler --scheduler-file` writes it)'
            )
        return address

    def _check_versions(self) -> None:
        """Every worker must run the driver's versions of the packages that make the numbers."""
        versions = self.client.get_versions(packages=list(CHECKED_PACKAGES))
        mine = versions["client"]["packages"]
        for address, info in sorted((versions.get("workers") or {}).items()):
            theirs = info.get("packages", {})
            for pkg in CHECKED_PACKAGES:
                if theirs.get(pkg) != mine.get(pkg):
                    raise self._error(
                        f"worker {address} has {pkg} {theirs.get(pkg)}, the driver has "
                        f"{mine.get(pkg)} (install the same version everywhere)"
                    )

    def check_visible(self, paths: Sequence[str], *, work_dir: str | None = None) -> None:
        """Every worker must see the input files and the work dir under the driver's names:
        workers read their shards themselves. A probe file written to the work dir tells a
        shared filesystem from one that only happens to have a folder of the same name."""
        import uuid

        probe = None
        if work_dir is not None:
            probe = os.path.join(work_dir, f".probe-{uuid.uuid4().hex}")
            with open(probe, "w", encoding="utf-8") as fh:
                fh.write("ragmeter")
        try:
            wanted = [os.path.abspath(p) for p in paths] + ([probe] if probe else [])
            seen = self.client.run(_missing, wanted)
        finally:
            if probe is not None:
                with contextlib.suppress(OSError):
                    os.remove(probe)
        for address, missing in sorted(seen.items()):
            if probe is not None and probe in missing:
                raise self._error(
                    f"--work-dir {work_dir} is not visible from worker {address} (use a "
                    "filesystem shared by all workers)"
                )
            if missing:
                raise self._error(
                    f"{missing[0]} is not visible from worker {address} (expected the inputs "
                    "on a filesystem shared by all workers, under the same path)"
                )

    # -- running ------------------------------------------------------------------------------
    def _threads(self) -> int:
        info = self.client.scheduler_info()
        return max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def run(
        self,
        task: Callable[[Any], Any],
        shards: Sequence[Any],
        *,
        label: str = "shards",
        split: Split | None = None,
    ) -> Iterator[Any]:
        """Submit shards progressively (at most 2 × worker threads in flight) and yield their
        results in shard order. The first failing shard in shard order ends the run, except
        that a shard that killed its workers is cut by ``split`` (when given) and its parts
        run once, their merged result standing for it."""
        from distributed import KilledWorker

        client = self.client
        window = 2 * self._threads()
        futures: dict[int, Any] = {}
        next_submit = 0
        try:
            for i in range(len(shards)):
                while next_submit < len(shards) and next_submit < i + window:
                    futures[next_submit] = client.submit(
                        task,
                        shards[next_submit],
                        pure=False,
                        key=f"ragmeter-{label}-{next_submit}-{os.getpid()}-{id(shards)}",
                    )
                    next_submit += 1
                future = futures.pop(i)
                try:
                    self._wait(future, f"{label} shard {i + 1} of {len(shards)}")
                    result = future.result()
                except RagmeterError:
                    raise
                except KilledWorker:
                    if split is None:
                        raise self._error(
                            f"{label} shard {i + 1} of {len(shards)} killed the workers that "
                            "ran it (raise --worker-memory or --partitions)"
                        ) from None
                    parts, merge = split(shards[i])  # or the one-line error of the plan
                    result = merge(list(self.run(task, parts, label=label, split=split)))
                except Exception as exc:
                    detail = str(exc).splitlines()[0] if str(exc) else ""
                    raise self._error(
                        f"internal error in {label} shard {i + 1} of {len(shards)} "
                        f"({type(exc).__name__}: {detail})"
                    ) from None
                yield result
        finally:
            if futures:
                client.cancel(list(futures.values()))

    def _wait(self, future: Any, what: str) -> None:
        """Wait for ``future`` for as long as it takes, unless the cluster has had no worker
        for ``NO_WORKER_TIMEOUT`` seconds."""
        from distributed import wait

        from ragmeter.judge.coordinator import TIMEOUTS

        alone_since: float | None = None
        while not future.done():
            try:
                wait([future], timeout=POLL_S)
            except TIMEOUTS:
                if self.client.scheduler_info().get("workers"):
                    alone_since = None
                    continue
                now = time.monotonic()
                alone_since = now if alone_since is None else alone_since
                if now - alone_since >= NO_WORKER_TIMEOUT:
                    raise self._error(
                        f"{what} waited {NO_WORKER_TIMEOUT:.0f} s for a Dask worker: the "
                        "cluster has none left (expected workers that stay up, or nannies "
                        "that restart them)"
                    ) from None

    def judge_coordinator(self, config: Any) -> Any:
        """One :class:`~ragmeter.judge.coordinator.JudgeCoordinator` for the run, as a Dask
        actor on one worker (actor calls run on their own thread there, beside the shards)."""
        from ragmeter.judge.coordinator import TIMEOUTS, JudgeCoordinator

        workers = sorted(self.client.scheduler_info().get("workers", {}))
        future = self.client.submit(
            JudgeCoordinator,
            rpm=config.rpm,
            tpm=config.tpm,
            concurrency=config.concurrency,
            max_cost_usd=config.max_cost_usd,
            # no call holds a slot or a claim past its deadline; a dead worker's do expire
            lease_s=config.deadline_s + 60.0,
            actor=True,
            # a preference, not a pin: the first worker may have left since it was listed
            workers=workers[:1] or None,
            allow_other_workers=True,
            key=f"ragmeter-judge-coordinator-{os.getpid()}-{id(config)}",
        )
        self._actors.append(future)
        try:
            return future.result(timeout=COORDINATOR_TIMEOUT)
        except TIMEOUTS:
            raise self._error(
                f"the judge coordinator did not start on the cluster within "
                f"{COORDINATOR_TIMEOUT} s (expected a worker to take it)"
            ) from None

    def describe(self) -> dict[str, Any]:
        import distributed

        return {
            "kind": "dask",
            "cluster": self._where,
            "workers": len(self.client.scheduler_info().get("workers", {})),
            "dask": distributed.__version__,
        }

    def close(self) -> None:
        """Client first, then the cluster: the other order logs heartbeat tracebacks."""
        # closing must not hide the run's own outcome (an error, or Ctrl-C)
        for future in self._actors:
            with contextlib.suppress(Exception):
                future.release()
        self._actors = []
        if self._owns_client and self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
            self._cluster = None
            _restore_environ(self._environ)
        _restore_handlers(self._sigterm)
        self._sigterm = {}
        self.client = None

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
