"""ragmeter: exact, fast, offline-first evaluation of RAG, GraphRAG and question-answering agents.

Importing ``ragmeter`` is cheap: the public names below are loaded on first use, so that
``import ragmeter.retrieval`` (or ``ragmeter trec``) never pays for engines it does not use.
"""

from __future__ import annotations

import importlib
from typing import Any

from ragmeter._version import __version__

# public name -> (module, attribute); each engine adds its entry points here
_LAZY: dict[str, tuple[str, str]] = {
    "Result": ("ragmeter.result", "Result"),
    "Aggregate": ("ragmeter.result", "Aggregate"),
    "RagmeterWarning": ("ragmeter.warnings", "RagmeterWarning"),
    "InputError": ("ragmeter.errors", "InputError"),
    "UsageError": ("ragmeter.errors", "UsageError"),
    "MissingDependencyError": ("ragmeter.errors", "MissingDependencyError"),
    "evaluate": ("ragmeter.runner", "evaluate"),
    "compare": ("ragmeter.stats", "compare"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ragmeter' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
