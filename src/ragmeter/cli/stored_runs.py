"""Stored runs as inputs of ``ragmeter compare`` (docs/stats.md, "Inputs from the store").

A RUN argument is a saved results folder (``results/<evaluation-id>/``: every system in it, or
``results/<evaluation-id>/<system or run id>``: one of them) or a reference the results store
resolves (run id, evaluation id, unique prefix, ``latest``). Scores are the per-sample values of
one ``task.metric`` with a scored status (``ok``, ``missing_zeroed``); other samples are missing
and follow ``--missing``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter import registry
from ragmeter import status as st
from ragmeter.errors import InputError, UsageError

COMMAND = "compare"
Key = tuple[str, str]  # (task, canonical metric)


@dataclass
class StoredRun:
    """One run: where it lives, the metrics it holds and how to read its per-sample values."""

    run_id: str
    system: str
    version: str | None
    source: str
    metrics: list[Key]
    # (task, metric) → sample id → value of the scored rows, and the other statuses' counts
    values: Callable[[str, str], tuple[dict[str, float], Counter[str]]] = field(repr=False)


def is_stored_mode(paths: list[str], store: str | None) -> bool:
    """Stored-run mode: ``--store`` given, or the first argument is not a file (so not QRELS)."""
    return store is not None or not (paths and (paths[0] == "-" or Path(paths[0]).is_file()))


def _folder_runs(folder: Path, pick: str | None) -> list[StoredRun]:
    summary_path = folder / "summary.json"
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        systems = summary["systems"]
        tasks = summary["tasks"]
    except FileNotFoundError:
        raise InputError(
            "not a results folder (no summary.json; ragmeter run writes results/<evaluation-id>/)",
            path=folder,
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not a ragmeter summary ({exc})", path=summary_path) from None
    if pick is not None:
        chosen = [s for s in systems if pick in (s.get("name"), s.get("run_id"))]
        if not chosen:
            has = ", ".join(str(s.get("name")) for s in systems)
            raise InputError(
                f"no system or run {pick!r} in this results folder (it has {has})", path=folder
            )
        systems = chosen
    table: Any = None

    def read(run_id: str) -> Callable[[str, str], tuple[dict[str, float], Counter[str]]]:
        def _read(task: str, metric: str) -> tuple[dict[str, float], Counter[str]]:
            nonlocal table
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            if table is None:
                path = folder / "samples.parquet"
                try:
                    columns = ["run_id", "task", "id", "metric", "value", "status"]
                    table = pq.read_table(path, columns=columns)
                except (OSError, ValueError) as exc:
                    raise InputError(
                        f"cannot read the per-sample table ({exc})", path=path
                    ) from None
            rows = table.filter(
                pc.and_(
                    pc.and_(pc.equal(table["run_id"], run_id), pc.equal(table["task"], task)),
                    pc.equal(table["metric"], metric),
                )
            )
            scored = pc.is_in(rows["status"], value_set=_pa_scored())
            kept = rows.filter(scored)
            values = dict(
                zip(kept["id"].to_pylist(), map(float, kept["value"].to_pylist()), strict=True)
            )
            return values, Counter(rows.filter(pc.invert(scored))["status"].to_pylist())

        return _read

    out = []
    for s in systems:
        name = str(s["name"])
        metrics = [
            (task, m)
            for task, block in tasks.items()
            for m in ((block.get("systems") or {}).get(name) or {}).get("aggregates") or {}
        ]
        out.append(
            StoredRun(
                str(s["run_id"]), name, s.get("version"), str(folder), metrics, read(s["run_id"])
            )
        )
    return out


FILE_SUFFIXES = (".txt", ".run", ".trec", ".tsv", ".qrels", ".gz", ".json", ".jsonl", ".parquet")


def _looks_like_a_path(ref: str) -> bool:
    """A missing file (a mistyped QRELS or run) is reported as such, not looked up as a run."""
    return "/" in ref or "\\" in ref or ref.lower().endswith(FILE_SUFFIXES)


def _pa_scored() -> Any:
    import pyarrow as pa

    return pa.array(sorted(st.SCORED), pa.string())


def _store_run(handle: Any, run_id: str) -> StoredRun:
    row = handle.get_run(run_id, full=False)

    def read(task: str, metric: str) -> tuple[dict[str, float], Counter[str]]:
        values = handle.sample_values(run_id, task, metric)
        others: Counter[str] = Counter()
        if not values:  # only for the message of a metric nothing was scored on
            t = handle.sample_table(run_id, task=task)
            others.update(
                s
                for m, s in zip(t["metric"].to_pylist(), t["status"].to_pylist(), strict=True)
                if m == metric
            )
        return values, others

    metrics = [(r["task"], r["metric"]) for r in handle.metrics(run_id)]
    return StoredRun(run_id, row["system"], row.get("system_version"), handle.url, metrics, read)


def load_runs(refs: list[str], store: str | None, stack: ExitStack) -> list[StoredRun]:
    """The runs ``refs`` name, in order (an evaluation or a folder gives all its systems)."""
    handle: Any = None
    runs: list[StoredRun] = []
    for ref in refs:
        path = Path(ref)
        if path.is_dir():
            found = _folder_runs(path, None)
        elif (path.parent / "summary.json").is_file() and str(path.parent) not in ("", "."):
            found = _folder_runs(path.parent, path.name)
        elif store is None and _looks_like_a_path(ref):
            raise InputError("no such file, results folder or stored run", path=ref)
        else:
            if handle is None:
                from ragmeter.cli.stores import command_errors, open_existing_store

                handle = stack.enter_context(open_existing_store(store, COMMAND))
                # a store damaged or gone after opening: one line, not a traceback
                stack.enter_context(command_errors(COMMAND, handle.url))
            try:
                ids = handle.resolve(ref)
            except UsageError as exc:
                if "/" in ref or "\\" in ref:
                    raise InputError(
                        "no such file, results folder or stored run", path=ref
                    ) from None
                raise UsageError(str(exc), command=COMMAND) from None
            found = [_store_run(handle, i) for i in ids]
        runs.extend(r for r in found if r.run_id not in {x.run_id for x in runs})
    if len(runs) < 2:
        raise UsageError(
            f"{' '.join(refs)} names {len(runs)} run; compare needs at least 2", command=COMMAND
        )
    return runs


def system_names(runs: list[StoredRun], names: list[str]) -> list[str]:
    """Display names: the system name, with its version if two runs share one, else the run id."""
    if names:
        if len(names) != len(runs):
            raise UsageError(
                f"{len(names)} --name values for {len(runs)} runs (give one per run)",
                command=COMMAND,
            )
        out = list(names)
    else:
        out = [r.system for r in runs]
        if len(set(out)) != len(out):
            out = [f"{r.system}@{r.version}" if r.version else r.system for r in runs]
        if len(set(out)) != len(out):
            out = [r.run_id for r in runs]
    if len(set(out)) != len(out):
        raise UsageError("two runs have the same name (use --name)", command=COMMAND)
    return out


def _canonical(task: str, metric: str, held: set[Key]) -> str | None:
    if (task, metric) in held:
        return metric
    try:
        canonical = registry.resolve(metric, task=task).canonical
    except registry.UnknownMetricError:
        canonical = None
    except UsageError:
        return None
    if canonical is not None and (task, canonical) in held:
        return canonical
    folded = [m for t, m in held if t == task and m.lower() == metric.lower()]
    return folded[0] if len(folded) == 1 else canonical


def resolve_metrics(requested: list[str], runs: list[StoredRun]) -> list[Key]:
    """(task, canonical metric) of each ``--metric``; each must be held by every run."""
    held = {k for r in runs for k in r.metrics}
    tasks = {t for t, _ in held}
    out: list[Key] = []
    for name in requested:
        task, dot, metric = name.partition(".")
        if dot and task in tasks:
            candidates = [(task, c)] if (c := _canonical(task, metric, held)) else []
        else:  # no task prefix: the one task of the runs that has it
            candidates = [(t, c) for t in sorted(tasks) if (c := _canonical(t, name, held))]
            candidates = [k for k in candidates if k in held]
            if len(candidates) > 1:
                shown = " or ".join(f"{t}.{m}" for t, m in candidates)
                raise UsageError(f"metric {name!r} is ambiguous: name {shown}", command=COMMAND)
        if not candidates or candidates[0] not in held:
            full = sorted(f"{t}.{m}" for t, m in held)
            hint = registry.suggest(name, full) or [
                f"{t}.{m}"
                for h in registry.suggest(name, [m for _, m in held])
                for t, m in sorted(held)
                if m == h
            ]
            extra = f"; did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
            raise UsageError(
                f"no metric {name!r} in the runs (name it task.metric, e.g. {full[0]}){extra}"
                if full
                else f"the runs hold no metrics (asked for {name!r})",
                command=COMMAND,
            )
        key = candidates[0]
        lacking = [r for r in runs if key not in r.metrics]
        if lacking:
            has = [r.run_id for r in runs if key in r.metrics]
            raise UsageError(
                f"metric {key[0]}.{key[1]} is in run {has[0]} but not in run {lacking[0].run_id}"
                " (compare needs it in every run)",
                command=COMMAND,
            )
        if key not in out:
            out.append(key)
    return out


def default_metrics(runs: list[StoredRun]) -> list[Key]:
    """Without ``--metric``: the registry's default sample-level metrics every run holds."""
    shared = [k for k in runs[0].metrics if all(k in r.metrics for r in runs[1:])]
    out = []
    for task, metric in shared:
        try:
            d = registry.resolve(metric, task=task).definition
        except UsageError:
            continue
        if d.default and d.level == "sample":
            out.append((task, metric))
    return out


