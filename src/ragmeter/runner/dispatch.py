"""Where ``ragmeter run`` evaluates its tasks and comparisons (docs/scaleout.md, "ragmeter run").

In-process (the default), each (task, system) is evaluated in the loop of
:func:`ragmeter.runner.pipeline.run_pipeline` by :func:`evaluate_unit`. On a Dask executor the
loop only plans: each (task, system) whose result is not in the task cache becomes one shard,
and every shard runs the same :func:`evaluate_unit` on a worker, from a payload the driver
writes once to the work dir (the gold units, the task's options and the system's outputs; no
API key). Comparisons are shards of :func:`ragmeter.runner.compare.compare_row` the same
way. A unit is evaluated whole by the in-process function, so results are the same to the bit;
only the summary's ``executor`` block says where they ran.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["UnitDispatcher", "evaluate_unit"]


def _no_progress(n: int) -> None:
    """Workers report progress through their results, not through a callback."""


def evaluate_unit(
    task: str,
    ctx: Any,
    outputs: Any,
    factors: Sequence[str],
    ci_settings: Any,
    canonical: Sequence[str],
) -> tuple[str, Any]:
    """Evaluate one task for one system: ``("ok", Result)`` with its CIs and strata, or
    ``("skipped", reason)`` when the adapter skips it. The same function runs in-process and
    on workers."""
    from ragmeter.runner.intervals import add_cis
    from ragmeter.runner.intervals import own_stats as _own_stats
    from ragmeter.runner.strata import stratify
    from ragmeter.runner.tasks import TaskSkipped, get_adapter

    adapter = get_adapter(task)
    ctx = _with_secret(ctx)
    try:
        result = adapter.evaluate(ctx, outputs)
    except TaskSkipped as exc:
        return "skipped", str(exc)
    add_cis(result, ci_settings, list(canonical))
    if factors:
        result.strata = {
            **result.strata,
            **stratify(
                result,
                ctx.units,
                list(factors),
                unit_of=adapter.unit_of,
                corpus_stats=lambda m: _own_stats(adapter, m, result),
                evaluate_subset=lambda us: adapter.evaluate_subset(ctx, outputs, us),
                wanted=list(canonical),
            ),
        }
    return "ok", result


def _without_secret(ctx: Any) -> Any:
    """The context as written to the work dir: the judge's API key stays in the environment
    (the worker reads it from the same ``api_key_env`` variable), its cache path absolute."""
    judge = getattr(ctx, "judge", None)
    config = getattr(judge, "config", None)
    if config is not None:
        # workers have their own working directory: the cache file is the driver's (a
        # PostgreSQL URL is kept as it is, and refused if it carries a password)
        from ragmeter.executors.judge import worker_cache

        cache = config.cache_path and worker_cache(config.cache_path, command="run", reach=False)
        config = dataclasses.replace(config, api_key=None, cache_path=cache)
        judge = dataclasses.replace(judge, config=config)
    return dataclasses.replace(ctx, judge=judge, progress=_no_progress)


def _with_secret(ctx: Any) -> Any:
    judge = getattr(ctx, "judge", None)
    config = getattr(judge, "config", None)
    if config is None or getattr(config, "api_key", None) is not None:
        return ctx
    key = os.environ.get(getattr(config, "api_key_env", "") or "")
    if not key:
        return ctx
    judge = dataclasses.replace(judge, config=dataclasses.replace(config, api_key=key))
    return dataclasses.replace(ctx, judge=judge)


def _judged(calls: Sequence[tuple[Any, ...]]) -> list[bool]:
    """Which ``evaluate_unit`` calls may call the judge: a configured judge and a task that
    uses it (the judge task, or a task whose metrics need an LLM)."""
    from ragmeter.runner.tasks import get_adapter

    out = []
    for args in calls:
        judge = getattr(args[1], "judge", None) if len(args) > 1 else None
        configured = judge is not None and judge.configured and judge.config is not None
        out.append(
            bool(configured)
            and get_adapter(args[0]).uses_llm(args[1].options, list(args[1].metrics))
        )
    return out


@dataclasses.dataclass
class _Deferred:
    trun: Any
    args: tuple[Any, ...]
    cache: Any
    advance: Callable[[int], None]


class UnitDispatcher:
    """Runs a pipeline's units on the executor its settings name (nothing when local)."""

    def __init__(self, settings: Any = None, *, command: str = "run") -> None:
        self.settings = settings
        self.command = command
        self.pending: list[_Deferred] = []
        self.executor: Any = None
        self.work: Any = None
        self.meta: dict[str, Any] | None = None

    @classmethod
    def for_config(cls, cfg: Any, flags: Any = None, *, command: str = "run") -> UnitDispatcher:
        """The dispatcher of a run: the executor flags, the environment, then ``executor:``."""
        from ragmeter.errors import UsageError
        from ragmeter.executors.settings import resolve_settings

        block = cfg.model.executor
        config = None if block is None else block.model_dump(exclude_none=True)
        try:
            settings = resolve_settings(**dict(flags or {}), config=config)
        except UsageError as exc:
            raise UsageError(exc.message, command=command) from None
        return cls(settings, command=command)

    @property
    def remote(self) -> bool:
        return self.settings is not None and not self.settings.is_local

    def defer(
        self,
        trun: Any,
        args: tuple[Any, ...],
        *,
        cache: Any,
        advance: Callable[[int], None],
    ) -> Any:
        """Queue ``evaluate_unit(*args)`` for ``trun`` (filled in by :meth:`run_pending`)."""
        task, ctx, *rest = args
        self.pending.append(_Deferred(trun, (task, _without_secret(ctx), *rest), cache, advance))
        return trun

    # -- the executor ---------------------------------------------------------------------------
    def _start(self) -> None:
        if self.executor is not None:
            return
        from ragmeter.executors import make_executor
        from ragmeter.executors.settings import DEFAULT_WORK_DIR
        from ragmeter.executors.workdir import WorkDir

        self.work = WorkDir(
            self.settings.work_dir or DEFAULT_WORK_DIR,
            keep=self.settings.keep_work,
            command=self.command,
        )
        self.executor = make_executor(self.settings, command=self.command)
        check = getattr(self.executor, "check_visible", None)
        if check is not None:
            check([], work_dir=self.work.root)
        self.meta = self.executor.describe()

    def map(self, func: Callable[..., Any], calls: Sequence[tuple[Any, ...]], label: str) -> list:
        """``[func(*args) for args in calls]``, each call one shard on the executor; finished
        shards in the work dir are reused by a re-run of the same command."""
        if not calls:
            return []
        from ragmeter.executors.plan import PayloadShard
        from ragmeter.executors.tasks import call_payload
        from ragmeter.executors.workdir import run_resumable

        try:
            self._start()
            name = f"{func.__module__}:{func.__name__}"
            shared = self._coordinator(calls) if func is evaluate_unit else None
            shards = [
                PayloadShard(i, *self.work.payload(args), name, shared if uses else None)
                for i, (args, uses) in enumerate(zip(calls, _judged(calls), strict=True))
            ]
            plan = self.work.plan(label, call_payload, shards)
            return list(run_resumable(self.executor, call_payload, shards, label=label, plan=plan))
        except BaseException:
            self.close(success=False)
            raise

    def _coordinator(self, calls: Sequence[tuple[Any, ...]]) -> Any:
        """One judge coordinator for every unit that calls the judge (rate, slots, budget)."""
        for args, uses in zip(calls, _judged(calls), strict=True):
            if uses:
                make = getattr(self.executor, "judge_coordinator", None)
                return None if make is None else make(args[1].judge.config)
        return None

    def run_pending(self) -> None:
        """Evaluate the deferred units and fill in their task runs."""
        pending, self.pending = self.pending, []
        outcomes = self.map(evaluate_unit, [d.args for d in pending], "tasks")
        for d, (status, value) in zip(pending, outcomes, strict=True):
            trun = d.trun
            if status == "skipped":
                trun.status, trun.reason, trun.records = "skipped", value, []
            else:
                trun.result = value
                task = d.args[0]
                from ragmeter.runner.tasks import get_adapter

                if d.cache is not None and get_adapter(task).cacheable(value):
                    d.cache.put(task, trun.input_hash, value)
            d.advance(len(d.args[1].units))

    def close(self, *, success: bool = True) -> None:
        if self.executor is not None:
            with contextlib.suppress(Exception):
                self.executor.close()
            self.executor = None
        if self.work is not None:
            self.work.finish(success=success)
            self.work = None
