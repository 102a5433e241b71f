"""The runner's config file (``ragmeter.yaml``, docs/runner.md), validated up front.

Everything is checked before anything is evaluated: unknown keys, wrong types, missing files,
unknown tasks and metric names (through the registry), gate rules, the baseline. Every error is
one line naming the file, the line and the key path, e.g.::

    ragmeter.yaml:14: taskz: unknown key (expected one of project, dataset, systems, tasks,
    stratify_by, compare, gates, judge, store); did you mean 'tasks'?

Paths in the file are relative to the file. ``store:`` is a URL; a relative SQLite path in it is
relative to the working directory, like ``--store`` and the default, so ``ragmeter runs`` finds
the same store from the same place.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from ragmeter import registry
from ragmeter.datasets.formats import FORMATS
from ragmeter.errors import InputError, UsageError
from ragmeter.io.jsonutil import dumps
from ragmeter.registry import ResolvedMetric, suggest
from ragmeter.runner.outputs import OUTPUT_KINDS
from ragmeter.runner.tasks import TaskOptions, get_adapter, task_names
from ragmeter.runner.yamlmap import LineMap, format_path, load_yaml

__all__ = [
    "CompareConfig",
    "Config",
    "GateRule",
    "RunConfig",
    "SystemConfig",
    "load_config",
]

SYSTEM_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DatasetConfig(_Model):
    """The gold standard."""

    path: str = Field(description="The gold file, relative to the config file.")
    format: Literal["ragmeter", "graphrag-eval", "ultrarag", "grounded", "trec"] = Field(
        "ragmeter", description="Its format; other formats are converted to gold samples."
    )
    split: str | None = Field(
        None, description="Evaluate this split only (a key of the manifest's splits)."
    )
    manifest: str | None = Field(
        None, description="The split manifest written by ragmeter split (needed with split)."
    )
    corpus: str | None = Field(
        None,
        description="Passages as JSONL {id, text, title?}: the contexts a live system's answer "
        "method receives are looked up here.",
    )
    on_offset_mismatch: Literal["error", "relocate", "skip"] = Field(
        "error",
        description="A span whose text[start:end] is not its mention: error, move it to the "
        "mention's only occurrence, or drop it (listed either way).",
    )


class OutputsConfig(_Model):
    """A system's output files (relative to the config file); give the ones you have."""

    run: str | None = Field(None, description="Retrieval run: TREC, or JSONL {qid, retrieved_ids}.")
    answers: str | None = Field(
        None, description="JSONL {id, answer, contexts?, citations?, retrieved_ids?} by qid."
    )
    traces: str | None = Field(
        None, description="graphrag-eval responses {question_id, actual_answer, actual_steps}."
    )
    entities: str | None = Field(
        None,
        description="JSONL {id, ner_annotations?, type_classification?, entity_linking?} "
        "by sample id.",
    )


class SystemConfig(_Model):
    """One system under test: its output files, or a live system ragmeter calls, or both."""

    name: str = Field(
        pattern=SYSTEM_NAME_PATTERN, description="Unique name (letters, digits, '.', '_', '-')."
    )
    version: str | None = Field(
        None, description="Free text, shown on trend charts; part of the call cache key."
    )
    outputs: OutputsConfig = Field(
        default_factory=OutputsConfig, description="Its output files (those it has)."
    )
    call: str | None = Field(
        None,
        description="A live system to call: import path package.module:attr (a class, a "
        "factory or an instance); see docs/systems.md.",
    )
    init: dict[str, Any] | None = Field(
        None, description="Keyword arguments for the class or factory that call names."
    )
    concurrency: int = Field(4, ge=1, le=1024, description="Calls in flight at once.")
    timeout_s: float = Field(60.0, gt=0, description="Seconds one call may take.")
    max_errors: int | None = Field(
        None,
        ge=0,
        description="Failed calls allowed before the run stops with exit 2 "
        "(default: 5% of the calls, at least 1).",
    )
    deterministic: bool = Field(
        True, description="false: the system's answers may vary; the call cache is still used."
    )
    complete: bool | None = Field(
        None,
        description="Retrieval: a gold query missing from this system's run scores 0 (true, "
        "trec_eval -c) or is left out (false); default: tasks.retrieval.complete.",
    )
    tags: list[str] = Field([], description="Tags stored with the run (filter with --tag).")
    notes: str | None = Field(None, description="Free text stored with the run.")


