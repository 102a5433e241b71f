"""Retrieval steps: recall@k and average precision over document ids (docs/steps.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ragmeter.steps.json_outputs import NOT_JSON, load_json

__all__ = [
    "average_precision",
    "compat_recall_at_k",
    "document_ids",
    "document_texts",
    "recall_at_k",
]


def _key(doc_id: Any) -> Any:
    """A hashable stand-in for an id (ids are compared with ``==`` after JSON loading)."""
    try:
        hash(doc_id)
    except TypeError:
        return ("json", json.dumps(doc_id, sort_keys=True, default=str))
    return doc_id


def document_ids(output: Any) -> list[Any] | None:
    """The ``id`` of each document of a retrieval output, or ``None`` if it is not a list of
    objects with ``id``.

    >>> document_ids('[{"id": "d1", "text": "..."}, {"id": "d2"}]')
    ['d1', 'd2']
    >>> document_ids('[{"text": "no id"}]') is None
    True
    """
    docs = load_json(output)
    if docs is NOT_JSON or not isinstance(docs, list):
        return None
    if not all(isinstance(d, dict) and "id" in d for d in docs):
        return None
    return [d["id"] for d in docs]


def document_texts(output: Any) -> list[str] | None:
    """The ``text`` of each document (``""`` when absent), or ``None`` if not a document list."""
    docs = load_json(output)
    if docs is NOT_JSON or not isinstance(docs, list) or not all(isinstance(d, dict) for d in docs):
        return None
    return [d.get("text") if isinstance(d.get("text"), str) else "" for d in docs]


def recall_at_k(relevant_ids: Iterable[Any], retrieved_ids: Iterable[Any], k: int) -> float:
    """Recall at cut-off ``k`` over distinct ids (docs/steps.md).

    .. math:: \\mathrm{recall@k} = \\frac{|rel \\cap ret_{1..k}|}{\\min(k, |rel|)}

    ``rel`` is the set of distinct relevant ids, ``ret_{1..k}`` the first ``k`` retrieved ids
    (duplicates collapse). With no relevant ids the value is 0.0.

    Parameters
    ----------
    relevant_ids : iterable
        Reference document ids.
    retrieved_ids : iterable
        Retrieved ids in rank order.
    k : int
        Cut-off, a positive integer.

    Returns
    -------
    float

    Examples
    --------
    >>> recall_at_k([1, 3, 5, 7, 9], range(1, 11), 5)
    0.6
    >>> recall_at_k(["a", "b", "c"], ["a"], 3)
    0.3333333333333333
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    rel = dict.fromkeys(map(_key, relevant_ids))
    if not rel:
        return 0.0
    ret = set(map(_key, list(retrieved_ids)[:k]))
    return len(ret.intersection(rel)) / min(k, len(rel))


def compat_recall_at_k(relevant_ids: Sequence[Any], retrieved_ids: Sequence[Any], k: int) -> float:
    """graphrag-eval's recall@k: both lists cut to ``k``, duplicates in the reference counted.

    >>> compat_recall_at_k(["a", "a"], ["a"], 2)
    0.5
    >>> compat_recall_at_k(["a", "b", "c"], ["a"], 1)
    1.0
    """
    rel_k = [_key(i) for i in relevant_ids[:k]]
    ret_k = {_key(i) for i in retrieved_ids[:k]}
    if not rel_k:
        return 0.0
    return len(set(rel_k) & ret_k) / len(rel_k)


def average_precision(relevant_ids: Iterable[Any], retrieved_ids: Iterable[Any]) -> float:
    """Average precision of a ranked list (docs/steps.md).

    .. math:: \\mathrm{AP} = \\frac{1}{|rel|} \\sum_{i:\\ ret_i \\in rel,\\ \\text{first}}
              \\frac{\\mathrm{hits}_{\\le i}}{i}

    Walk the retrieved ids in rank order; the first occurrence of a relevant id at rank ``i``
    adds ``hits so far / i``; later duplicates are not hits. Divide by the number of distinct
    relevant ids (0.0 if there are none).

    Examples
    --------
    >>> round(average_precision({1, 2, 5, 8}, [1, 3, 2, 4, 5, 6, 7, 8]), 6)
    0.691667
    >>> average_precision(["a"], ["a", "a"])
    1.0
    """
    rel = set(map(_key, relevant_ids))
    if not rel:
        return 0.0
    seen: set[Any] = set()
    hits = 0
    total = 0.0
    for rank, doc in enumerate(map(_key, retrieved_ids), start=1):
        if doc in rel and doc not in seen:
            seen.add(doc)
            hits += 1
            total += hits / rank
    return total / len(rel)
