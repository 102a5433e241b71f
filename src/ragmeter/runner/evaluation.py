"""What :func:`ragmeter.evaluate` and ``ragmeter run`` return: every system's task Results,
the comparisons with the baseline and the gate verdicts, ready to print, save and gate.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ragmeter._version import __version__
from ragmeter.datasets.gold import GoldSet
from ragmeter.errors import UsageError
from ragmeter.io.files import atomic_write, check_output, shared_mode
from ragmeter.io.jsonutil import dumps
from ragmeter.result import Aggregate, Result
from ragmeter.runner.config import RunConfig, build_rules, parse_gates
from ragmeter.runner.gates import GateReport, evaluate_rules, parse_rule
from ragmeter.runner.strata import strata_to_dict
from ragmeter.store.engine import DEFAULT_STORE
from ragmeter.store.records import RunRecord, TaskRecord
from ragmeter.views import SummaryDict, require_pandas, table_csv

if TYPE_CHECKING:  # pandas is optional
    import pandas as pd

    from ragmeter.runner.runs import SystemRun

__all__ = ["EvaluationResult"]

SUMMARY_FORMAT = "ragmeter-summary/1"


def _agg_dict(agg: Aggregate) -> dict[str, Any]:
    return asdict(agg)


class EvaluationResult:
    """The outcome of one evaluation: one run per system, each with its task Results.

    - :meth:`summary` is the content of ``summary.json`` (a dict);
    - :meth:`per_sample` is every per-sample value as a pandas DataFrame;
    - :meth:`save` writes ``results/<evaluation-id>/`` and the runs to the store;
    - :meth:`gate` applies the config's gate rules, or others.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        evaluation_id: str,
        created_at: datetime,
        finished_at: datetime,
        gold: GoldSet,
        gold_all: GoldSet,
        manifest_sha256: str | None,
        systems: Mapping[str, SystemRun],
        comparisons: Sequence[Mapping[str, Any]],
        comparison_notes: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.evaluation_id = evaluation_id
        self.created_at = created_at
        self.finished_at = finished_at
        self.gold = gold
        self.gold_all = gold_all
        self.manifest_sha256 = manifest_sha256
        self.systems = dict(systems)
        self.comparisons = [dict(c) for c in comparisons]
        self.comparison_notes = list(comparison_notes)
        self.gates: GateReport = GateReport([])
        self.saved: dict[str, Any] = {}

    # -- access -----------------------------------------------------------------------------
    @property
    def project(self) -> str:
        return self.config.project

    @property
    def baseline(self) -> str | None:
        return self.config.baseline

    @property
    def run_ids(self) -> dict[str, str]:
        return {name: s.run_id for name, s in self.systems.items()}

    @property
    def tasks(self) -> list[str]:
        return list(self.config.tasks)

    def result(self, system: str, task: str) -> Result | None:
        """The task Result of one system (``None`` if the task was skipped for it)."""
        return self.systems[system].tasks[task].result

    @property
    def results(self) -> dict[str, dict[str, Result]]:
        """Every system's :class:`ragmeter.Result` per task it was evaluated on (skipped tasks
        are left out): ``results[system][task]``."""
        return {
            name: {task: t.result for task, t in run.tasks.items() if t.result is not None}
            for name, run in self.systems.items()
        }

    def __getitem__(self, key: tuple[str, str]) -> Result | None:
        return self.result(*key)

    @property
    def passed(self) -> bool:
        return self.gates.passed

    @property
    def exit_status(self) -> int:
        return 0 if self.passed else 1

    def __repr__(self) -> str:
        verdict = self.gates.status() or "no gates"
        return (
            f"<EvaluationResult {self.evaluation_id} project={self.project!r} "
            f"systems={list(self.systems)} tasks={self.tasks} gates={verdict}>"
        )

    # -- gates ------------------------------------------------------------------------------
    def _aggregates(self, system: str) -> tuple[dict[str, dict[str, Aggregate]], dict[str, str]]:
        aggs: dict[str, dict[str, Aggregate]] = {}
        reasons: dict[str, str] = {}
        for task, trun in self.systems[system].tasks.items():
            if trun.status == "ok" and trun.result is not None:
                aggs[task] = trun.result.aggregates
            else:
                why = trun.reason or "no result"
                if len(why) > 60 and ": " in why:  # the first clause; the summary has it all
                    why = why.split(": ", 1)[0]
                reasons[task] = f"task {task} skipped: {why}"
        from ragmeter.runner.tasks import task_names

        for task in task_names():
            if task not in self.systems[system].tasks:
                reasons[task] = f"task {task} is not configured (add tasks.{task} to the config)"
        return aggs, reasons

    def _evaluate_gates(self, rules: Sequence[Any], strict: bool) -> GateReport:
        outcomes = []
        alpha = self.config.model.compare.alpha if self.config.model.compare else 0.05
        for name, srun in self.systems.items():
            aggs, reasons = self._aggregates(name)
            comps: dict[tuple[str, str], Mapping[str, Any]] = {}
            for c in self.comparisons:
                if c["system"] == name:
                    comps[(c["baseline"], c["task"], c["metric"])] = c  # type: ignore[index]
            for rule in rules:
                mine = (
                    {(t, m): c for (b, t, m), c in comps.items() if b == rule.baseline}
                    if rule.kind == "no_regression"
                    else {}
                )
                baseline_run = (
                    self.systems[rule.baseline].run_id
                    if rule.kind == "no_regression" and rule.baseline in self.systems
                    else None
                )
                outcomes.extend(
                    evaluate_rules(
                        [rule],
                        system=name,
                        aggregates=aggs,
                        task_reasons=reasons,
                        comparisons=mine,
                        baseline_system=rule.baseline,
                        baseline_run_id=baseline_run,
                        alpha=alpha,
                        strict=strict,
                    )
                )
            del srun
        return GateReport(outcomes, strict=strict)

    def apply_gates(self, *, strict: bool | None = None) -> GateReport:
        """Apply the config's rules (stored as :attr:`gates`, used by summary and save)."""
        strict = self.config.strict_gates if strict is None else strict
        self.gates = self._evaluate_gates(self.config.rules, strict)
        return self.gates

    def gate(
        self,
        rules: Sequence[str | Mapping[str, Any]] | Mapping[str, Any] | None = None,
        *,
        strict: bool | None = None,
    ) -> GateReport:
        """Gate verdicts: the config's rules, or ``rules`` (a ``gates`` block, or a list of rules
        as dicts or strings such as ``"retrieval.nDCG@10>=0.6"``).

        No-regression rules need their metric among the evaluation's comparisons.
        """
        strict = self.config.strict_gates if strict is None else strict
        if rules is None:
            return self._evaluate_gates(self.config.rules, strict)
        if isinstance(rules, Mapping):
            block = dict(rules)
        else:
            block = {"rules": [parse_rule(r) if isinstance(r, str) else dict(r) for r in rules]}
        built = build_rules(self.config, parse_gates(block, self.config))
        return self._evaluate_gates(built, strict)

    # -- views ------------------------------------------------------------------------------
    @property
    def summary(self) -> SummaryDict:
        """The evaluation as a JSON-serialisable dict (the content of ``summary.json``).

        A property, as on every result type; calling it (the old spelling) still works.
        """
        return SummaryDict(self._summary())

    def _summary(self) -> dict[str, Any]:
        cfg = self.config
        tasks: dict[str, Any] = {}
        for task in cfg.tasks:
            per_system: dict[str, Any] = {}
            metrics: list[str] = []
            requested: list[str] = []
            for name, srun in self.systems.items():
                trun = srun.tasks.get(task)
                if trun is None:
                    continue
                metrics, requested = trun.metrics, trun.requested
                entry: dict[str, Any] = {
                    "status": trun.status,
                    "reason": trun.reason,
                    "reused": trun.reused,
                    "input_hash": trun.input_hash,
                    "n_units": len(trun.records) if trun.records else None,
                }
                if trun.result is not None:
                    entry["aggregates"] = {
                        k: _agg_dict(v) for k, v in trun.result.aggregates.items()
                    }
                    entry["strata"] = strata_to_dict(trun.result.strata)
                    entry["warnings"] = list(trun.result.warnings)
                per_system[name] = entry
            tasks[task] = {"metrics": metrics, "requested": requested, "systems": per_system}
        ds = cfg.model.dataset
        return {
            "format": SUMMARY_FORMAT,
            "evaluation_id": self.evaluation_id,
            "project": self.project,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat(),
            "ragmeter": __version__,
            "config": {"path": cfg.path, "sha256": cfg.hash},
            "dataset": {
                "path": ds.path,
                "format": ds.format,
                "sha256": self.gold_all.sha256,
                "split": ds.split,
                "manifest_sha256": self.manifest_sha256,
                "n_samples": len(self.gold),
            },
            "systems": [
                {
                    "name": name,
                    "version": s.version,
                    "run_id": s.run_id,
                    "is_baseline": name == self.baseline,
                    "tags": s.tags,
                    "outputs": _outputs_meta(s.outputs),
                    "gate": self.gates.status(name),
                    **({"call": s.live, "calls": s.calls} if s.live is not None else {}),
                }
                for name, s in self.systems.items()
            ],
            "stratify_by": list(cfg.model.stratify_by),
            "tasks": tasks,
            "baseline": self.baseline,
            "comparisons": self.comparisons,
            "comparison_notes": self.comparison_notes,
            "gates": self.gates.to_dict(),
            "passed": self.passed,
            **({"saved": self.saved} if self.saved else {}),
            # where the tasks ran (docs/scaleout.md); the only key that differs between executors
            **({"executor": self.executor} if getattr(self, "executor", None) else {}),
        }

    def samples_table(self) -> pa.Table:
        """Every per-sample value of every system and task, with gold ids and strata."""
        factors = list(self.config.model.stratify_by)
        from ragmeter.runner.tasks import get_adapter

        cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "system",
                "run_id",
                "task",
                "id",
                "gold_id",
                "metric",
                "value",
                "status",
                "detail",
            )
        }
        strata_cols: dict[str, list[Any]] = {f: [] for f in factors}
        for name, srun in self.systems.items():
            for task, trun in srun.tasks.items():
                if trun.result is None:
                    continue
                adapter = get_adapter(task)
                info = {r.sample_id: r for r in trun.records}
                table = trun.result.samples
                ids = table.column("id").to_pylist()
                n = len(ids)
                cols["system"].extend([name] * n)
                cols["run_id"].extend([srun.run_id] * n)
                cols["task"].extend([task] * n)
                cols["id"].extend(ids)
                for k in ("metric", "value", "status", "detail"):
                    cols[k].extend(table.column(k).to_pylist())
                recs = [info.get(adapter.unit_of(i)) for i in ids]
                cols["gold_id"].extend(r.gold_id if r else None for r in recs)
                for f in factors:
                    strata_cols[f].extend(r.strata.get(f) if r else None for r in recs)
        fields = [
            ("system", pa.string()),
            ("run_id", pa.string()),
            ("task", pa.string()),
            ("id", pa.string()),
            ("gold_id", pa.string()),
            ("metric", pa.string()),
            ("value", pa.float64()),
            ("status", pa.string()),
            ("detail", pa.string()),
        ]
        arrays = {name: pa.array(cols[name], type=t) for name, t in fields}
        for f in factors:
            arrays[f"strata.{f}"] = pa.array(
                [None if v is None else str(v) for v in strata_cols[f]], type=pa.string()
            )
        return pa.table(arrays)

    def per_sample(self) -> pd.DataFrame:
        """Every per-sample value as a pandas DataFrame (needs pandas)."""
        require_pandas("per_sample()")
        return self.samples_table().to_pandas()

    def to_pandas(self) -> pd.DataFrame:
        """The same as :meth:`per_sample`: every per-sample value as a DataFrame."""
        return self.per_sample()

    def to_csv(self) -> str:
        """Every per-sample value as CSV: run, task, sample, metric, value, status, strata."""
        return table_csv(self.samples_table())

    # -- saving -----------------------------------------------------------------------------
    def run_records(self) -> list[RunRecord]:
        cfg = self.config
        ds = cfg.model.dataset
        public = cfg.public_dict()
        records = []
        for name, srun in self.systems.items():
            tasks = []
            for task, trun in srun.tasks.items():
                warnings = list(trun.result.warnings) if trun.result is not None else []
                tasks.append(
                    TaskRecord(
                        task=task,
                        status=trun.status,
                        reason=trun.reason,
                        input_hash=trun.input_hash,
                        reused=trun.reused,
                        metrics=trun.metrics,
                        result=trun.result,
                        records=trun.records,
                        metadata=trun.result.metadata if trun.result is not None else {},
                        warnings=warnings,
                    )
                )
            baseline_run = (
                self.systems[self.baseline].run_id
                if self.baseline and self.baseline != name and self.baseline in self.systems
                else None
            )
            records.append(
                RunRecord(
                    id=srun.run_id,
                    evaluation_id=self.evaluation_id,
                    project=self.project,
                    system=name,
                    system_version=srun.version,
                    created_at=self.created_at,
                    finished_at=self.finished_at,
                    config_hash=cfg.hash,
                    dataset_hash=self.gold_all.sha256,
                    dataset_path=ds.path,
                    dataset_split=ds.split,
                    n_samples=len(self.gold),
                    gate_status=self.gates.status(name),
                    is_baseline=name == self.baseline,
                    baseline_run_id=baseline_run,
                    tags=srun.tags,
                    notes=srun.notes,
                    config=public,
                    metadata={
                        "outputs": _outputs_meta(srun.outputs),
                        "manifest_sha256": self.manifest_sha256,
                        "stratify_by": list(cfg.model.stratify_by),
                        "comparison_notes": self.comparison_notes,
                        **(
                            {"system_call": srun.live, "system_calls": srun.calls}
                            if srun.live is not None
                            else {}
                        ),
                    },
                    tasks=tasks,
                    comparisons=[
                        {
                            **c,
                            "baseline_run_id": self.systems[c["baseline"]].run_id,
                        }
                        for c in self.comparisons
                        if c["system"] == name
                    ],
                    gates=[
                        {
                            "rule": o.rule,
                            "kind": o.kind,
                            "metric": o.metric,
                            "value": o.value,
                            "threshold": o.threshold,
                            "p_value": o.p_value,
                            "baseline_run_id": o.baseline_run_id,
                            "verdict": o.verdict,
                            "reason": o.reason,
                        }
                        for o in self.gates.outcomes
                        if o.system == name
                    ],
                )
            )
        return records

    def store_url(self, store: str | None = None) -> str:
        return store or self.config.model.store or DEFAULT_STORE

    def save(
        self,
        store: Any = None,
        *,
        results_dir: str | os.PathLike[str] | None = "results",
        write_store: bool = True,
    ) -> dict[str, Any]:
        """Write ``results/<evaluation-id>/`` and the runs to the store (one transaction).

        ``store`` is a URL or an open :class:`~ragmeter.store.Store` (default: the config's
        ``store:``, else ``sqlite:///.ragmeter/ragmeter.db``). The folder is assembled under a
        temporary name and renamed once the store has committed, so a failure leaves neither.
        """
        import pyarrow.parquet as pq
        import yaml

        from ragmeter.store import Store

        saved: dict[str, Any] = {}
        tmp_dir: Path | None = None
        final_dir: Path | None = None
        if results_dir is not None:
            root = Path(results_dir)
            check_output(root, option="results_dir", folder=True)
            final_dir = root / self.evaluation_id
            with _folder_errors(root):
                root.mkdir(parents=True, exist_ok=True)
                tmp_dir = Path(tempfile.mkdtemp(prefix=f".{self.evaluation_id}.", dir=root))
                shared_mode(tmp_dir, folder=True)  # mkdtemp's 0700 would outlive the rename
            saved["results_dir"] = str(final_dir)
        try:
            if write_store:
                owned = not isinstance(store, Store)
                handle = Store(self.store_url(store)) if owned else store
                try:
                    saved["store"] = handle.url
                    saved["run_ids"] = list(self.run_ids.values())
                    self.saved = saved
                    if tmp_dir is not None:
                        with _folder_errors(tmp_dir.parent):
                            self._write_files(tmp_dir, pq, yaml)
                    handle.write(self.run_records())
                finally:
                    if owned:
                        handle.close()
            else:
                self.saved = saved
                if tmp_dir is not None:
                    with _folder_errors(tmp_dir.parent):
                        self._write_files(tmp_dir, pq, yaml)
            if tmp_dir is not None and final_dir is not None:
                with _folder_errors(final_dir):
                    if final_dir.is_dir():
                        # live systems' outputs were materialised there before evaluating:
                        # they join the assembled folder, which then takes the final name
                        for child in final_dir.iterdir():
                            os.replace(child, tmp_dir / child.name)
                        final_dir.rmdir()
                    os.replace(tmp_dir, final_dir)
                tmp_dir = None
        finally:
            if tmp_dir is not None:
                shutil.rmtree(tmp_dir, ignore_errors=True)
        return saved

    def _write_files(self, folder: Path, pq: Any, yaml: Any) -> None:
        with atomic_write(folder / "summary.json") as fh:
            fh.write(dumps(self.summary, indent=2) + "\n")
        with atomic_write(folder / "samples.parquet", "wb") as fh:
            pq.write_table(self.samples_table(), fh)
        with atomic_write(folder / "config.yaml") as fh:
            fh.write(
                "# the config of this evaluation, secrets removed (ragmeter "
                f"{__version__}, {self.evaluation_id})\n"
            )
            yaml.safe_dump(self.config.public_dict(), fh, sort_keys=False, allow_unicode=True)


@contextmanager
def _folder_errors(folder: Path) -> Iterator[None]:
    """A results folder that cannot be written (read-only, full, a file in the way) is one line
    naming it; the store is written after the folder's files, so it holds nothing either."""
    try:
        yield
    except OSError as exc:
        what = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        raise UsageError(
            f"cannot write the results folder {folder}: {what}{where}; nothing was written "
            "(--results-dir picks another folder)"
        ) from None


def _outputs_meta(outputs: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Path and hash of each output file, plus the sidecar found next to it (a baseline's
    options, inputs and library versions: docs/baselines.md)."""
    return {
        k: {
            "path": f.path,
            "sha256": f.sha256,
            **({"sidecar": f.sidecar} if getattr(f, "sidecar", None) is not None else {}),
        }
        for k, f in outputs.items()
    }
