"""What the pytest fixtures hand to a test: one evaluated config (:class:`RunSet`) and one
system's results across its tasks (:class:`SystemResult`).

The runner returns one :class:`~ragmeter.Result` per task and system; a test names metrics as
``task.metric`` (``retrieval.nDCG@10``), so ``run["hybrid-v1"]`` is a view over that system's
task Results, with the reasons of the tasks that were skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.registry import suggest
from ragmeter.result import Aggregate, Result

__all__ = ["RunSet", "SystemResult", "evaluate_config", "load_config_checked"]


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = suggest(name, list(known), n=3)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


class SystemResult:
    """One system's results in one evaluation: ``result["retrieval"]`` is a task Result."""

    def __init__(
        self,
        name: str,
        run_id: str | None,
        results: Mapping[str, Result],
        aggregates: Mapping[str, Mapping[str, Aggregate]],
        reasons: Mapping[str, str],
        *,
        runset: RunSet | None = None,
        results_dir: str | None = None,
        strict: bool = False,
    ) -> None:
        self.name = name
        self.run_id = run_id
        self.results = dict(results)
        self.aggregates = {k: dict(v) for k, v in aggregates.items()}
        self.reasons = dict(reasons)
        self.runset = runset
        self.results_dir = results_dir
        self.strict = strict

    def __getitem__(self, task: str) -> Result:
        __tracebackhide__ = True
        try:
            return self.results[task]
        except KeyError:
            why = self.reasons.get(task, f"task {task} was not evaluated")
            raise KeyError(f"{self.name} has no {task} result ({why})") from None

    def __contains__(self, task: object) -> bool:
        return task in self.results

    def __repr__(self) -> str:
        return f"<SystemResult {self.name} run={self.run_id} tasks={list(self.results)}>"

    def strata_aggregates(
        self, stratum: Mapping[str, Any]
    ) -> tuple[dict[str, dict[str, Aggregate]], dict[str, str]]:
        """Aggregates within one stratum (``{"custodian_type": "M"}``) of every scored task."""
        if len(stratum) != 1:
            raise UsageError(
                f"stratum={dict(stratum)!r} names {len(stratum)} factors (expected one, "
                "e.g. {'custodian_type': 'M'}: the runner breaks results down one factor at a time)"
            )
        ((factor, level),) = stratum.items()
        factors: dict[str, set[str]] = {}
        for r in self.results.values():
            for f, levels in r.strata.items():
                factors.setdefault(f, set()).update(levels)
        if factor not in factors:
            known = sorted(factors)
            raise UsageError(
                f"unknown stratum factor {factor!r} (expected one of "
                f"{', '.join(known) or 'none: the config has no stratify_by'})"
                + _did_you_mean(str(factor), known)
            )
        level = str(level).lower() if isinstance(level, bool) else str(level)
        if level not in factors[factor]:
            known = sorted(factors[factor])
            raise UsageError(
                f"unknown {factor} stratum {level!r} (expected one of {', '.join(known)})"
                + _did_you_mean(level, known)
            )
        aggs = {
            task: dict(r.strata[factor][level])
            for task, r in self.results.items()
            if task in self.aggregates and level in r.strata.get(factor, {})
        }
        reasons = dict(self.reasons)
        for task in self.aggregates:
            if task not in aggs:
                reasons[task] = f"task {task} has no {factor}={level} breakdown"
        return aggs, reasons


class RunSet(Mapping[str, SystemResult]):
    """An evaluated config: ``run["bm25-v3"]`` is that system's :class:`SystemResult`.

    ``gates`` is the gate report (computed, asserted by nothing until ``assert_gates``),
    ``evaluation`` the runner's :class:`~ragmeter.runner.evaluation.EvaluationResult`.
    """

    def __init__(
        self, evaluation: Any, *, results_dir: str | None, store: str | None, strict: bool = False
    ) -> None:
        self.evaluation = evaluation
        self.results_dir = results_dir
        self.store = store
        self.config_path = evaluation.config.path
        self.strict = strict or evaluation.config.strict_gates
        self.systems: dict[str, SystemResult] = {}
        for name in evaluation.systems:
            aggs, reasons = evaluation._aggregates(name)
            results = {
                task: t.result
                for task, t in evaluation.systems[name].tasks.items()
                if t.result is not None
            }
            self.systems[name] = SystemResult(
                name,
                evaluation.systems[name].run_id,
                results,
                aggs,
                reasons,
                runset=self,
                results_dir=results_dir,
                strict=self.strict,
            )

    @property
    def gates(self) -> Any:
        return self.evaluation.gates

    def task_note(self, system: str, task: str) -> str | None:
        """The runner's full reason for a task it skipped for ``system`` (or None)."""
        run = self.evaluation.systems.get(system)
        trun = run.tasks.get(task) if run is not None else None
        return trun.reason if trun is not None else None

    @property
    def evaluation_id(self) -> str:
        return str(self.evaluation.evaluation_id)

    @property
    def judge_spend(self) -> float | None:
        """US dollars the judge spent in this evaluation (None: a call of unknown price)."""
        total = 0.0
        for run in self.evaluation.systems.values():
            for trun in run.tasks.values():
                cost = (trun.result.metadata.get("cost") if trun.result is not None else None) or {}
                if not cost.get("calls_sent"):
                    continue
                if cost.get("usd") is None:
                    return None
                total += float(cost["usd"])
        return total

    def check_fields(self) -> dict[str, Any]:
        """What every check of this evaluation carries to the session summary."""
        return {"evaluation_id": self.evaluation_id, "judge_usd": self.judge_spend}

    @property
    def comparisons(self) -> list[dict[str, Any]]:
        return self.evaluation.comparisons

    @property
    def run_ids(self) -> dict[str, str]:
        return self.evaluation.run_ids

    @property
    def baseline(self) -> str | None:
        return self.evaluation.baseline

    def __getitem__(self, system: str) -> SystemResult:
        __tracebackhide__ = True
        try:
            return self.systems[system]
        except KeyError:
            known = list(self.systems)
            raise KeyError(
                f"unknown system {system!r} (expected one of {', '.join(known)})"
                + _did_you_mean(system, known)
            ) from None

    def system(self, name: str | None) -> SystemResult:
        """One system; ``None`` is allowed when the config has exactly one."""
        __tracebackhide__ = True
        if name is None:
            if len(self.systems) == 1:
                return next(iter(self.systems.values()))
            raise UsageError(
                f"{self.config_path or 'the config'} has {len(self.systems)} systems "
                f"({', '.join(self.systems)}): name one with system=..."
            )
        if name not in self.systems:
            from ragmeter.testing._context import current_item

            known = list(self.systems)
            item = current_item()  # inside a test: name it, as every usage error of the plugin
            raise UsageError(
                (f"{item.nodeid}: " if item is not None else "")
                + f"unknown system {name!r} in {self.config_path or 'the config'} "
                f"(expected one of {', '.join(known)})" + _did_you_mean(name, known)
            )
        return self.systems[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.systems)

    def __len__(self) -> int:
        return len(self.systems)

    def __repr__(self) -> str:
        return (
            f"<RunSet {self.config_path} systems={list(self.systems)} "
            f"gates={self.gates.status() or 'none'}>"
        )


