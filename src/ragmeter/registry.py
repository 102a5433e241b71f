"""The one registry of metrics (docs/architecture.md; docs/conventions.md, "Metric names").

The CLI, the runner config, the docs page of metric definitions, the report and the dashboard all
read this registry; nothing keeps its own list. Each engine declares its tasks and metrics in a
small module of plain dataclasses (``ragmeter/<engine>/registry.py``) listed in
:data:`TASK_PROVIDERS`; the registry imports a provider only when one of its tasks is asked for,
so reading it never pulls in an engine's dependencies.

Names: inside a task a metric is named by itself (``nDCG@10``); everywhere else it is
``task.metric`` (``retrieval.nDCG@10``). A name splits at its first dot, because task names
contain none and metric names may (``retrieval.ndcg_cut.10``). Every alias resolves to one
canonical entry; the spelling that was asked for is kept for display.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ragmeter.errors import UsageError
from ragmeter.metric_param import Param

__all__ = [
    "NO_NUMERIC_VALUE",
    "TASK_PROVIDERS",
    "MetricDef",
    "Param",
    "ResolvedMetric",
    "TaskDef",
    "UnknownMetricError",
    "all_tasks",
    "get_task",
    "metric_record",
    "metric_records",
    "resolve",
    "split_name",
    "suggest",
]

Direction = Literal["higher", "lower", "none"]

TASK_PROVIDERS: Mapping[str, str] = MappingProxyType(
    {
        "retrieval": "ragmeter.retrieval.registry",
        "answers": "ragmeter.answers.registry",
        "grounded": "ragmeter.answers.registry",
        "semantic": "ragmeter.answers.registry",
        "judge": "ragmeter.judge.registry",
        "steps": "ragmeter.steps.registry",
        "ner": "ragmeter.extraction.registry",
        "classification": "ragmeter.extraction.registry",
        "linking": "ragmeter.extraction.registry",
        "agreement": "ragmeter.extraction.registry",
    }
)
"""Task name → module that defines it (a ``TASKS`` tuple of :class:`TaskDef`), in runner order."""

NO_NUMERIC_VALUE: frozenset[str] = frozenset({"retrieval.runid", "retrieval.relstring"})
"""Registry entries whose value is text (trec_eval's run tag and relevance string), so they have
no formula; every other metric has a formula and a citation (docs/metrics.md)."""


@dataclass(frozen=True)
class MetricDef:
    """One metric (or parameterised family) of one task.

    ``level`` says how the task aggregate is formed: ``"sample"`` means the aggregate is the mean
    of per-sample values (so strata and paired tests use those values); ``"corpus"`` means it is
    computed from pooled counts (micro F1), and resampling must go through the engine
    (docs/stats.md).
    """

    task: str
    name: str
    summary: str
    reference: str
    aliases: tuple[str, ...] = ()
    direction: Direction = "higher"
    range: tuple[float | None, float | None] = (0.0, 1.0)
    params: tuple[Param, ...] = ()
    formula: str = ""
    citation: str = ""
    needs: frozenset[str] = frozenset()  # "llm", "embeddings"
    extra: str | None = None  # the pip extra that provides what ``needs`` names
    level: Literal["sample", "corpus"] = "sample"
    default: bool = False  # part of the task's default metric set

    @property
    def full_name(self) -> str:
        return f"{self.task}.{self.name}"


@dataclass(frozen=True)
class ResolvedMetric:
    """A metric name as asked for, resolved to its canonical entry and parameters."""

    definition: MetricDef
    canonical: str  # e.g. "nDCG@10": the key used by the store, gates and comparisons
    requested: str  # the spelling that was asked for, kept for display
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def task(self) -> str:
        return self.definition.task

    @property
    def full_name(self) -> str:
        return f"{self.task}.{self.canonical}"


Resolver = Callable[[str], "ResolvedMetric | None"]


@dataclass(frozen=True)
class TaskDef:
    """A runner task: an engine (module or submodule) and the metrics it produces.

    ``resolver`` handles parameterised names a plain alias table cannot list (``P.5``,
    ``nDCG(gain=exp)@10``): it returns a :class:`ResolvedMetric`, ``None`` for an unknown name, or
    raises :class:`~ragmeter.errors.UsageError` for a known name with bad parameters.
    """

    name: str
    engine: str
    summary: str
    metrics: tuple[MetricDef, ...]
    resolver: Resolver | None = None
    extra: str | None = None
    needs: frozenset[str] = frozenset()
    spellings: tuple[str, ...] = ()  # extra names offered as suggestions (parameterised forms)
    runner: bool = True  # False: scored only by its own command (agreement compares raters)

    def __post_init__(self) -> None:
        if "." in self.name:
            raise ValueError(f"task names contain no dot: {self.name!r}")
        seen: dict[str, str] = {}
        for m in self.metrics:
            if m.task != self.name:
                raise ValueError(f"metric {m.name!r} declares task {m.task!r}, not {self.name!r}")
            for spelling in (m.name, *m.aliases):
                if spelling in seen and seen[spelling] != m.name:
                    raise ValueError(
                        f"{self.name}: {spelling!r} names both {seen[spelling]!r} and {m.name!r}"
                    )
                seen[spelling] = m.name

    def names(self) -> list[str]:
        """Every canonical name, alias and listed spelling (for suggestions and docs)."""
        out = [s for m in self.metrics for s in (m.name, *m.aliases)]
        return [*out, *self.spellings]

    def lookup(self, name: str) -> ResolvedMetric | None:
        """Resolve ``name`` (without the task prefix), or return ``None`` if it is unknown."""
        for m in self.metrics:
            if name == m.name or name in m.aliases:
                return ResolvedMetric(m, m.name, name)
        if self.resolver is not None:
            return self.resolver(name)
        return None


class UnknownMetricError(UsageError, KeyError):
    """A metric or task name that resolves to nothing; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


_tasks: dict[str, TaskDef] = {}
_loaded: set[str] = set()


def _load(module: str) -> None:
    if module in _loaded:
        return
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        # a missing dependency of the provider is a real error; a missing engine is not
        if not (exc.name and (module == exc.name or module.startswith(exc.name + "."))):
            raise
        _loaded.add(module)  # engine not part of this build
        return
    for task in mod.TASKS:
        register(task)
    _loaded.add(module)


def register(task: TaskDef) -> None:
    """Add or replace a task definition (providers call this through their ``TASKS``)."""
    _tasks[task.name] = task


def all_tasks() -> list[TaskDef]:
    """Every available task, in runner order (then any registered extras, by name)."""
    for module in dict.fromkeys(TASK_PROVIDERS.values()):
        _load(module)
    order = list(TASK_PROVIDERS)
    return sorted(
        _tasks.values(),
        key=lambda t: (order.index(t.name) if t.name in order else len(order), t.name),
    )


def suggest(name: str, candidates: Iterable[str], *, n: int = 3) -> list[str]:
    """At most ``n`` close spellings of ``name`` among ``candidates`` (case-insensitive).

    >>> suggest("NDCG10", ["nDCG@10", "ndcg_cut.10", "map", "P@10"])
    ['nDCG@10', 'ndcg_cut.10']
    """
    import difflib  # only for a name that did not resolve: not on any command's start

    cands = list(dict.fromkeys(candidates))
    lowered: dict[str, str] = {}
    for c in cands:
        lowered.setdefault(c.lower(), c)
    keys = list(lowered)
    hits = difflib.get_close_matches(name.lower(), keys, n=n, cutoff=0.6)
    simplified = {k.replace("@", "").replace("_", "").replace(".", ""): k for k in keys}
    target = name.lower().replace("@", "").replace("_", "").replace(".", "")
    for h in difflib.get_close_matches(target, list(simplified), n=n, cutoff=0.8):
        if simplified[h] not in hits:
            hits.append(simplified[h])
    return [lowered[h] for h in hits[:n]]


def _did_you_mean(options: list[str]) -> str:
    if not options:
        return ""
    quoted = [f"'{o}'" for o in options]
    body = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"; did you mean {body}?"


def metric_record(m: MetricDef) -> dict[str, Any]:
    """One metric as a plain record (see :func:`metric_records`)."""
    return {
        "task": m.task,
        "name": m.name,
        "full_name": m.full_name,
        "aliases": list(m.aliases),
        "summary": m.summary,
        "reference": m.reference,
        "formula": m.formula,
        "citation": m.citation,
        "direction": m.direction,
        "range": list(m.range),
        "params": [p.__dict__ for p in m.params],
        "needs": sorted(m.needs),
        "extra": m.extra,
        "level": m.level,
    }


def metric_records(task: str | None = None) -> list[dict[str, Any]]:
    """Every metric of ``task`` (all tasks if ``None``) as a plain record: what
    ``ragmeter metrics --json`` prints and the MCP ``list_metrics`` tool returns. ``formula`` is
    what the code computes (plain text, notation in docs/metrics.md); ``citation`` the
    literature or standard it comes from; ``reference`` the implementation whose numbers it
    reproduces."""
    tasks = [get_task(task)] if task else all_tasks()
    return [metric_record(m) for t in tasks for m in t.metrics]


def get_task(name: str) -> TaskDef:
    """The task called ``name``; unknown names raise :class:`UnknownMetricError`."""
    if name in TASK_PROVIDERS:
        _load(TASK_PROVIDERS[name])
    if name not in _tasks:
        known = [t.name for t in all_tasks()] or list(TASK_PROVIDERS)
        if name in TASK_PROVIDERS:
            raise UnknownMetricError(f"task '{name}' is not available in this build of ragmeter")
        raise UnknownMetricError(
            f"unknown task '{name}' (expected one of {', '.join(known)})"
            + _did_you_mean(suggest(name, known))
        )
    return _tasks[name]


def split_name(full_name: str) -> tuple[str, str]:
    """Split ``task.metric`` at its first dot.

    >>> split_name("retrieval.ndcg_cut.10")
    ('retrieval', 'ndcg_cut.10')
    """
    task, dot, metric = full_name.partition(".")
    if not dot or not task or not metric:
        raise UnknownMetricError(
            f"'{full_name}' is not a task.metric name (expected e.g. retrieval.nDCG@10)"
        )
    return task, metric


def resolve(name: str, *, task: str | None = None) -> ResolvedMetric:
    """Resolve a metric name to its canonical entry.

    With ``task`` given, ``name`` is the metric inside that task; otherwise ``name`` is
    ``task.metric``. Unknown names raise :class:`UnknownMetricError` listing the closest valid
    names; a known name with bad parameters raises :class:`~ragmeter.errors.UsageError`.
    """
    if task is None:
        task, metric = split_name(name)
    else:
        metric = name
    tdef = get_task(task)
    hit = tdef.lookup(metric)
    if hit is None:
        raise UnknownMetricError(
            f"unknown {task} metric '{metric}'" + _did_you_mean(suggest(metric, tdef.names()))
        )
    return hit
