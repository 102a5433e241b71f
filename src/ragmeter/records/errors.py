"""Errors of the extraction module (docs/extraction.md).

All are :class:`~ragmeter.errors.InputError` subclasses, so the command line prints them as
``FILE:LINE: what is wrong (what was expected)`` and exits 2. An error that concerns several
spans (:class:`OffsetMismatchError`, :class:`InvalidLabelError`) lists every one of them; on the
command line each becomes its own line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.errors import InputError

__all__ = [
    "AmbiguousLinkError",
    "DuplicateMentionError",
    "DuplicateSpanError",
    "InvalidLabelError",
    "OffsetMismatchError",
    "OverlapError",
    "Problem",
    "SpanBoundsError",
    "TagSchemeError",
    "TokenMismatchError",
    "UnknownDocumentError",
]


@dataclass(frozen=True)
class Problem:
    """One located problem: the one-line message and where it is."""

    message: str
    path: str | None = None
    line: int | None = None
    location: str | None = None

    def __str__(self) -> str:
        return str(InputError(self.message, path=self.path, line=self.line, location=self.location))


class MultiProblemError(InputError):
    """An error listing several problems, one line each."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("no problems to report")
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(first.message, path=first.path, line=first.line, location=first.location)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class OffsetMismatchError(MultiProblemError):
    """``text[start:end]`` differs from the mention text (V2); lists every bad span."""

    def __init__(self, problems: Sequence[Problem], mismatches: Sequence[dict] = ()) -> None:
        super().__init__(problems)
        self.mismatches = list(mismatches)


class InvalidLabelError(MultiProblemError):
    """Gold labels outside the vocabulary (V5, docs/extraction.md#type-classification); lists all of
    them."""

    def __init__(self, problems: Sequence[Problem], labels: Sequence[str] = ()) -> None:
        super().__init__(problems)
        self.labels = list(labels)


class SpanBoundsError(MultiProblemError):
    """Spans outside ``0 <= start < end <= len(text)`` or with bad fragments (V1)."""


class DuplicateSpanError(MultiProblemError):
    """The same ``(doc_id, start, end, label)`` twice in gold (V4)."""


class UnknownDocumentError(MultiProblemError):
    """A span or prediction for a document that is not in the corpus (V6,
    docs/extraction.md#ner)."""


class OverlapError(InputError):
    """Two spans cover the same token and cannot be written as tags
    (docs/extraction.md#tokenization-and-span--token-alignment)."""


class TagSchemeError(InputError):
    """A tag prefix the scheme does not allow, or an ill-formed gold sequence
    (docs/extraction.md#ner)."""


class TokenMismatchError(InputError):
    """Gold and prediction tokens differ, or CoNLL tokens do not fit the text
    (docs/extraction.md#formats)."""


class AmbiguousLinkError(InputError):
    """A surface-keyed link that matches no annotation or several (docs/extraction.md#formats)."""


class DuplicateMentionError(InputError):
    """A second prediction record (or gold mention) for the same mention id
    (docs/extraction.md#entity-linking)."""