def load_config_checked(path: str | os.PathLike[str]) -> Any:
    """The validated config (an InputError is the CLI's one-line message)."""
    from ragmeter.runner.config import load_config

    return load_config(path)


def _drop_left_out(data: dict[str, Any], kept: set[str]) -> None:
    """Remove what refers to systems a narrowed evaluation leaves out (baseline, gate scopes)."""
    compare = data.get("compare")
    baseline = compare.get("baseline") if isinstance(compare, Mapping) else None
    if baseline is not None and baseline not in kept:
        data["compare"] = {k: v for k, v in compare.items() if k != "baseline"}  # type: ignore[union-attr]
        baseline = None
    gates = data.get("gates")
    if not isinstance(gates, Mapping):
        return
    gates = dict(gates)
    if gates.get("systems") is not None:
        gates["systems"] = [s for s in gates["systems"] if s in kept]
        if not gates["systems"]:
            data.pop("gates")
            return
    rules = []
    for rule in gates.get("rules") or []:
        rule = dict(rule)
        if rule.get("systems") is not None:
            rule["systems"] = [s for s in rule["systems"] if s in kept]
            if not rule["systems"]:
                continue
        body = rule.get("no_regression")
        if isinstance(body, Mapping) and (body.get("baseline") or baseline) not in kept:
            continue
        rules.append(rule)
    gates["rules"] = rules
    data["gates"] = gates


def _filtered(cfg: Any, systems: Sequence[str] | None, tasks: Sequence[str] | None) -> Any:
    """The config restricted to some systems and tasks (names checked against the config)."""
    from ragmeter.runner.config import load_config

    data = dict(cfg.data)
    if systems is not None:
        for name in systems:
            if name not in cfg.system_names:
                raise UsageError(
                    f"{cfg.path}: unknown system {name!r} (expected one of "
                    f"{', '.join(cfg.system_names)})" + _did_you_mean(name, cfg.system_names)
                )
        data["systems"] = [s for s in data["systems"] if s.get("name") in systems]
        _drop_left_out(data, set(systems))
    if tasks is not None:
        for name in tasks:
            if name not in cfg.tasks:
                raise UsageError(
                    f"{cfg.path}: task {name!r} is not in the config (expected one of "
                    f"{', '.join(cfg.tasks)})" + _did_you_mean(name, list(cfg.tasks))
                )
        data["tasks"] = {k: v for k, v in data["tasks"].items() if k in tasks}
    narrowed = load_config(data, base_dir=cfg.base_dir)
    narrowed.path = cfg.path
    return narrowed


def evaluate_config(
    cfg: Any,
    *,
    results_root: Path,
    store: str | None,
    cache_dir: str | os.PathLike[str] | None,
    systems: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
) -> Any:
    """Evaluate a loaded config through the runner and save it; returns the EvaluationResult.

    ``store=None`` saves the results folder only.
    """
    from ragmeter.runner import pipeline

    if systems is not None or tasks is not None:
        cfg = _filtered(cfg, systems, tasks)
    import inspect

    options: dict[str, Any] = {"cache_dir": cache_dir, "progress": None}
    if "results_dir" in inspect.signature(pipeline.run_pipeline).parameters:
        # the runner writes what live systems (call:) answered under results_dir: keep it in
        # the session's temp directory, beside the results, not in the project
        options["results_dir"] = results_root
    evaluation = pipeline.run_pipeline(cfg, **options)
    evaluation.save(store, results_dir=results_root, write_store=store is not None)
    return evaluation
