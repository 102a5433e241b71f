"""The config file's schema: pydantic models for ``ragmeter.yaml`` and the resolved config.

``Config`` is what the file may say (unknown keys and wrong types are refused by pydantic);
``RunConfig`` is the validated result the runner works from; ``redact`` drops secrets before
the config is stored or shown. Checks across keys live in ``ragmeter.runner.config``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from ragmeter.errors import InputError
from ragmeter.io.jsonutil import dumps
from ragmeter.io.yamlmap import LineMap, format_path
from ragmeter.registry import ResolvedMetric
from ragmeter.runner.tasks import TaskOptions

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


class ExecutorConfig(_Model):
    """Where the tasks and comparisons run (docs/scaleout.md); flags and environment win."""

    kind: Literal["local", "dask"] | None = Field(
        None, description="local (in-process, the default) or dask."
    )
    workers: int | None = Field(
        None, ge=1, description="Start a local Dask cluster of this many worker processes."
    )
    scheduler: str | None = Field(
        None, description="An existing Dask scheduler: tcp://HOST:PORT or a scheduler file."
    )
    partitions: int | None = Field(None, ge=1, description="Number of shards (default: automatic).")
    worker_memory: str | None = Field(None, description="Memory limit per local worker, e.g. 2GiB.")
    work_dir: str | None = Field(
        None,
        description="Files for the workers and finished shards a re-run reuses "
        "(default .ragmeter/work; visible from every worker).",
    )
    keep_work: bool = Field(False, description="Keep the work dir after a successful run.")


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
    executor: ExecutorConfig | None = Field(
        None, description="Where tasks run: in-process (default) or on Dask (docs/scaleout.md)."
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
        # where a run executes never changes its numbers: runs on any executor share a hash
        public = {k: v for k, v in self.public_dict().items() if k != "executor"}
        return hashlib.sha256(dumps(public).encode()).hexdigest()


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
