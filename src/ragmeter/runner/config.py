"""The runner's config file (``ragmeter.yaml``, docs/runner.md), validated up front.

Everything is checked before anything is evaluated: unknown keys, wrong types, missing files,
unknown tasks and metric names (through the registry), gate rules, the baseline. Every error is
one line naming the file, the line and the key path, e.g.::

    ragmeter.yaml:14: taskz: unknown key (expected one of project, dataset, systems, tasks,
    stratify_by, compare, gates, judge, store, executor); did you mean 'tasks'?

Paths in the file are relative to the file. ``store:`` is a URL; a relative SQLite path in it is
relative to the working directory, like ``--store`` and the default, so ``ragmeter runs`` finds
the same store from the same place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter import registry
from ragmeter.datasets.formats import FORMATS
from ragmeter.errors import InputError, UsageError
from ragmeter.io.yamlmap import LineMap, load_yaml
from ragmeter.registry import suggest
from ragmeter.runner.config_messages import _clean_loc, _kind, _message, _validate_model
from ragmeter.runner.config_models import (
    SYSTEM_NAME_PATTERN,
    TOP_KEYS,
    CompareConfig,
    Config,
    DatasetConfig,
    GateRule,
    GatesConfig,
    NoRegressionBody,
    NoRegressionRule,
    OutputsConfig,
    Rule,
    RunConfig,
    SystemConfig,
    ThresholdRule,
    redact,
)
from ragmeter.runner.outputs import OUTPUT_KINDS
from ragmeter.runner.tasks import TaskOptions, get_adapter, task_names

# The schema and the one-line error messages live in sibling modules; their names stay
# importable from here, where callers have always found them.
__all__ = [
    "SYSTEM_NAME_PATTERN",
    "TOP_KEYS",
    "CompareConfig",
    "Config",
    "DatasetConfig",
    "GateRule",
    "GatesConfig",
    "NoRegressionBody",
    "NoRegressionRule",
    "OutputsConfig",
    "Rule",
    "RunConfig",
    "SystemConfig",
    "ThresholdRule",
    "build_rules",
    "load_config",
    "parse_gates",
    "redact",
    "resolve_task_metrics",
]

# -- semantic checks ----------------------------------------------------------------------------


def _check_file(cfg: RunConfig, keypath: Sequence[str | int], value: str, what: str) -> None:
    resolved = cfg.resolve_path(value)
    if not resolved.exists():
        raise cfg.error(keypath, f"{what} not found: {value} (resolved to {resolved})")
    if resolved.is_dir():
        raise cfg.error(keypath, f"{what} is a directory: {value} (expected a file)")


def _check_systems(cfg: RunConfig, live: set[str] = frozenset()) -> None:
    seen: dict[str, int] = {}
    for i, system in enumerate(cfg.model.systems):
        if system.name in seen:
            raise cfg.error(
                ("systems", i, "name"),
                f"system name '{system.name}' is used twice "
                f"(first as systems[{seen[system.name]}])",
            )
        seen[system.name] = i
        given = {k: v for k, v in system.outputs.model_dump().items() if v is not None}
        if not given and system.call is None and system.name not in live:
            raise cfg.error(
                ("systems", i, "outputs") if "outputs" in _written(cfg, i) else ("systems", i),
                f"no output files and no call (expected outputs with at least one of "
                f"{', '.join(OUTPUT_KINDS)}, or call: package.module:attr)",
            )
        if system.call is None and system.name not in live:
            for key in ("init", "concurrency", "timeout_s", "max_errors", "deterministic"):
                if key in _written(cfg, i):
                    raise cfg.error(
                        ("systems", i, key), "applies to live systems only (expected call: too)"
                    )
        for kind, value in given.items():
            _check_file(cfg, ("systems", i, "outputs", kind), value, "file")


def _written(cfg: RunConfig, i: int) -> set[str]:
    """The keys written in the file for ``systems[i]``."""
    systems = cfg.data.get("systems") if isinstance(cfg.data, Mapping) else None
    entry = systems[i] if isinstance(systems, list) and i < len(systems) else None
    return set(entry) if isinstance(entry, Mapping) else set()


def _check_tasks(cfg: RunConfig) -> None:
    known = task_names()
    for task, block in cfg.model.tasks.items():
        keypath = ("tasks", task)
        if task not in known:
            did = suggest(task, known, n=1)
            raise cfg.error(
                keypath,
                f"unknown task (expected one of {', '.join(known)})"
                + (f"; did you mean '{did[0]}'?" if did else ""),
            )
        adapter = get_adapter(task)
        if block is None:
            block = {}
        if not isinstance(block, dict):
            raise cfg.error(keypath, f"is {_kind(block)} (expected a mapping of task options)")
        try:
            options = adapter.options.model_validate(block)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = (*keypath, *err["loc"])
            if err["type"] == "extra_forbidden":
                allowed = list(adapter.options.model_fields)
                did = suggest(str(err["loc"][-1]), allowed, n=1)
                message = f"unknown key (expected one of {', '.join(allowed)})" + (
                    f"; did you mean '{did[0]}'?" if did else ""
                )
            else:
                message = _message(err, adapter.options, cfg.lines.text(loc))
            raise cfg.error(loc, message) from None
        cfg.tasks[task] = options
    # runner order, whatever order the file used
    cfg.tasks = {t: cfg.tasks[t] for t in known if t in cfg.tasks}


def resolve_task_metrics(cfg: RunConfig) -> None:
    """Resolve each task's metric names through the registry (tasks whose engine is here)."""
    for task, options in cfg.tasks.items():
        adapter = get_adapter(task)
        reason = adapter.unavailable()
        if reason is not None and "not part of this build" in reason:
            cfg.unavailable[task] = reason
            continue
        if reason is not None:
            cfg.unavailable[task] = reason
        names = options.metric_names()
        field_name = _written_key(cfg.data, task, options, "metrics")
        noun = "measure" if field_name == "measures" else "metric"
        expected = f"expected a {task} {noun}; see ragmeter metrics {task}"
        if names is None:
            try:
                names = adapter.default_metrics(options)
            except registry.UnknownMetricError as exc:
                cfg.unavailable[task] = str(exc)
                continue
            cfg.metrics[task] = adapter.resolve(names)
            continue
        if not names:
            raise cfg.error(("tasks", task, field_name), "is empty (expected metric names)")
        resolved = []
        for j, name in enumerate(names):
            try:
                resolved.extend(adapter.resolve([name]))
            except registry.UnknownMetricError:
                did = suggest(str(name), registry.get_task(task).names(), n=1)
                raise cfg.error(
                    ("tasks", task, field_name, j),
                    f"unknown {task} {noun} '{name}' ({expected})"
                    + (f"; did you mean '{did[0]}'?" if did else ""),
                ) from None
            except UsageError as exc:
                raise cfg.error(("tasks", task, field_name, j), exc.message) from None
        cfg.metrics[task] = resolved


