"""The task-adapter interface: one small adapter per runner task.

An adapter turns the gold units of its task and one system's outputs into the engine call and a
:class:`~ragmeter.result.Result`. It declares its config block (:class:`TaskOptions` subclass),
the output kinds it reads, and why it might not run here (engine or extra missing, no LLM).
Adapters import their engine lazily, inside :meth:`TaskAdapter.evaluate`, so validating a config
never imports an engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ragmeter import registry
from ragmeter.datasets.gold import GoldSet
from ragmeter.datasets.views import Unit
from ragmeter.registry import ResolvedMetric
from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.store.records import SampleRecord

__all__ = ["TaskAdapter", "TaskContext", "TaskOptions", "TaskSkipped"]


class TaskOptions(BaseModel):
    """Options of a ``tasks.<task>`` block; subclasses add the engine's options."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    metrics: list[str] | None = Field(
        None, description="Metric names inside the task (default: the registry's default set)."
    )

    def metric_names(self) -> list[str] | None:
        """The metric names asked for, as written (``None``: the registry's defaults)."""
        return self.metrics


class TaskSkipped(Exception):
    """Raised by an adapter when its task cannot run here; the message is the one-line reason."""


@dataclass
class TaskContext:
    """Everything an adapter needs to evaluate one system on one task."""

    task: str
    gold: GoldSet
    units: Sequence[Unit]
    options: TaskOptions
    metrics: Sequence[ResolvedMetric]
    system: str
    judge: Any = None  # ragmeter.runner.judge_settings.JudgeSettings
    base_dir: str = "."
    progress: Callable[[int], None] = field(default=lambda n: None)

    @property
    def metric_names(self) -> list[str]:
        """Canonical metric names, in the order asked for."""
        return list(dict.fromkeys(m.canonical for m in self.metrics))


class TaskAdapter:
    """Base class; one subclass per runner task (``ragmeter.runner.tasks.<task>``)."""

    name: ClassVar[str]
    options: ClassVar[type[TaskOptions]] = TaskOptions
    outputs: ClassVar[tuple[str, ...]] = ()
    engine_module: ClassVar[str] = ""
    extra: ClassVar[str | None] = None
    extra_modules: ClassVar[tuple[str, ...]] = ()
    version: ClassVar[str] = "1"  # bump when the adapter's results change, to drop cached ones

    def for_system(self, options: TaskOptions, system: Any) -> TaskOptions:
        """The task options for one system (``systems[]`` entry); most tasks use them as given."""
        return options

    # -- availability ---------------------------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why this task cannot run in this environment, or ``None``."""
        try:
            registry.get_task(self.name)
        except registry.UnknownMetricError:
            return f"the {self.name} engine is not part of this build of ragmeter"
        if self.engine_module:
            try:
                importlib.import_module(self.engine_module)
            except ModuleNotFoundError as exc:
                if exc.name and self.engine_module.startswith(exc.name):
                    return f"the {self.name} engine is not part of this build of ragmeter"
                if self.extra:
                    return f"needs ragmeter[{self.extra}] (pip install 'ragmeter[{self.extra}]')"
                raise
        for module in self.extra_modules:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError:
                return f"needs ragmeter[{self.extra}] (pip install 'ragmeter[{self.extra}]')"
        return None

    # -- metrics --------------------------------------------------------------------------------
    def default_metrics(self, options: TaskOptions | None = None) -> list[str]:
        """The registry's default metric set of this task, parameterised families made concrete.

        A default family named with a cut-off placeholder (``nDCG@k``, ``ranking.hits@k``) is
        expanded with :meth:`cutoffs`.
        """
        out: list[str] = []
        for m in registry.get_task(self.name).metrics:
            if not m.default:
                continue
            concrete = [m.name.replace("@k", f"@{k}") for k in self.cutoffs(options)]
            if "@k" in m.name and all(self._names(n, m) for n in concrete):
                out.extend(concrete)
            else:  # a literal name such as grounded's recall@k
                out.append(m.name)
        return out

    def _names(self, name: str, family: Any) -> bool:
        """True when ``name`` resolves to the metric ``family`` of this task."""
        try:
            return registry.resolve(name, task=self.name).definition is family
        except registry.UnknownMetricError:
            return False

    def cutoffs(self, options: TaskOptions | None) -> list[int]:
        """Cut-offs that make a default ``@k`` family concrete."""
        return [10]

    def resolve(self, names: Sequence[str]) -> list[ResolvedMetric]:
        """Resolve metric names inside this task (raises UnknownMetricError/UsageError)."""
        return [registry.resolve(n, task=self.name) for n in names]

    def uses_llm(self, options: TaskOptions, metrics: Sequence[ResolvedMetric]) -> bool:
        """True when some asked-for metric needs the LLM judge (its cache key adds the judge)."""
        return any("llm" in m.definition.needs for m in metrics)

    def sufficient_stats(
        self, metric: str, run: Result, baseline: Result
    ) -> tuple[dict[str, Any], dict[str, Any], Callable[[Any], Any]] | None:
        """Additive per-unit statistics of a corpus-level metric for document resampling
        (docs/stats.md): ``(stats of run, stats of baseline, aggregate)``, or ``None``."""
        return None

    def cacheable(self, result: Result) -> bool:
        """Whether a finished Result may be re-used by the next run with the same inputs."""
        return True

    def units(self, gold: GoldSet) -> list[Unit]:
        """The units this task scores in ``gold`` (:mod:`ragmeter.datasets.views`)."""
        from ragmeter.datasets.views import units

        return units(gold, self.name)

    def has_outputs(self, outputs: Mapping[str, Any]) -> bool:
        return any(outputs.get(kind) for kind in self.outputs)

    def unit_of(self, row_id: str) -> str:
        """The unit a per-sample row belongs to (identity unless rows are finer than units)."""
        return row_id

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        raise NotImplementedError

    def evaluate_subset(
        self, ctx: TaskContext, outputs: Mapping[str, OutputFile], units: Sequence[Unit]
    ) -> Result:
        """Evaluate on some units only (per-stratum values of corpus-level metrics)."""
        sub = TaskContext(
            ctx.task,
            ctx.gold.subset({u.sample.id for u in units}),
            units,
            ctx.options,
            ctx.metrics,
            ctx.system,
            ctx.judge,
            ctx.base_dir,
        )
        return self.evaluate(sub, outputs)

    def records(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> list[SampleRecord]:
        """Each unit's inputs, gold and output, for the dashboard's sample page."""
        return [
            SampleRecord(u.id, u.sample.id, dict(u.sample.strata), {"input": {}, "gold": {}})
            for u in ctx.units
        ]
