"""Task adapters, one module per runner task: ``ragmeter.runner.tasks.<task>``.

The task names are the registry's (:data:`ragmeter.registry.TASK_PROVIDERS`); this package keeps
no list of its own.
"""

from __future__ import annotations

import importlib

from ragmeter.registry import TASK_PROVIDERS, get_task
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions, TaskSkipped

__all__ = [
    "TaskAdapter",
    "TaskContext",
    "TaskOptions",
    "TaskSkipped",
    "get_adapter",
    "register_adapter",
    "task_names",
]

_registered: dict[str, TaskAdapter] = {}


def register_adapter(adapter: TaskAdapter) -> None:
    """Add an adapter for a task registered outside the built-in providers (plugins, tests)."""
    _registered[adapter.name] = adapter


def unregister_adapter(name: str) -> None:
    _registered.pop(name, None)


def task_names() -> list[str]:
    """Every runner task, in runner order (built-in tasks, then registered ones)."""
    built_in = [t for t in TASK_PROVIDERS if get_task(t).runner]
    return [*built_in, *sorted(set(_registered) - set(TASK_PROVIDERS))]


def get_adapter(task: str) -> TaskAdapter:
    """The adapter of ``task`` (a registry task name)."""
    if task in _registered:
        return _registered[task]
    if task not in TASK_PROVIDERS or not get_task(task).runner:
        raise KeyError(task)
    module = importlib.import_module(f"ragmeter.runner.tasks.{task}")
    return module.ADAPTER