def _written_key(data: Any, task: str, options: TaskOptions, field_name: str) -> str:
    """The key the file used for ``field_name`` of a task block: the field or one of its aliases
    (``measures`` for retrieval's ``metrics``), so errors name what the user wrote."""
    info = type(options).model_fields.get(field_name)
    choices = [field_name]
    alias = getattr(info, "validation_alias", None)
    if alias is not None:
        choices = [c for c in getattr(alias, "choices", [alias]) if isinstance(c, str)]
    block = data.get("tasks", {}).get(task) if isinstance(data, Mapping) else None
    if isinstance(block, Mapping):
        for key in choices:
            if key in block:
                return key
    return field_name


def _resolve_rule_metric(
    cfg: Any, keypath: Sequence[str | int], name: str
) -> tuple[str, str | None, str, str]:
    """(task, canonical or None, direction, level) of a ``task.metric`` name in a gate rule."""
    try:
        task, _ = registry.split_name(name)
    except UsageError as exc:
        raise cfg.error(keypath, exc.message) from None
    known = task_names()
    if task not in known:
        did = suggest(task, known, n=1)
        raise cfg.error(
            keypath,
            f"unknown task '{task}' in '{name}' (expected one of {', '.join(known)})"
            + (f"; did you mean '{did[0]}'?" if did else ""),
        )
    try:
        registry.get_task(task)
    except registry.UnknownMetricError:
        return task, None, "higher", "sample"  # engine not in this build: the rule will SKIP
    try:
        hit = registry.resolve(name)
    except UsageError as exc:
        raise cfg.error(keypath, exc.message) from None
    return task, hit.canonical, hit.definition.direction, hit.definition.level


