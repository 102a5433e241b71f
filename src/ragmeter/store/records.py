"""What the runner hands to the store: one :class:`RunRecord` per system of an evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ragmeter.result import Result

__all__ = ["RunRecord", "SampleRecord", "TaskRecord"]


@dataclass
class SampleRecord:
    """Enough of one unit's inputs, gold and outputs for the dashboard's sample page."""

    sample_id: str
    gold_id: str | None
    strata: Mapping[str, Any]
    record: Mapping[str, Any]


@dataclass
class TaskRecord:
    """One task of one run: its Result (``None`` when skipped) and how it was obtained."""

    task: str
    status: str  # "ok" | "skipped"
    reason: str | None = None
    input_hash: str | None = None
    reused: bool = False
    metrics: Sequence[str] = ()
    result: Result | None = None
    records: Sequence[SampleRecord] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    warnings: Sequence[str] = ()


@dataclass
class RunRecord:
    """One system evaluated by one ``ragmeter run`` invocation."""

    id: str
    evaluation_id: str
    project: str
    system: str
    created_at: datetime  # UTC
    config_hash: str
    system_version: str | None = None
    finished_at: datetime | None = None
    dataset_hash: str | None = None
    dataset_path: str | None = None
    dataset_split: str | None = None
    n_samples: int | None = None
    gate_status: str | None = None
    is_baseline: bool = False
    baseline_run_id: str | None = None
    tags: Sequence[str] = ()
    notes: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tasks: Sequence[TaskRecord] = ()
    comparisons: Sequence[Mapping[str, Any]] = ()
    gates: Sequence[Mapping[str, Any]] = ()
