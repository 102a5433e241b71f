"""Live systems: the runner calls the system under test (docs/systems.md).

A system named in ``ragmeter.yaml`` by ``call: package.module:attr`` (or handed to
:func:`ragmeter.evaluate` as ``systems={name: obj}``) has any of five methods, sync or async:
:class:`Retriever`, :class:`Answerer`, :class:`EntityExtractor`, :class:`Classifier` and
:class:`Linker`. Every call is cached in SQLite as it returns, its outputs are written as the
files the runner reads, and failed calls become ``system_error`` rows.

>>> from ragmeter.systems import Retriever
>>> class Fixed:
...     def retrieve(self, question, *, k):
...         return [("d1", 2.0), ("d2", 1.0)][:k]
>>> isinstance(Fixed(), Retriever)
True
"""

from __future__ import annotations

from ragmeter.systems.cache import DEFAULT_SYSTEMS_CACHE, CallCache
from ragmeter.systems.protocol import (
    METHOD_TASKS,
    METHODS,
    Answerer,
    Classifier,
    EntityExtractor,
    Linker,
    Retriever,
)

__all__ = [
    "DEFAULT_SYSTEMS_CACHE",
    "METHODS",
    "METHOD_TASKS",
    "Answerer",
    "CallCache",
    "Classifier",
    "EntityExtractor",
    "Linker",
    "Retriever",
]