def _check_compare(cfg: RunConfig) -> None:
    compare = cfg.model.compare
    if compare is None:
        return
    if compare.baseline is not None:
        _scope_systems(cfg, ("compare", "baseline"), compare.baseline)
    if compare.metrics is not None:
        cfg.compare_metrics = []
        for j, name in enumerate(compare.metrics):
            _, canonical, _, _ = _resolve_rule_metric(cfg, ("compare", "metrics", j), name)
            if canonical is not None:
                cfg.compare_metrics.append(registry.resolve(name))


class RuleScope:
    """What gate rules are checked against: the systems, the baseline, where errors point."""

    def __init__(
        self,
        systems: Sequence[str],
        baseline: str | None,
        error: Any,
    ) -> None:
        self.system_names = list(systems)
        self.baseline = baseline
        self.error = error


def _scope_systems(scope: Any, keypath: Sequence[str | int], names: Sequence[str] | str) -> None:
    known = scope.system_names
    single = isinstance(names, str)
    for j, name in enumerate([names] if single else names):
        if name not in known:
            did = suggest(name, known, n=1)
            raise scope.error(
                tuple(keypath) if single else (*keypath, j),
                f"unknown system '{name}' (expected one of {', '.join(known)})"
                + (f"; did you mean '{did[0]}'?" if did else ""),
            )


def build_rules(scope: Any, gates: GatesConfig | None) -> list[GateRule]:
    """Resolve a ``gates`` block into rules (profiles first, then the rules, in order)."""
    if gates is None:
        return []
    from ragmeter.runner.gates import GATE_PROFILES

    default_systems = tuple(gates.systems) if gates.systems is not None else None
    if gates.systems is not None:
        _scope_systems(scope, ("gates", "systems"), gates.systems)
    profiles = [gates.profile] if isinstance(gates.profile, str) else list(gates.profile or [])
    rules: list[GateRule] = []
    for j, profile in enumerate(profiles):
        keypath = (
            ("gates", "profile") if isinstance(gates.profile, str) else ("gates", "profile", j)
        )
        if profile not in GATE_PROFILES:
            did = suggest(profile, list(GATE_PROFILES), n=1)
            raise scope.error(
                keypath,
                f"unknown gate profile '{profile}' (expected one of {', '.join(GATE_PROFILES)})"
                + (f"; did you mean '{did[0]}'?" if did else ""),
            )
        for kind, metric, threshold in GATE_PROFILES[profile]:
            task, canonical, direction, level = _resolve_rule_metric(scope, keypath, metric)
            rules.append(
                GateRule(
                    kind,
                    metric,
                    task,
                    canonical,
                    threshold,
                    systems=default_systems,
                    source=f"profile:{profile}",
                    direction=direction,
                    level=level,
                )
            )
    for j, rule in enumerate(gates.rules):
        keypath: tuple[str | int, ...] = ("gates", "rules", j)
        systems = default_systems
        if rule.systems is not None:
            _scope_systems(scope, (*keypath, "systems"), rule.systems)
            systems = tuple(rule.systems)
        if isinstance(rule, ThresholdRule):
            if rule.min is None and rule.max is None:
                raise scope.error(keypath, "has neither min nor max (expected a threshold)")
            if rule.min is not None and rule.max is not None and rule.min > rule.max:
                raise scope.error(keypath, f"min {rule.min:g} is above max {rule.max:g}")
            task, canonical, direction, level = _resolve_rule_metric(
                scope, (*keypath, "metric"), rule.metric
            )
            for kind, threshold in (("min", rule.min), ("max", rule.max)):
                if threshold is not None:
                    rules.append(
                        GateRule(
                            kind,
                            rule.metric,
                            task,
                            canonical,
                            threshold,
                            systems=systems,
                            direction=direction,
                            level=level,
                        )
                    )
            continue
        body = rule.no_regression
        baseline = body.baseline or scope.baseline
        if baseline is None:
            raise scope.error(
                (*keypath, "no_regression"),
                "has no baseline (expected no_regression.baseline or compare.baseline)",
            )
        _scope_systems(scope, (*keypath, "no_regression", "baseline"), baseline)
        for k, name in enumerate(body.metrics):
            task, canonical, direction, level = _resolve_rule_metric(
                scope, (*keypath, "no_regression", "metrics", k), name
            )
            rules.append(
                GateRule(
                    "no_regression",
                    name,
                    task,
                    canonical,
                    baseline=baseline,
                    alpha=body.alpha,
                    systems=systems,
                    direction=direction,
                    level=level,
                )
            )
    return rules