class CompareConfig(_Model):
    """Comparisons of every system with the baseline (docs/stats.md)."""

    baseline: str | None = Field(None, description="The system every other is compared with.")
    test: Literal["randomization", "t", "wilcoxon"] = Field(
        "randomization", description="Paired test on per-sample values."
    )
    ci: Literal["bca", "percentile"] | None = Field(
        None, description="Bootstrap CI of each difference (off by default)."
    )
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level.")
    correction: Literal["holm", "bonferroni", "bh", "by", "none"] = Field(
        "holm", description="Multiple-comparison correction over the family."
    )
    family: Literal["per_metric", "all"] = Field(
        "per_metric",
        description="per_metric: the systems compared on one metric; all: every system and metric.",
    )
    n_resamples: int = Field(9999, ge=99, description="Resamples of the randomization test.")
    seed: int = Field(42, description="Seed of every random procedure (recorded).")
    metrics: list[str] | None = Field(
        None,
        description="task.metric names to compare (default: every metric asked for, plus the "
        "no-regression metrics).",
    )


class ThresholdRule(_Model):
    """An absolute threshold on an aggregate."""

    metric: str = Field(description="task.metric, e.g. retrieval.nDCG@10.")
    min: float | None = Field(
        None, allow_inf_nan=False, description="The value must be >= min (unrounded)."
    )
    max: float | None = Field(
        None, allow_inf_nan=False, description="The value must be <= max (unrounded)."
    )
    systems: list[str] | None = Field(
        None, description="Only these systems (default: gates.systems)."
    )


class NoRegressionBody(_Model):
    """The metric must not be significantly worse than the baseline's."""

    baseline: str | None = Field(
        None, description="System to compare with (default: compare.baseline)."
    )
    metrics: list[str] = Field(min_length=1, description="task.metric names.")
    alpha: float | None = Field(None, gt=0, lt=1, description="Default: compare.alpha.")


class NoRegressionRule(_Model):
    """A no-significant-regression rule."""

    no_regression: NoRegressionBody = Field(description="baseline, metrics, alpha.")
    systems: list[str] | None = Field(
        None, description="Only these systems (default: gates.systems)."
    )


def _rule_kind(value: Any) -> str:
    if isinstance(value, Mapping) and "no_regression" in value:
        return "no_regression"
    return "threshold"


Rule = Annotated[
    Annotated[ThresholdRule, Tag("threshold")] | Annotated[NoRegressionRule, Tag("no_regression")],
    Discriminator(_rule_kind),
]


class GatesConfig(_Model):
    """Release gates (docs/runner.md)."""

    profile: str | list[str] | None = Field(
        None, description="Built-in rule set(s): heritage, grounded."
    )
    rules: list[Rule] = Field([], description="{metric, min|max} or {no_regression: {...}} rules.")
    strict: bool = Field(False, description="SKIP (no value) counts as FAIL.")
    systems: list[str] | None = Field(None, description="Gate only these systems (default: all).")


class Config(_Model):
    """A ragmeter.yaml."""

    project: str = Field(min_length=1, description="Groups runs in the store.")
    dataset: DatasetConfig = Field(description="The gold standard.")
    systems: list[SystemConfig] = Field(min_length=1, description="One or more systems.")
    tasks: dict[str, Any] = Field({}, description="Task name → options; omit a task to skip it.")
    stratify_by: list[str] = Field([], description="Strata factors for per-stratum breakdowns.")
    compare: CompareConfig | None = Field(None, description="Comparisons with the baseline.")
    gates: GatesConfig | None = Field(None, description="Release gates.")
    judge: dict[str, Any] | None = Field(
        None, description="LLM judge endpoint settings (docs/judge.md); no API keys."
    )
    store: str | None = Field(
        None, description="Results store URL (default sqlite:///.ragmeter/ragmeter.db)."
    )


