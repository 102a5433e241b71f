"""The runner's side of live systems: load them, call them, materialise their outputs, and
turn failed calls into ``system_error`` rows of the task Results.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from ragmeter import status as st
from ragmeter.datasets.gold import GoldSet
from ragmeter.errors import InputError, UsageError
from ragmeter.result import Result
from ragmeter.systems.cache import CallCache
from ragmeter.systems.calls import TooManyErrors
from ragmeter.systems.loader import LiveSystem, load_live_system
from ragmeter.systems.materialise import materialise
from ragmeter.systems.protocol import METHOD_TASKS
from ragmeter.systems.session import SystemCalls, call_system

__all__ = ["add_system_errors", "call_live_systems", "load_systems", "resolve_init_paths"]

_OPTION_KEYS = ("concurrency", "timeout_s", "max_errors", "deterministic")


def _written_keys(cfg: Any, i: int) -> set[str]:
    systems = cfg.data.get("systems") if isinstance(cfg.data, Mapping) else None
    entry = systems[i] if isinstance(systems, list) and i < len(systems) else None
    return set(entry) if isinstance(entry, Mapping) else set()


def resolve_init_paths(init: Mapping[str, Any] | None, base_dir: Path) -> dict[str, Any] | None:
    """``init`` with each relative string value that names an existing file or folder next to
    the config made absolute: paths in the config are relative to it, whatever the working
    directory (the system cannot know where the config is)."""
    if init is None:
        return None
    out: dict[str, Any] = {}
    for key, value in init.items():
        if isinstance(value, str) and value and not os.path.isabs(value):
            candidate = base_dir / os.path.expanduser(value)
            if candidate.exists():
                value = str(candidate)
        out[key] = value
    return out


def load_systems(
    cfg: Any,
    tasks: Sequence[str],
    objects: Mapping[str, Any] | None = None,
    *,
    task_outputs: Callable[[str], Collection[str]] | None = None,
) -> dict[str, LiveSystem]:
    """Import every ``call:`` system (or take the objects handed in), before any call.

    Raises a one-line :class:`InputError` at ``systems[i].call`` for an import path that does
    not import, a system with no protocol method, or one with no method the tasks need.
    ``task_outputs(task)`` names the output files a task can read instead of calling the system;
    the runner passes its task adapters' (handed in so this package never imports the runner).
    """
    objects = dict(objects or {})
    unknown = [n for n in objects if n not in cfg.system_names]
    if unknown:
        raise UsageError(
            f"systems: {unknown[0]!r} is not a system of the config "
            f"(expected one of {', '.join(cfg.system_names)})"
        )
    live: dict[str, LiveSystem] = {}
    for i, system in enumerate(cfg.systems):
        obj = objects.get(system.name)
        if system.call is None and obj is None:
            continue
        written = _written_keys(cfg, i)

        def error(key: str, message: str, i: int = i, written: set[str] = written) -> InputError:
            where = ("systems", i, key) if key in written else ("systems", i)
            return cfg.error(where, message if key in written else f"{key}: {message}")

        ls = load_live_system(
            system.name,
            call=None if obj is not None else system.call,
            obj=obj,
            init=resolve_init_paths(system.init, Path(cfg.base_dir)),
            version=system.version,
            base_dir=str(cfg.base_dir),
            error=error,
            options={k: getattr(system, k) for k in _OPTION_KEYS},
        )
        ls.index = i
        files = {k for k, v in system.outputs.model_dump().items() if v is not None}
        by_files = [t for t in tasks if task_outputs and any(k in files for k in task_outputs(t))]
        if tasks and not by_files and not any(t in ls.tasks for t in tasks):
            needed = sorted(
                {m for t in tasks for m, ts in METHOD_TASKS.items() if t in ts}
                or {"(none: no configured task is served by a method)"}
            )
            raise error(
                "call",
                f"{ls.call or 'the object'} has no method the configured tasks need "
                f"(tasks {', '.join(tasks)} need {' or '.join(needed)}; it has "
                f"{', '.join(ls.methods)})",
            )
        live[system.name] = ls
    return live


def call_live_systems(
    cfg: Any,
    live: Mapping[str, LiveSystem],
    gold: GoldSet,
    tasks: Sequence[str],
    *,
    cache_path: str | os.PathLike[str] | None,
    out_root: Path,
    refresh: Sequence[str] = (),
    progress: Any = None,
    corpus: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, SystemCalls], dict[str, dict[str, Path]]]:
    """Call every live system, then write its outputs under ``out_root/<system>/``.

    Returns each system's calls and the files written per output kind.
    """
    calls: dict[str, SystemCalls] = {}
    written: dict[str, dict[str, Path]] = {}
    with CallCache(cache_path) as cache:
        for name in refresh:
            cache.drop(name)
        for name, ls in live.items():
            system = cfg.systems[ls.index] if ls.index is not None else None
            skip = set()
            if system is not None:
                files = {k for k, v in system.outputs.model_dump().items() if v is not None}
                if "answers" in files:
                    skip.add("answer")
                    if "run" in files:  # else retrieve still feeds answer its contexts
                        skip.add("retrieve")
                if "entities" in files:
                    skip |= {"extract_entities", "classify", "link"}
            bar = _bars(progress, name)
            try:
                result = call_system(ls, gold, tasks, cache, corpus=corpus, skip=skip, progress=bar)
            except TooManyErrors as exc:
                where = ("systems", ls.index, "max_errors") if ls.index is not None else ()
                raise cfg.error(where, f"system {name!r}: {exc}") from None
            calls[name] = result
            written[name] = materialise(result, gold, out_root / name)
    return calls, written


def _bars(progress: Any, system: str) -> Callable[[str, int], Callable[[int], None]] | None:
    if progress is None:
        return None

    def make(method: str, total: int) -> Callable[[int], None]:
        handle = progress.add(f"{system} · {method}", total)
        return lambda n: progress.advance(handle, n)

    return make


def add_system_errors(
    result: Result | None, task: str, errors: Mapping[str, str], metrics: Sequence[str]
) -> Result:
    """``result`` plus one ``system_error`` row per failed unit and metric; the aggregates keep
    their values (failed units are left out of means) and count the new status."""
    names = list(dict.fromkeys(result.samples.column("metric").to_pylist())) if result else []
    names = names or list(metrics)
    ids = sorted(errors)
    err = Result.from_columns(
        task,
        ids,
        {m: [None] * len(ids) for m in names},
        statuses=[st.SYSTEM_ERROR] * len(ids),
        details={m: [errors[i] for i in ids] for m in names},
    )
    if result is None:
        return err
    samples = pa.concat_tables([result.samples, err.samples])
    order = {s: i for i, s in enumerate(st.STATUSES)}
    aggregates = {}
    for name, agg in result.aggregates.items():
        counts = dict(agg.status_counts)
        counts[st.SYSTEM_ERROR] = counts.get(st.SYSTEM_ERROR, 0) + len(ids)
        counts = dict(sorted(counts.items(), key=lambda kv: order.get(kv[0], len(order))))
        aggregates[name] = replace(agg, status_counts=counts)
    return Result(
        task,
        samples,
        aggregates,
        strata=result.strata,
        metadata=result.metadata,
        warnings=result.warnings,
    )