def parse_gates(data: Any, scope: Any) -> GatesConfig:
    """Validate a ``gates`` block given as a dict (``ragmeter gate``, ``Result.gate``)."""
    try:
        return GatesConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ("gates", *_clean_loc(err["loc"]))
        raise scope.error(loc, _message(err, GatesConfig)) from None


def _check_dataset(cfg: RunConfig) -> None:
    ds = cfg.model.dataset
    _check_file(cfg, ("dataset", "path"), ds.path, "dataset")
    if ds.split is not None and ds.manifest is None:
        raise cfg.error(
            ("dataset", "split"),
            "needs a split manifest (expected dataset.manifest, written by ragmeter split)",
        )
    if ds.manifest is not None:
        _check_file(cfg, ("dataset", "manifest"), ds.manifest, "split manifest")
    if ds.corpus is not None:
        _check_file(cfg, ("dataset", "corpus"), ds.corpus, "corpus")
    if ds.format not in FORMATS:  # pragma: no cover - the Literal already says so
        raise cfg.error(("dataset", "format"), f"unknown format {ds.format!r}")


def _check_judge(cfg: RunConfig) -> None:
    """The ``judge:`` block, validated by the judge engine (docs/judge.md) when it is installed."""
    block = cfg.model.judge
    if block is None:
        return
    if "api_key" in block:
        raise cfg.error(
            ("judge", "api_key"),
            "API keys never go in the config (expected api_key_env: the NAME of an "
            "environment variable that holds the key)",
        )
    try:
        from ragmeter.judge.config import config_from_mapping
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ragmeter.judge"):
            return  # the judge task is skipped anyway; nothing reads the block
        raise
    lines = {
        tuple(str(p) for p in path): line
        for path, line in cfg.lines.lines.items()
        if path[:1] == ("judge",)
    }
    config_from_mapping(block, path=cfg.path, lines=lines, prefix=("judge",))


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    live: Sequence[str] = (),
) -> RunConfig:
    """Read and validate a config file, or a dict with the same keys (Python API).

    Paths in a dict are relative to ``base_dir`` (default: the working directory). ``live``
    names systems handed in as Python objects (they need neither outputs nor call).
    """
    if isinstance(source, Mapping):
        data, lines, path = dict(source), LineMap(), None
        base = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        path = os.fspath(source)
        if not os.path.exists(path):
            raise InputError("cannot read (no such file)", path=path)
        data, lines = load_yaml(path)
        base = Path(path).resolve().parent if base_dir is None else Path(base_dir)
    model = _validate_model(data, lines, path)
    cfg = RunConfig(model=model, data=data, path=path, base_dir=base, lines=lines)
    _check_dataset(cfg)
    _check_systems(cfg, set(live))
    _check_tasks(cfg)
    if not cfg.tasks:
        raise cfg.error(
            ("tasks",), f"no tasks (expected at least one of {', '.join(task_names())})"
        )
    _check_judge(cfg)
    resolve_task_metrics(cfg)
    _check_compare(cfg)
    cfg.rules = build_rules(cfg, model.gates)
    if model.stratify_by and len(set(model.stratify_by)) != len(model.stratify_by):
        raise cfg.error(("stratify_by",), "lists a factor twice")
    return cfg
