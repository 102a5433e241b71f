"""What one evaluation ran: each system (:class:`SystemRun`) and its tasks (:class:`TaskRun`).

Below both the pipeline that fills them and the
:class:`~ragmeter.runner.evaluation.EvaluationResult` that saves them, so that the two never
import each other and :func:`~ragmeter.runner.pipeline.run_pipeline` can name its return type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragmeter.result import Result
from ragmeter.runner.outputs import OutputFile
from ragmeter.store.records import SampleRecord

__all__ = ["SystemRun", "TaskRun"]


@dataclass
class TaskRun:
    """One task evaluated (or skipped) for one system."""

    system: str
    task: str
    status: str  # "ok" | "skipped"
    reason: str | None = None
    result: Result | None = None
    records: list[SampleRecord] = field(default_factory=list)
    input_hash: str | None = None
    reused: bool = False
    metrics: list[str] = field(default_factory=list)  # canonical names asked for
    requested: list[str] = field(default_factory=list)  # as written


@dataclass
class SystemRun:
    name: str
    run_id: str
    version: str | None
    tags: list[str]
    notes: str | None
    outputs: dict[str, OutputFile] = field(default_factory=dict)
    tasks: dict[str, TaskRun] = field(default_factory=dict)
    live: dict[str, Any] | None = None  # how a live system was called (docs/systems.md)
    calls: dict[str, dict[str, Any]] | None = None  # per method: calls, cache hits, errors, time
