"""The data model: documents, spans and corpora (docs/extraction.md#data-model-and-validation).

Offsets are half-open ``[start, end)`` and count Unicode code points (Python ``str`` indices).
Scoring identity is ``(doc_id, start, end, label)`` for NER and ``mention_id`` (default
``"doc_id:start-end"``) for entity linking.

>>> s = Span("doc1", 4, 25, "GRP.HER.MUS", text="Rijksmuseum Amsterdam", kb_ids={"wd:Q190804"})
>>> s.mention_id, sorted(s.kb_ids)
('doc1:4-25', ['Q190804'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.records.kbids import canonical_kb_id

__all__ = ["Corpus", "Document", "Span"]


@dataclass(frozen=True)
class Document:
    """A document: its id, its text (exactly as read, never normalized) and free metadata."""

    doc_id: str
    text: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.doc_id, str) or not self.doc_id:
            raise InputError(f"document id {self.doc_id!r} is not a non-empty string")
        if not isinstance(self.text, str):
            raise InputError(
                f"text is a {type(self.text).__name__} (expected a string)",
                location=f"document '{self.doc_id}'",
            )


def _check_int(value: object, what: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        # numpy integers are fine; floats, strings and booleans are not
        try:
            import numpy as np

            if isinstance(value, np.integer):
                return int(value)
        except ImportError:  # pragma: no cover - numpy is a core dependency
            pass
        raise InputError(f"{what} is {value!r} (expected an integer offset)", location=where)
    return value


@dataclass(frozen=True)
class Span:
    """An annotated span (entity mention) of one document.

    ``fragments`` holds the pieces of a discontinuous (BRAT) span; ``start``/``end`` are then
    the first start and the last end. ``kb_ids`` is the set of acceptable canonical KB ids
    (docs/extraction.md#data-model-and-validation); ``nil=True`` marks a mention known not to be in
    the KB and excludes ``kb_ids``.
    """

    doc_id: str
    start: int
    end: int
    label: str
    text: str | None = None
    fragments: tuple[tuple[int, int], ...] | None = None
    kb_ids: frozenset[str] = frozenset()
    nil: bool = False
    identifiers: Mapping[str, str] = field(default_factory=dict)
    mention_id: str | None = None
    attributes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"document '{self.doc_id}'"
        if not isinstance(self.doc_id, str) or not self.doc_id:
            raise InputError(f"span document id {self.doc_id!r} is not a non-empty string")
        object.__setattr__(self, "start", _check_int(self.start, "start", where))
        object.__setattr__(self, "end", _check_int(self.end, "end", where))
        if not isinstance(self.label, str) or not self.label:
            raise InputError(
                f"span {self.start}-{self.end} has label {self.label!r} (expected a non-empty "
                "string)",
                location=where,
            )
        if self.text is not None and not isinstance(self.text, str):
            raise InputError(
                f"span {self.start}-{self.end} has text {self.text!r} (expected a string)",
                location=where,
            )
        if self.fragments is not None:
            frags = tuple(
                (_check_int(a, "fragment start", where), _check_int(b, "fragment end", where))
                for a, b in self.fragments
            )
            object.__setattr__(self, "fragments", frags)
        kb = frozenset(
            c for c in (canonical_kb_id(k) for k in (self.kb_ids or ())) if c is not None
        )
        object.__setattr__(self, "kb_ids", kb)
        if self.nil and kb:
            raise InputError(
                f"span {self.start}-{self.end} is marked NIL and has KB ids "
                f"{', '.join(sorted(kb))} (expected one or the other)",
                location=where,
            )
        object.__setattr__(self, "nil", bool(self.nil))
        object.__setattr__(self, "identifiers", dict(self.identifiers or {}))
        object.__setattr__(self, "attributes", dict(self.attributes or {}))
        if self.mention_id is None:
            object.__setattr__(self, "mention_id", f"{self.doc_id}:{self.start}-{self.end}")

    def __hash__(self) -> int:
        return hash((self.doc_id, self.start, self.end, self.label))

    @property
    def key(self) -> tuple[str, int, int, str]:
        """The NER scoring identity ``(doc_id, start, end, label)``."""
        return (self.doc_id, self.start, self.end, self.label)

    @property
    def pieces(self) -> tuple[tuple[int, int], ...]:
        """The fragments, or the single ``(start, end)`` of a continuous span."""
        return self.fragments if self.fragments else ((self.start, self.end),)

    def surface(self, text: str) -> str:
        """The text this span covers; fragments are joined by one space (BRAT's convention)."""
        return " ".join(text[a:b] for a, b in self.pieces)

    def replace(self, **changes: Any) -> Span:
        """A copy with ``changes``; a changed offset resets a default ``mention_id``."""
        values = {f: getattr(self, f) for f in self.__dataclass_fields__}
        moved = ("start" in changes or "end" in changes) and "mention_id" not in changes
        if moved and self.mention_id == f"{self.doc_id}:{self.start}-{self.end}":
            values["mention_id"] = None
        values.update(changes)
        return Span(**values)


@dataclass
class Corpus:
    """Documents and their spans, both keyed by ``doc_id``.

    Every document of ``documents`` has an entry in ``spans`` (possibly empty); spans for a
    document that is not in ``documents`` are a validation error (V6).
    """

    documents: dict[str, Document]
    spans: dict[str, list[Span]]

    def __post_init__(self) -> None:
        self.documents = dict(self.documents)
        self.spans = {k: list(v) for k, v in self.spans.items()}
        for doc_id in self.documents:
            self.spans.setdefault(doc_id, [])

    @classmethod
    def from_spans(cls, spans: Iterable[Span], texts: Mapping[str, str] | None = None) -> Corpus:
        """Group ``spans`` by document; ``texts`` (doc_id → text) lists the documents."""
        docs = {d: Document(d, t) for d, t in (texts or {}).items()}
        grouped: dict[str, list[Span]] = {d: [] for d in docs}
        for s in spans:
            grouped.setdefault(s.doc_id, []).append(s)
        return cls(docs, grouped)

    @property
    def doc_ids(self) -> list[str]:
        """Every document id, sorted."""
        return sorted(set(self.documents) | set(self.spans))

    def text(self, doc_id: str) -> str | None:
        doc = self.documents.get(doc_id)
        return doc.text if doc is not None else None

    def iter_spans(self) -> Iterator[Span]:
        """Every span, documents in sorted id order, spans in stored order."""
        for doc_id in self.doc_ids:
            yield from self.spans.get(doc_id, ())

    def __len__(self) -> int:
        return len(self.doc_ids)

    @property
    def n_spans(self) -> int:
        return sum(len(v) for v in self.spans.values())