def _definition(task: str, metric: str) -> Any:
    try:
        return registry.resolve(metric, task=task).definition
    except UsageError:
        return None


def stored_scores(
    runs: list[StoredRun], systems: list[str], keys: list[Key], *, required: bool = True
) -> tuple[dict[str, dict[str, dict[str, float]]], list[str], dict[str, Any], dict[str, str]]:
    """``system → task.metric → sample id → value``, the metric labels, inputs info, directions.

    A metric a run scored no sample of is an error when ``required`` (named with ``--metric``),
    else it is left out and reported in ``info["skipped"]``.
    """
    scores: dict[str, dict[str, dict[str, float]]] = {s: {} for s in systems}
    unscored: dict[str, dict[str, dict[str, int]]] = {}
    skipped: dict[str, str] = {}
    kept: list[Key] = []
    for task, metric in keys:
        label = f"{task}.{metric}"
        per_run = [run.values(task, metric) for run in runs]
        empty = [
            (run, others) for run, (values, others) in zip(runs, per_run, strict=True) if not values
        ]
        if empty:
            run, others = empty[0]
            counts = ", ".join(f"{k} {v}" for k, v in sorted(others.items())) or "no rows"
            why = f"run {run.run_id} has no scored samples of {label} ({counts})"
            if required:
                raise UsageError(why, command=COMMAND)
            skipped[label] = why
            continue
        kept.append((task, metric))
        for system, (values, others) in zip(systems, per_run, strict=True):
            scores[system][label] = values
            if others:
                unscored.setdefault(system, {})[label] = dict(sorted(others.items()))
    if not kept:
        raise UsageError(
            "no metric has scored samples in every run"
            + (f" ({next(iter(skipped.values()))})" if skipped else ""),
            command=COMMAND,
        )
    keys = kept
    labels = [f"{t}.{m}" for t, m in keys]
    directions: dict[str, str] = {}
    corpus: list[str] = []
    for (task, metric), label in zip(keys, labels, strict=True):
        d = _definition(task, metric)
        if d is not None and d.direction == "lower":
            directions[label] = "lower"
        if d is not None and d.level == "corpus":
            corpus.append(label)
    info: dict[str, Any] = {
        "mode": "stored",
        "runs": {
            s: {"run_id": r.run_id, "system": r.system, "version": r.version, "source": r.source}
            for s, r in zip(systems, runs, strict=True)
        },
    }
    if unscored:
        info["unscored"] = unscored
    if corpus:
        info["corpus_level"] = corpus
    if skipped:
        info["skipped"] = skipped
    return scores, labels, info, directions


def iter_notes(info: dict[str, Any]) -> Iterator[str]:
    """Lines for stderr about what the numbers mean."""
    for why in info.get("skipped", {}).values():
        yield f"note: skipped: {why}"
    for label in info.get("corpus_level", []):
        yield (
            f"note: {label} is corpus-level; compare tests the mean of its per-sample values, "
            "not the pooled value (ragmeter run tests that one)"
        )
