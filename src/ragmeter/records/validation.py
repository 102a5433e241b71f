"""Validation of a corpus (docs/extraction.md#data-model-and-validation, rules V1–V6).

Loaders call :func:`validate`; scorers call it on their inputs. Nothing is repaired silently:
relocations, skipped spans, removed duplicates and whitespace warnings are all listed in the
:class:`ValidationReport`, and the corrected corpus is its ``corpus`` attribute.

>>> from ragmeter.records.model import Corpus, Document, Span
>>> text = "Opgericht in 1800."
>>> c = Corpus({"d": Document("d", text)}, {"d": [Span("d", 11, 15, "TMP", text="1800")]})
>>> report = validate(c, on_offset_mismatch="relocate")
>>> report.relocated
[{'doc_id': 'd', 'label': 'TMP', 'text': '1800', 'from': [11, 15], 'to': [13, 17]}]
>>> [(s.start, s.end) for s in report.corpus.spans["d"]]
[(13, 17)]
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ragmeter.records.choices import ON_OFFSET_MISMATCH, Duplicates, OnMismatch, expected
from ragmeter.records.errors import (
    DuplicateSpanError,
    InvalidLabelError,
    OffsetMismatchError,
    Problem,
    SpanBoundsError,
    UnknownDocumentError,
)
from ragmeter.records.model import Corpus, Span

__all__ = ["Locator", "ValidationReport", "validate"]

Locator = Callable[[str, int], "tuple[str | None, int | None]"]
"""``(doc_id, index of the span in its document) -> (path, line)`` for error messages."""


@dataclass
class ValidationReport:
    """What :func:`validate` found and changed. ``corpus`` is the validated corpus."""

    role: str
    corpus: Corpus
    n_documents: int = 0
    n_spans: int = 0
    relocated: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    whitespace: list[dict[str, Any]] = field(default_factory=list)
    duplicates_removed: list[dict[str, Any]] = field(default_factory=list)
    duplicates_kept: list[dict[str, Any]] = field(default_factory=list)
    invalid_labels: dict[str, int] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        out = [
            f"document '{w['doc_id']}': span {w['start']}-{w['end']} '{w['label']}' "
            f"{w['where']} with whitespace"
            for w in self.whitespace
        ]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "n_documents": self.n_documents,
            "n_spans": self.n_spans,
            "relocated": self.relocated,
            "skipped": self.skipped,
            "whitespace": self.whitespace,
            "n_duplicates_removed": len(self.duplicates_removed),
            "duplicates_removed": self.duplicates_removed,
            "n_duplicates_kept": len(self.duplicates_kept),
            "invalid_labels": dict(sorted(self.invalid_labels.items())),
        }


def _where(
    doc_id: str, index: int, locate: Locator | None, role: str = "gold"
) -> tuple[str | None, int | None, str]:
    path, line = locate(doc_id, index) if locate is not None else (None, None)
    return path, line, f"{'predicted ' if role == 'pred' else ''}document '{doc_id}'"


def _occurrences(text: str, needle: str, limit: int = 2) -> list[int]:
    out: list[int] = []
    pos = text.find(needle)
    while pos != -1 and len(out) < limit:
        out.append(pos)
        pos = text.find(needle, pos + 1)
    return out


def _bounds_problem(span: Span, n: int | None) -> str | None:
    label = f"span {span.start}-{span.end} '{span.label}'"
    if span.start < 0:
        return f"{label} starts before the text (expected 0 <= start < end)"
    if span.start >= span.end:
        return f"{label} is empty or reversed (expected start < end, half-open offsets)"
    if n is not None and span.end > n:
        return f"{label} ends after the text (expected end <= {n}, the text length)"
    if span.fragments:
        frags = span.fragments
        for a, b in frags:
            if a < 0 or a >= b or (n is not None and b > n):
                return (
                    f"{label} has fragment {a}-{b} outside the text or empty "
                    f"(expected 0 <= start < end{'' if n is None else f' <= {n}'})"
                )
        for (_, b1), (a2, _) in itertools.pairwise(frags):
            if a2 < b1:
                return (
                    f"{label} has fragments that are unsorted or overlap (expected sorted, "
                    "disjoint)"
                )
        if frags[0][0] != span.start or frags[-1][1] != span.end:
            return (
                f"{label} does not span its fragments (expected start = first fragment start, "
                "end = last fragment end)"
            )
    return None


def validate(
    corpus: Corpus,
    *,
    vocabulary: Iterable[str] | None = None,
    on_offset_mismatch: OnMismatch = "error",
    role: Literal["gold", "pred"] = "gold",
    duplicates: Duplicates | None = None,
    locate: Locator | None = None,
) -> ValidationReport:
    """Check ``corpus`` against rules V1–V6 of docs/extraction.md#data-model-and-validation.

    Parameters
    ----------
    vocabulary:
        Allowed labels. Gold labels outside it raise :class:`InvalidLabelError` (all listed);
        predicted ones are counted in ``invalid_labels`` and left for the scorer.
    on_offset_mismatch:
        ``"error"`` raises :class:`OffsetMismatchError` listing every span whose ``text`` differs
        from ``text[start:end]``; ``"skip"`` drops such spans; ``"relocate"`` moves a span to the
        single occurrence of its text and raises if there is none or several.
    role:
        ``"gold"`` or ``"pred"``: duplicates are an error in gold (V4).
    duplicates:
        For predictions: ``"dedupe"`` (default) keeps one copy, ``"keep"`` keeps all; both are
        listed. ``"error"`` (the gold rule) raises :class:`DuplicateSpanError`.
    locate:
        ``(doc_id, index) -> (path, line)`` so that messages point into the input file.

    Returns
    -------
    ValidationReport
        With the corrected corpus in ``.corpus``.
    """
    if on_offset_mismatch not in ON_OFFSET_MISMATCH:
        raise ValueError(
            f"on_offset_mismatch={on_offset_mismatch!r} (expected {expected(ON_OFFSET_MISMATCH)})"
        )
    if role not in ("gold", "pred"):
        raise ValueError(f"role={role!r} (expected 'gold' or 'pred')")
    dup_policy = duplicates or ("error" if role == "gold" else "dedupe")
    vocab = set(vocabulary) if vocabulary is not None else None
    report = ValidationReport(role=role, corpus=corpus)
    bounds: list[Problem] = []
    mismatch: list[Problem] = []
    mismatch_rows: list[dict[str, Any]] = []
    unknown_docs: list[Problem] = []
    bad_labels: list[Problem] = []
    bad_label_names: list[str] = []
    dup_problems: list[Problem] = []
    has_docs = bool(corpus.documents)
    out_spans: dict[str, list[Span]] = {}

    for doc_id in corpus.doc_ids:
        spans = corpus.spans.get(doc_id, [])
        text = corpus.text(doc_id)
        if has_docs and doc_id not in corpus.documents and spans:
            path, line, loc = _where(doc_id, 0, locate, role)
            unknown_docs.append(
                Problem(
                    f"{len(spans)} span(s) for document '{doc_id}', which is not in the corpus "
                    "(expected spans only for known documents)",
                    path,
                    line,
                )
            )
            continue
        kept: list[Span] = []
        seen: dict[tuple[str, int, int, str], int] = {}
        for i, span in enumerate(spans):
            path, line, loc = _where(doc_id, i, locate, role)
            if span.doc_id != doc_id:
                bounds.append(
                    Problem(
                        f"span {span.start}-{span.end} says document '{span.doc_id}' but is "
                        f"stored under '{doc_id}' (expected the same document id)",
                        path,
                        line,
                        loc,
                    )
                )
                continue
            n = len(text) if text is not None else None
            msg = _bounds_problem(span, n)
            if msg is not None:
                if span.text is not None and text is not None:
                    occ = _occurrences(text, span.text)
                    if len(occ) == 1:
                        msg += f"; '{span.text}' occurs once, at {occ[0]}-{occ[0] + len(span.text)}"
                bounds.append(Problem(msg, path, line, loc))
                continue
            if text is not None:
                if span.text is not None:
                    found = span.surface(text)
                    if found != span.text:
                        row = {
                            "doc_id": doc_id,
                            "label": span.label,
                            "text": span.text,
                            "start": span.start,
                            "end": span.end,
                            "found": found,
                        }
                        occ = _occurrences(text, span.text)
                        hint = (
                            f"'{span.text}' occurs once, at {occ[0]}-{occ[0] + len(span.text)}"
                            if len(occ) == 1
                            else (
                                f"'{span.text}' does not occur in the text"
                                if not occ
                                else f"'{span.text}' occurs more than once"
                            )
                        )
                        problem = Problem(
                            f"span {span.start}-{span.end} '{span.label}' reads {found!r}, not "
                            f"{span.text!r} (expected text[start:end] == mention; {hint})",
                            path,
                            line,
                            loc,
                        )
                        if on_offset_mismatch == "skip":
                            report.skipped.append(row)
                            continue
                        if (
                            on_offset_mismatch == "relocate"
                            and len(occ) == 1
                            and not (span.fragments and len(span.fragments) > 1)
                        ):
                            new = span.replace(
                                start=occ[0], end=occ[0] + len(span.text), fragments=None
                            )
                            report.relocated.append(
                                {
                                    "doc_id": doc_id,
                                    "label": span.label,
                                    "text": span.text,
                                    "from": [span.start, span.end],
                                    "to": [new.start, new.end],
                                }
                            )
                            span = new
                        else:
                            mismatch.append(problem)
                            mismatch_rows.append(row)
                            continue
                first, last = text[span.start], text[span.end - 1]
                if first.isspace() or last.isspace():
                    where = (
                        "starts and ends"
                        if first.isspace() and last.isspace()
                        else ("starts" if first.isspace() else "ends")
                    )
                    report.whitespace.append(
                        {
                            "doc_id": doc_id,
                            "start": span.start,
                            "end": span.end,
                            "label": span.label,
                            "where": where,
                        }
                    )
            if vocab is not None and span.label not in vocab:
                if role == "gold":
                    bad_label_names.append(span.label)
                    bad_labels.append(
                        Problem(
                            f"gold label '{span.label}' of span {span.start}-{span.end} is not "
                            f"in the vocabulary (expected one of {_preview(vocab)})",
                            path,
                            line,
                            loc,
                        )
                    )
                else:
                    report.invalid_labels[span.label] = report.invalid_labels.get(span.label, 0) + 1
            key = span.key
            if key in seen:
                row = {"doc_id": doc_id, "start": span.start, "end": span.end, "label": span.label}
                if dup_policy == "error":
                    dup_problems.append(
                        Problem(
                            f"span {span.start}-{span.end} '{span.label}' appears twice "
                            "(expected each (doc_id, start, end, label) once in gold)",
                            path,
                            line,
                            loc,
                        )
                    )
                    continue
                if dup_policy == "dedupe":
                    report.duplicates_removed.append(row)
                    continue
                report.duplicates_kept.append(row)
            seen[key] = i
            kept.append(span)
        out_spans[doc_id] = kept

    for problems, exc in (
        (unknown_docs, UnknownDocumentError),
        (bounds, SpanBoundsError),
        (dup_problems, DuplicateSpanError),
    ):
        if problems:
            raise exc(problems)
    if mismatch:
        raise OffsetMismatchError(mismatch, mismatch_rows)
    if bad_labels:
        raise InvalidLabelError(bad_labels, sorted(set(bad_label_names)))
    report.corpus = Corpus(dict(corpus.documents), out_spans)
    report.n_documents = len(report.corpus)
    report.n_spans = report.corpus.n_spans
    return report


def _preview(labels: Iterable[str], limit: int = 8) -> str:
    items = sorted(labels)
    shown = ", ".join(items[:limit])
    return shown + (", ..." if len(items) > limit else "")


def count_labels(spans: Mapping[str, list[Span]]) -> Counter[str]:
    """Label → number of spans."""
    return Counter(s.label for v in spans.values() for s in v)