TOP_KEYS = tuple(Config.model_fields)


@dataclass(frozen=True)
class GateRule:
    """One gate rule, resolved: ``kind`` is min, max or no_regression."""

    kind: str
    metric: str  # task.metric as written
    task: str
    canonical: str | None  # None when the task's engine is not in this build
    threshold: float | None = None
    baseline: str | None = None  # system name, for no_regression
    alpha: float | None = None
    systems: tuple[str, ...] | None = None
    source: str = "rules"  # "rules" or "profile:<name>"
    direction: str = "higher"
    level: str = "sample"

    @property
    def text(self) -> str:
        if self.kind == "min":
            return f"{self.metric} >= {self.threshold:g}"
        if self.kind == "max":
            return f"{self.metric} <= {self.threshold:g}"
        return f"{self.metric} no regression vs {self.baseline or 'baseline'}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "metric": self.metric,
            "threshold": self.threshold,
            "baseline": self.baseline,
            "alpha": self.alpha,
            "systems": list(self.systems) if self.systems is not None else None,
            "source": self.source,
        }


@dataclass
class RunConfig:
    """A validated config: the model, resolved tasks and rules, and where keys were written."""

    model: Config
    data: dict[str, Any]
    path: str | None
    base_dir: Path
    lines: LineMap
    tasks: dict[str, TaskOptions] = field(default_factory=dict)
    metrics: dict[str, list[ResolvedMetric]] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    rules: list[GateRule] = field(default_factory=list)
    compare_metrics: list[ResolvedMetric] | None = None

    @property
    def project(self) -> str:
        return self.model.project

    @property
    def systems(self) -> list[SystemConfig]:
        return list(self.model.systems)

    @property
    def baseline(self) -> str | None:
        if self.model.compare and self.model.compare.baseline:
            return self.model.compare.baseline
        return None

    @property
    def system_names(self) -> list[str]:
        return [s.name for s in self.model.systems]

    @property
    def strict_gates(self) -> bool:
        return bool(self.model.gates and self.model.gates.strict)

    def error(self, path: Sequence[str | int], message: str) -> InputError:
        """An InputError at a key path of this config."""
        return InputError(
            message,
            path=self.path,
            line=self.lines.line(path) if self.path else None,
            location=format_path(path) if path else None,
        )

    def resolve_path(self, value: str) -> Path:
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else self.base_dir / p

    def public_dict(self) -> dict[str, Any]:
        """The config as written, minus anything secret (store password, URL credentials)."""
        return redact(self.data)

    @property
    def hash(self) -> str:
        return hashlib.sha256(dumps(self.public_dict()).encode()).hexdigest()


# -- secrets ------------------------------------------------------------------------------------

_SECRET_WORDS = ("api_key", "apikey", "password", "secret", "token", "authorization")


def _redact_url(value: str) -> str:
    """``postgresql://user:pw@host/db`` → ``postgresql://***@host/db``; a credential in the
    query string (``?api-key=...``, ``?key=``, ``?token=``) → ``***``."""
    from ragmeter.judge.secrets import mask_url

    return mask_url(value)


def redact(data: Any, key: str = "") -> Any:
    """Drop values of secret-looking keys and credentials inside URLs, recursively."""
    if isinstance(data, Mapping):
        out = {}
        for k, v in data.items():
            lowered = str(k).lower()
            if any(w in lowered for w in _SECRET_WORDS) and not lowered.endswith("_env"):
                out[k] = "***"
            else:
                out[k] = redact(v, str(k))
        return out
    if isinstance(data, list):
        return [redact(v, key) for v in data]
    if isinstance(data, str):
        return _redact_url(data)
    return data


# -- pydantic errors as one line ----------------------------------------------------------------

