"""The five methods a live system may have, documented as :class:`typing.Protocol` classes.

A system is any object with a subset of ``retrieve``, ``answer``, ``extract_entities``,
``classify`` and ``link``; each may be a plain method or ``async def``. The runner calls what
the configured tasks need and the system has (docs/systems.md):

=====================  ==================================================================
method                 tasks it enables
=====================  ==================================================================
``retrieve``           retrieval (and the contexts handed to ``answer``)
``answer``             answers, grounded, semantic, judge
``extract_entities``   ner
``classify``           classification
``link``               linking
=====================  ==================================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "METHODS",
    "METHOD_TASKS",
    "Answerer",
    "Classifier",
    "EntityExtractor",
    "Linker",
    "Retriever",
    "task_method",
]


@runtime_checkable
class Retriever(Protocol):
    """Ranks documents for a question."""

    def retrieve(self, question: str, *, k: int) -> Sequence[tuple[str, float]]:
        """The top ``k`` documents as ``(doc_id, score)`` pairs, best first.

        Doc ids are strings; scores are finite numbers (higher is better). A mapping
        ``{"id": ..., "score": ...}`` per document is accepted too.
        """
        ...


@runtime_checkable
class Answerer(Protocol):
    """Answers a question from retrieved contexts."""

    def answer(self, question: str, *, contexts: Sequence[Mapping[str, Any]]) -> str | Mapping:
        """The answer text, or ``{"answer": str | None, "citations"?: [doc ids],
        "contexts"?: [str | {"id"?, "text"}]}``.

        ``contexts`` are the documents ``retrieve`` returned (``{"id", "score", "text"?}``,
        text looked up in ``dataset.corpus``), or ``[]`` when the system does not retrieve.
        """
        ...


@runtime_checkable
class EntityExtractor(Protocol):
    """Finds entity mentions in a document."""

    def extract_entities(self, text: str) -> Sequence[Mapping[str, Any]]:
        """Mentions as ``{"start", "end", "type"}``: half-open code-point offsets into ``text``."""
        ...


@runtime_checkable
class Classifier(Protocol):
    """Assigns a type label to a document."""

    def classify(self, text: str) -> str | Mapping[str, Any]:
        """A label, or ``{"primary_type": str, "secondary_types"?: [str]}``."""
        ...


@runtime_checkable
class Linker(Protocol):
    """Links an entity mention to knowledge-base identifiers."""

    def link(self, mention: str, *, context: str) -> Sequence[Any] | Mapping[str, Any]:
        """Ranked candidates ``[{"kb_id", "score"?}]`` (or bare ids), or
        ``{"candidates": [...], "nil"?: bool}``; ``context`` is the mention's document."""
        ...


METHODS: tuple[str, ...] = ("retrieve", "answer", "extract_entities", "classify", "link")
"""Every protocol method, in the order the runner calls them."""

METHOD_TASKS: dict[str, tuple[str, ...]] = {
    "retrieve": ("retrieval",),
    "answer": ("answers", "grounded", "semantic", "judge"),
    "extract_entities": ("ner",),
    "classify": ("classification",),
    "link": ("linking",),
}
"""The runner tasks each method's outputs feed."""


def task_method(task: str) -> str | None:
    """The method whose outputs a task reads (``None``: no live method serves it, e.g. steps)."""
    return next((m for m, tasks in METHOD_TASKS.items() if task in tasks), None)
