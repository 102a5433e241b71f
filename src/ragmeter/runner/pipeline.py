"""The evaluation pipeline behind ``ragmeter run`` and :func:`ragmeter.evaluate`.

1. Validate the config (:mod:`ragmeter.runner.config`), load the gold set and the split, read
   every system output the configured tasks need, all before evaluating anything.
2. For every task (runner order) and every system that has outputs for it: re-use the cached
   Result if the inputs did not change, else call the task's adapter; add per-stratum values.
3. Compare every system with the baseline (:mod:`ragmeter.runner.compare`), apply the gates.

Nothing is written here; :class:`~ragmeter.runner.evaluation.EvaluationResult` saves.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter import registry
from ragmeter.datasets.gold import GoldSet, load_gold
from ragmeter.errors import UsageError
from ragmeter.io.files import sha256_file
from ragmeter.io.files import shown_path as _shown
from ragmeter.runner import outputs as out_io
from ragmeter.runner.cache import DEFAULT_CACHE_DIR, TaskCache, input_hash
from ragmeter.runner.config import RunConfig, load_config
from ragmeter.runner.dispatch import UnitDispatcher, evaluate_unit
from ragmeter.runner.intervals import aggregate_ci_settings
from ragmeter.runner.judge_settings import resolve_judge
from ragmeter.runner.live_tasks import (
    failed_units,
    has_task,
    live_skip_reason,
    nothing_written,
    with_system_errors,
)
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.runs import SystemRun, TaskRun
from ragmeter.runner.tasks import TaskContext, get_adapter
from ragmeter.systems.cache import DEFAULT_SYSTEMS_CACHE
from ragmeter.systems.corpus import read_corpus
from ragmeter.systems.runner import call_live_systems, load_systems
from ragmeter.systems.session import SystemCalls

if TYPE_CHECKING:  # imported when a run is done: the pipeline module stays light for the CLI
    from ragmeter.runner.evaluation import EvaluationResult

__all__ = ["SystemRun", "TaskRun", "evaluate", "run_pipeline"]


def new_evaluation_id(now: datetime) -> str:
    """``20250601T120000Z-3f9a1c``: sortable by time, unique across concurrent processes."""
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class _NullProgress:
    def add(self, task: str, total: int) -> Any:
        return None

    def advance(self, handle: Any, n: int) -> None:
        return None

    def finish(self, handle: Any, *, skipped: bool = False) -> None:
        return None

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        yield


class RichProgress:
    """One progress bar per task on stderr (units scored over all systems)."""

    def __init__(self, console: Any = None) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        from ragmeter.terminal import make_console

        self.progress = Progress(
            TextColumn("{task.description:<16}", markup=False),  # task names are config keys
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console if console is not None else make_console(stderr=True),
            transient=False,
        )

    def add(self, task: str, total: int) -> Any:
        return self.progress.add_task(task, total=max(total, 1))

    def advance(self, handle: Any, n: int) -> None:
        self.progress.advance(handle, n)

    def finish(self, handle: Any, *, skipped: bool = False) -> None:
        """Complete the bar; a task no system was scored on drops its bar instead (a full bar
        would claim work that was not done; the summary lists the task as skipped)."""
        task = next((t for t in self.progress.tasks if t.id == handle), None)
        if task is None:
            return
        if skipped:
            self.progress.update(handle, visible=False)
        else:
            self.progress.update(handle, completed=task.total)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        with self.progress:
            yield


def _load_split(cfg: RunConfig, gold: GoldSet) -> tuple[GoldSet, str | None]:
    ds = cfg.model.dataset
    if ds.split is None:
        return gold, None
    manifest_path = cfg.resolve_path(ds.manifest or "")
    try:
        from ragmeter.stats.datasets import load_manifest
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ragmeter.stats"):
            raise cfg.error(
                ("dataset", "split"),
                "split manifests are read by ragmeter.stats, which is not part of this build",
            ) from None
        raise
    manifest = load_manifest(manifest_path)
    splits = manifest["splits"] if isinstance(manifest, Mapping) else manifest.splits
    if ds.split not in splits:
        raise cfg.error(
            ("dataset", "split"),
            f"split '{ds.split}' is not in the manifest (expected one of {', '.join(splits)})",
        )
    ids = list(splits[ds.split])
    missing = [i for i in ids if i not in gold.by_id]
    if missing:
        raise cfg.error(
            ("dataset", "manifest"),
            f"the manifest's split '{ds.split}' lists {len(missing)} ids that are not in the "
            f"gold set, e.g. {missing[0]!r} (expected a manifest written for this gold file)",
        )
    return gold.subset(ids), sha256_file(manifest_path)


def _check_strata(cfg: RunConfig, gold: GoldSet) -> None:
    from ragmeter.runner.strata import QA_FACTORS

    present = {f for s in gold for f in s.strata}
    for i, factor in enumerate(cfg.model.stratify_by):
        if factor not in present and factor not in QA_FACTORS:
            known = sorted(present)
            raise cfg.error(
                ("stratify_by", i),
                f"factor '{factor}' is in no sample's strata (expected one of "
                f"{', '.join(known) or 'the keys of each sample strata'})",
            )


_READERS = {
    "answers": out_io.read_answers,
    "entities": out_io.read_entities,
    "traces": out_io.read_traces,
    "run": out_io.read_run,
}


def _read_outputs(
    cfg: RunConfig, gold_all: GoldSet, needed: set[str]
) -> dict[str, dict[str, OutputFile]]:
    """Every needed output file of every system, validated against the whole gold set."""
    readers = _READERS
    result: dict[str, dict[str, OutputFile]] = {}
    for system in cfg.systems:
        files: dict[str, OutputFile] = {}
        for kind, value in system.outputs.model_dump().items():
            if value is None or kind not in needed:
                continue
            shown = _shown(cfg.resolve_path(value))
            files[kind] = readers[kind](shown, gold_all)
            files[kind].sidecar = out_io.read_sidecar(shown)
        result[system.name] = files
    return result


def _add_rule_metrics(cfg: RunConfig) -> None:
    """Gate and comparison metrics are computed even when a task block does not list them."""
    wanted: list[tuple[str, str]] = [
        (r.task, r.metric.partition(".")[2]) for r in cfg.rules if r.canonical is not None
    ]
    for m in cfg.compare_metrics or ():
        wanted.append((m.task, m.requested))
    for task, name in wanted:
        if task not in cfg.metrics:
            continue
        have = {m.canonical for m in cfg.metrics[task]}
        hit = registry.resolve(name, task=task)
        if hit.canonical not in have:
            cfg.metrics[task].append(hit)


def run_pipeline(
    cfg: RunConfig,
    *,
    cache_dir: str | os.PathLike[str] | None = DEFAULT_CACHE_DIR,
    progress: Any = None,
    strict_gates: bool | None = None,
    systems: Mapping[str, Any] | None = None,
    systems_cache: str | os.PathLike[str] | None = DEFAULT_SYSTEMS_CACHE,
    refresh_systems: Sequence[str] = (),
    results_dir: str | os.PathLike[str] = "results",
    executor: Mapping[str, Any] | None = None,
) -> EvaluationResult:
    """Evaluate a validated config; return an :class:`EvaluationResult` (nothing saved but the
    outputs of live systems, in ``results_dir/<evaluation-id>/outputs/<system>/``).

    ``systems`` maps system names of the config to live objects (instead of their ``call:``);
    ``systems_cache`` is the SQLite call cache (``None``: in memory, nothing kept);
    ``refresh_systems`` names systems whose cached calls are dropped first; ``executor``
    holds the executor flags (docs/scaleout.md), which win over the config's ``executor:``.
    """
    from ragmeter.runner.compare import run_comparisons
    from ragmeter.runner.evaluation import EvaluationResult

    created = datetime.now(timezone.utc)
    evaluation_id = new_evaluation_id(created)
    judge = resolve_judge(cfg.model.judge, str(cfg.base_dir))
    _add_rule_metrics(cfg)
    ds = cfg.model.dataset
    gold_all = load_gold(
        _shown(cfg.resolve_path(ds.path)), fmt=ds.format, on_offset_mismatch=ds.on_offset_mismatch
    )
    gold, manifest_hash = _load_split(cfg, gold_all)
    _check_strata(cfg, gold)
    runnable = [t for t in cfg.tasks if t not in cfg.unavailable]
    needed = {kind for t in runnable for kind in get_adapter(t).outputs}
    files = _read_outputs(cfg, gold_all, needed)
    has_live = bool(systems) or any(s.call is not None for s in cfg.systems)
    corpus = read_corpus(_shown(cfg.resolve_path(ds.corpus))) if has_live and ds.corpus else None
    live = load_systems(cfg, runnable, systems, task_outputs=lambda t: get_adapter(t).outputs)
    for name in refresh_systems:
        if name not in live:
            raise UsageError(
                f"--refresh-system {name!r} is not a live system of the config "
                f"(expected one of {', '.join(live) or 'the systems with call:'})",
                command="run",
            )
    calls: dict[str, SystemCalls] = {}
    progress = progress or _NullProgress()
    bars = contextlib.ExitStack()  # one live display for the calls and the tasks
    bars.enter_context(progress.running())
    if live:
        out_root = Path(results_dir) / evaluation_id / "outputs"
        try:
            calls, written = call_live_systems(
                cfg,
                live,
                gold,
                runnable,
                cache_path=systems_cache,
                out_root=out_root,
                refresh=refresh_systems,
                progress=progress,
                corpus=corpus,
            )
            for name, kinds in written.items():
                for kind, path in kinds.items():
                    if kind not in files[name]:  # files named in the config take precedence
                        files[name][kind] = _READERS[kind](_shown(path), gold_all)
        except BaseException:
            bars.close()
            raise
    system_runs = {
        s.name: SystemRun(
            s.name,
            f"{evaluation_id}-{s.name}",
            s.version,
            list(s.tags),
            s.notes,
            outputs=files[s.name],
            live=live[s.name].describe() if s.name in live else None,
            calls=calls[s.name].stats_dict() if s.name in calls else None,
        )
        for s in cfg.systems
    }
    cache = TaskCache(cache_dir)
    dispatch = UnitDispatcher.for_config(cfg, executor)
    ci_settings = aggregate_ci_settings(cfg)
    factors = list(cfg.model.stratify_by)
    gold_key = {
        "sha256": gold_all.sha256,
        "format": gold_all.format,
        "split": ds.split,
        "manifest": manifest_hash,
        "offsets": ds.on_offset_mismatch,
    }
    with bars:
        for task, options in cfg.tasks.items():
            adapter = get_adapter(task)
            metrics = cfg.metrics.get(task, [])
            canonical = list(dict.fromkeys(m.canonical for m in metrics))
            requested = list(dict.fromkeys(m.requested for m in metrics))
            unavailable = cfg.unavailable.get(task)
            task_units = list(adapter.units(gold))
            evaluated = [
                s
                for s in cfg.systems
                if has_task(task, adapter, s, system_runs[s.name].outputs, calls.get(s.name))
            ]
            handle = progress.add(task, len(task_units) * max(len(evaluated), 1))
            for system in cfg.systems:
                srun = system_runs[system.name]
                common = {"metrics": canonical, "requested": requested}
                if unavailable is not None:
                    srun.tasks[task] = TaskRun(system.name, task, "skipped", unavailable, **common)
                    continue
                if system not in evaluated:
                    kinds = " or ".join(adapter.outputs)
                    srun.tasks[task] = TaskRun(
                        system.name,
                        task,
                        "skipped",
                        live_skip_reason(task, system.name, live.get(system.name))
                        or f"{system.name} has no {kinds} output "
                        f"(systems[].outputs.{adapter.outputs[0]})",
                        **common,
                    )
                    continue
                if not task_units:
                    srun.tasks[task] = TaskRun(
                        system.name,
                        task,
                        "skipped",
                        f"the gold set has no {task} units"
                        + (f" in split '{ds.split}'" if ds.split else ""),
                        **common,
                    )
                    continue
                outputs = {k: srun.outputs[k] for k in adapter.outputs if k in srun.outputs}
                failed = failed_units(
                    task,
                    task_units,
                    calls.get(system.name),
                    {k for k, v in system.outputs.model_dump().items() if v is not None},
                    adapter.outputs,
                )
                empty = nothing_written(task, task_units, outputs, adapter.outputs, failed)
                if empty is not None and system.name in calls:
                    srun.tasks[task] = TaskRun(
                        system.name, task, "skipped", f"{system.name} {empty}", **common
                    )
                    continue
                sys_options = adapter.for_system(options, system)
                uses_llm = adapter.uses_llm(sys_options, metrics)
                llm_reason = judge.reason if uses_llm else None
                key = input_hash(
                    {
                        "adapter": f"{task}@{adapter.version}",
                        "options": sys_options.model_dump(),
                        "metrics": canonical,
                        "gold": gold_key,
                        "strata": factors,
                        "outputs": {k: f.sha256 for k, f in outputs.items()},
                        "judge": dict(judge.public) if uses_llm and llm_reason is None else None,
                        "ci": ci_settings,
                    }
                )
                ctx = TaskContext(
                    task,
                    gold,
                    task_units,
                    sys_options,
                    metrics,
                    system.name,
                    judge=judge,
                    base_dir=str(cfg.base_dir),
                    progress=lambda n, h=handle: progress.advance(h, n),
                )
                if failed is not None:  # some calls failed: evaluate the rest, never cache
                    result, records = with_system_errors(
                        adapter, ctx, outputs, failed, factors, ci_settings, canonical
                    )
                    srun.tasks[task] = TaskRun(
                        system.name,
                        task,
                        "skipped" if llm_reason else "ok",
                        llm_reason,
                        result,
                        records,
                        key,
                        False,
                        **common,
                    )
                    continue
                result = cache.get(task, key) if llm_reason is None else None
                reused = result is not None
                unit = (task, ctx, outputs, factors, ci_settings, canonical)
                if result is None and dispatch.remote:  # evaluated on the executor, below
                    status = "skipped" if llm_reason else "ok"
                    trun = TaskRun(system.name, task, status, llm_reason, input_hash=key, **common)
                    trun.records = adapter.records(ctx, outputs)
                    advance = lambda n, h=handle: progress.advance(h, n)  # noqa: E731
                    cached = cache if llm_reason is None else None
                    srun.tasks[task] = dispatch.defer(trun, unit, cache=cached, advance=advance)
                    continue
                if result is None:
                    status, result = evaluate_unit(*unit)
                    if status == "skipped":
                        srun.tasks[task] = TaskRun(system.name, task, "skipped", result, **common)
                        continue
                    if llm_reason is None and adapter.cacheable(result):
                        cache.put(task, key, result)
                else:
                    progress.advance(handle, len(task_units))
                srun.tasks[task] = TaskRun(
                    system.name,
                    task,
                    "skipped" if llm_reason else "ok",
                    llm_reason,
                    result,
                    adapter.records(ctx, outputs),
                    key,
                    reused,
                    **common,
                )
            scored = any(
                system_runs[s.name].tasks.get(task) is not None
                and system_runs[s.name].tasks[task].status == "ok"
                for s in cfg.systems
            )
            progress.finish(handle, skipped=not scored)
    dispatch.run_pending()
    comparisons, comparison_notes = run_comparisons(cfg, system_runs, dispatch=dispatch)
    dispatch.close()
    result = EvaluationResult(
        cfg,
        evaluation_id=evaluation_id,
        created_at=created,
        finished_at=datetime.now(timezone.utc),
        gold=gold,
        gold_all=gold_all,
        manifest_sha256=manifest_hash,
        systems=system_runs,
        comparisons=comparisons,
        comparison_notes=comparison_notes,
    )
    result.executor = dispatch.meta
    result.apply_gates(strict=strict_gates)
    return result


def evaluate(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = DEFAULT_CACHE_DIR,
    progress: bool = False,
    strict_gates: bool | None = None,
    systems: Mapping[str, Any] | None = None,
    dataset: str | os.PathLike[str] | None = None,
    tasks: Sequence[str] | Mapping[str, Any] | None = None,
    systems_cache: str | os.PathLike[str] | None = DEFAULT_SYSTEMS_CACHE,
    refresh_systems: Sequence[str] = (),
    results_dir: str | os.PathLike[str] = "results",
) -> EvaluationResult:
    """Evaluate every system of a config on every task it has outputs (or methods) for.

    ``config`` is a path to a ``ragmeter.yaml`` or a dict with the same keys (paths in a dict
    are relative to ``base_dir``, default the working directory). Returns an
    :class:`~ragmeter.runner.evaluation.EvaluationResult`; nothing is stored until you call its
    ``save()``. ``cache_dir=None`` turns off the re-use of unchanged task results.

    ``systems={name: obj}`` hands in live systems (objects with any of the methods of
    :mod:`ragmeter.systems`) for systems named in the config, or, without a config, with
    ``dataset="gold.jsonl"`` and ``tasks=[...]``: ``evaluate(dataset="gold.jsonl",
    systems={"my-rag": pipeline}, tasks=["retrieval", "answers"])``. Their calls go through
    the call cache ``systems_cache`` (``None``: in memory) and their outputs are written to
    ``results_dir/<evaluation-id>/outputs/<system>/``.
    """
    if config is None:
        if dataset is None or not systems:
            raise UsageError("evaluate: without a config, give dataset= and systems= (and tasks=)")
        task_block = dict(tasks) if isinstance(tasks, Mapping) else {t: {} for t in tasks or ()}
        config = {
            "project": "python",
            "dataset": {"path": os.fspath(dataset)},
            "systems": [{"name": name} for name in systems],
            "tasks": task_block,
        }
    elif dataset is not None or tasks is not None:
        raise UsageError("evaluate: dataset= and tasks= go in the config when one is given")
    cfg = load_config(config, base_dir=base_dir, live=list(systems or ()))
    return run_pipeline(
        cfg,
        cache_dir=cache_dir,
        progress=RichProgress() if progress else None,
        strict_gates=strict_gates,
        systems=systems,
        systems_cache=systems_cache,
        refresh_systems=refresh_systems,
        results_dir=results_dir,
    )
