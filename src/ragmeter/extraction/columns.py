"""Columnar spans for scoring at scale.

:class:`SpanTable` holds one side's spans as numpy columns (document code, start, end, label
code) plus the document and label names the codes refer to. Every scorer converts its input to
this form once, so that a million spans cost a few array operations instead of a million
Python objects. Users with large data can build it directly with :meth:`SpanTable.from_arrays`.

>>> t = SpanTable.from_arrays(["d2", "d1", "d1"], [0, 4, 0], [5, 9, 3], ["LOC", "MUS", "LOC"])
>>> t.doc_ids, t.label_names, t.doc.tolist(), t.label.tolist()
(['d1', 'd2'], ['LOC', 'MUS'], [1, 0, 0], [0, 1, 0])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.records.model import Corpus, Span

__all__ = ["SpanTable", "factorize", "span_fields", "to_span_table"]


def factorize(values: Any) -> tuple[np.ndarray, list[str]]:
    """Integer codes and the sorted distinct values of a sequence of strings.

    Codes follow the sorted order of the values, so that code order is canonical order.

    >>> factorize(["b", "a", "b"])
    (array([1, 0, 1]), ['a', 'b'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else None
    if arr is None:
        if isinstance(values, np.ndarray) and values.dtype.kind in ("U", "S"):
            values = values.astype(object)
        try:
            arr = pa.array(values, type=pa.string())
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"expected strings ({exc})") from None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        raise InputError("a missing (null) value where a string was expected")
    enc = pc.dictionary_encode(arr)
    uniques = enc.dictionary.to_pylist()
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = sorted(range(len(uniques)), key=uniques.__getitem__)
    remap = np.empty(len(uniques), dtype=np.int64)
    remap[order] = np.arange(len(uniques), dtype=np.int64)
    return remap[codes], [uniques[i] for i in order]


@dataclass
class SpanTable:
    """One side's spans as columns.

    ``doc`` and ``label`` are codes into ``doc_ids`` and ``label_names`` (both sorted);
    ``doc_ids`` lists every document of this side, including documents without spans.
    ``doc_lengths`` (text length per document, or -1 when unknown) enables the V1 upper bound.
    """

    doc_ids: list[str]
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    label_names: list[str]
    label: np.ndarray
    doc_lengths: np.ndarray | None = None
    reports: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.doc.shape[0])

    @classmethod
    def from_arrays(
        cls,
        doc_ids: Any,
        starts: Any,
        ends: Any,
        labels: Any,
        *,
        documents: Iterable[str] | None = None,
    ) -> SpanTable:
        """Build from per-span columns (``doc_ids`` and ``labels`` as strings).

        ``documents`` adds documents that have no spans (they count as documents when scoring).
        """
        starts_a = np.asarray(starts)
        ends_a = np.asarray(ends)
        n = len(starts_a)
        if not (len(ends_a) == n and len(doc_ids) == n and len(labels) == n):
            raise InputError(
                f"columns of different lengths: {len(doc_ids)} doc ids, {n} starts, "
                f"{len(ends_a)} ends, {len(labels)} labels (expected one value per span)"
            )
        for name, col in (("start", starts_a), ("end", ends_a)):
            if n and col.dtype.kind not in ("i", "u"):
                raise InputError(f"{name} offsets are {col.dtype} (expected integers)")
        doc_codes, doc_names = factorize(doc_ids) if n else (np.zeros(0, np.int64), [])
        label_codes, label_names = factorize(labels) if n else (np.zeros(0, np.int64), [])
        if documents is not None:
            extra = sorted(set(documents) - set(doc_names))
            if extra:
                all_docs = sorted(set(doc_names) | set(extra))
                index = {d: i for i, d in enumerate(all_docs)}
                remap = np.array([index[d] for d in doc_names], dtype=np.int64)
                doc_codes = remap[doc_codes] if n else doc_codes
                doc_names = all_docs
        return cls(
            doc_names,
            doc_codes,
            starts_a.astype(np.int64, copy=False),
            ends_a.astype(np.int64, copy=False),
            label_names,
            label_codes,
        )


def span_fields(item: Any, doc_id: str, where: str) -> tuple[int, int, str]:
    """``(start, end, label)`` of a :class:`Span`, a ``(start, end, label)`` tuple or a dict
    with ``start``, ``end`` and ``label`` (or ``type``, the heritage spelling)."""
    if isinstance(item, Span):
        if item.doc_id != doc_id:
            raise InputError(
                f"span {item.start}-{item.end} says document '{item.doc_id}' but is listed "
                f"under '{doc_id}' (expected the same document id)",
                location=where,
            )
        return item.start, item.end, item.label
    if isinstance(item, Mapping):
        label = item.get("label", item.get("type"))
        start, end = item.get("start"), item.get("end")
    elif isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 3:
        start, end, label = item
    else:
        raise InputError(
            f"span {item!r} is not a Span, a (start, end, label) tuple or a dict",
            location=where,
        )
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputError(f"span {name} is {v!r} (expected an integer offset)", location=where)
    if not isinstance(label, str) or not label:
        raise InputError(f"span label is {label!r} (expected a non-empty string)", location=where)
    return int(start), int(end), label


def to_span_table(
    data: Corpus | Mapping[str, Sequence[Any]] | SpanTable, *, side: str = "gold"
) -> SpanTable:
    """Convert a :class:`Corpus`, a mapping ``doc_id -> spans`` or a :class:`SpanTable`."""
    if isinstance(data, SpanTable):
        return data
    if isinstance(data, Corpus):
        spans_by_doc: Mapping[str, Sequence[Any]] = data.spans
        documents = data.doc_ids
        lengths = {d: len(doc.text) for d, doc in data.documents.items()}
    elif isinstance(data, Mapping):
        spans_by_doc = data
        documents = list(data)
        lengths = {}
    else:
        raise InputError(
            f"{side} is a {type(data).__name__} (expected a Corpus, a mapping doc_id -> spans "
            "or a SpanTable)"
        )
    docs: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    labels: list[str] = []
    for doc_id in documents:
        if not isinstance(doc_id, str) or not doc_id:
            raise InputError(f"{side} document id {doc_id!r} is not a non-empty string")
        items = spans_by_doc.get(doc_id, ())
        if items and all(isinstance(s, Span) for s in items):
            # fast path for the common case
            if any(s.doc_id != doc_id for s in items):
                bad = next(s for s in items if s.doc_id != doc_id)
                span_fields(bad, doc_id, f"{side} document '{doc_id}'")
            starts.extend(s.start for s in items)
            ends.extend(s.end for s in items)
            labels.extend(s.label for s in items)
        else:
            for item in items:
                a, b, lab = span_fields(item, doc_id, f"{side} document '{doc_id}'")
                starts.append(a)
                ends.append(b)
                labels.append(lab)
        docs.extend([doc_id] * len(items))
    table = SpanTable.from_arrays(
        docs,
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        labels,
        documents=documents,
    )
    if lengths:
        table.doc_lengths = np.array([lengths.get(d, -1) for d in table.doc_ids], dtype=np.int64)
    return table