_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _clean_loc(loc: Sequence[Any]) -> tuple[str | int, ...]:
    out: list[str | int] = []
    for i, part in enumerate(loc):
        # the rule union adds its tag to the location: rules[0].threshold.metric -> rules[0].metric
        if (
            part in ("threshold", "no_regression")
            and i > 0
            and isinstance(loc[i - 1], int)
            and len(out) >= 2
            and out[-2] == "rules"
        ):
            continue
        out.append(part)
    return tuple(out)


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str] | None:
    """The keys allowed at the mapping that holds ``loc[-1]``."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            if part in ("threshold",):
                current = ThresholdRule
                continue
            if part == "no_regression" and current is GatesConfig:
                current = NoRegressionRule
                continue
            return None
        annotation = fields[part].annotation
        current = _model_of(annotation)
        if current is None:
            return None
    fields = getattr(current, "model_fields", None)
    return list(fields) if fields else None


def _model_of(annotation: Any) -> Any:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _message(err: Mapping[str, Any], model: type[BaseModel], source: str | None = None) -> str:
    """The one-line message of a pydantic error; ``source`` is the value's text as written in
    the YAML file, when known (a hint quotes it: ``3.10``, not the number 3.1 YAML made of it)."""
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, err["loc"]) or []
        did = suggest(str(err["loc"][-1]), allowed, n=1)
        tail = f"; did you mean '{did[0]}'?" if did else ""
        return f"unknown key (expected one of {', '.join(allowed)}){tail}"
    if kind == "missing":
        return "missing (a required key)"
    if kind == "literal_error":
        return f"{value!r} is not allowed (expected {ctx.get('expected')})"
    if kind in _TYPE_WORDS:
        expected = _TYPE_WORDS[kind]
        hint = ""
        if (
            kind == "string_type"
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            hint = f'; quote it: "{source}"' if source else "; quote it"
        return f"is {_kind(value)} (expected {expected}{hint})"
    if kind == "string_pattern_mismatch":
        return (
            f"{value!r} is not a valid name (expected letters, digits, '.', '_' or '-', "
            "starting with a letter or digit)"
        )
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"{value!r} is out of range ({err['msg'].lower()})"
    if kind in ("too_short",):
        return f"is empty (expected at least {ctx.get('min_length', 1)} item)"
    if kind == "union_tag_invalid":
        return "is not a rule (expected {metric, min|max} or {no_regression: {metrics}})"
    return err["msg"]


def _validate_model(data: Any, lines: LineMap, path: str | None) -> Config:
    if not isinstance(data, dict):
        raise InputError(
            f"is {_kind(data)} (expected a mapping with keys {', '.join(TOP_KEYS)})",
            path=path or "config",
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = _clean_loc(err["loc"])
            errors.append((lines.line(loc) or 0, loc, err))
        # the first problem in file order
        line, loc, err = min(errors, key=lambda e: (e[0], len(e[1])))
        raise InputError(
            _message(err, Config, lines.text(loc)),
            path=path,
            line=line if path else None,
            location=format_path(loc) if loc else None,
        ) from None


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
    from ragmeter.runner.gates import PROFILES

    default_systems = tuple(gates.systems) if gates.systems is not None else None
    if gates.systems is not None:
        _scope_systems(scope, ("gates", "systems"), gates.systems)
    profiles = [gates.profile] if isinstance(gates.profile, str) else list(gates.profile or [])
    rules: list[GateRule] = []
    for j, profile in enumerate(profiles):
        keypath = (
            ("gates", "profile") if isinstance(gates.profile, str) else ("gates", "profile", j)
        )
        if profile not in PROFILES:
            did = suggest(profile, list(PROFILES), n=1)
            raise scope.error(
                keypath,
                f"unknown gate profile '{profile}' (expected one of {', '.join(PROFILES)})"
                + (f"; did you mean '{did[0]}'?" if did else ""),
            )
        for kind, metric, threshold in PROFILES[profile]:
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
