"""Checking what a live system returned, and turning it into plain JSON.

A value of the wrong shape (a doc id that is not a string, a NaN score, a span outside the
text, a label that is not a string) raises :class:`ShapeError`, whose message becomes the
``system_error`` reason of that sample, e.g. ``retrieve returned score NaN for doc 'd7'``.
Only checked values reach the call cache and the materialised files.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ShapeError", "check_result"]


class ShapeError(ValueError):
    """A method returned a value of the wrong shape; the message says what was wrong."""


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return type(value).__name__


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, Mapping))


def _score(method: str, value: Any, what: str) -> float:
    # numbers.Real: numpy scores (float32, int64) are numbers too
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ShapeError(f"{method} returned score {value!r} for {what} (expected a number)")
    f = float(value)
    if not math.isfinite(f):
        raise ShapeError(f"{method} returned score {_kind(f) if f != f else f} for {what}")
    return f


def _retrieve(value: Any, k: int) -> list[list[Any]]:
    if not _is_list(value):
        raise ShapeError(f"retrieve returned {_kind(value)} (expected a list of (doc_id, score))")
    out: list[list[Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        if isinstance(item, Mapping):
            doc = item.get("id", item.get("doc_id"))
            score = item.get("score")
        elif _is_list(item) and len(item) == 2:
            doc, score = item[0], item[1]
        else:
            raise ShapeError(
                f"retrieve returned {_kind(item)} at position {i} (expected (doc_id, score))"
            )
        if not isinstance(doc, str) or not doc or any(c.isspace() for c in doc):
            raise ShapeError(
                f"retrieve returned doc id {doc!r} at position {i} "
                "(expected a non-empty string without spaces)"
            )
        if doc in seen:
            raise ShapeError(f"retrieve returned doc {doc!r} twice")
        seen.add(doc)
        out.append([doc, _score("retrieve", score, f"doc {doc!r}")])
    if len(out) > k:
        raise ShapeError(f"retrieve returned {len(out)} documents (expected at most k={k})")
    return out


def _str_ids(method: str, key: str, value: Any) -> list[str]:
    if not _is_list(value) or not all(isinstance(v, str) for v in value):
        raise ShapeError(f"{method} returned {key} {value!r} (expected a list of strings)")
    return list(value)


def _answer(value: Any) -> dict[str, Any]:
    if value is None or isinstance(value, str):
        return {"answer": value}
    if not isinstance(value, Mapping):
        raise ShapeError(f"answer returned {_kind(value)} (expected a string or a mapping)")
    unknown = sorted(set(value) - {"answer", "citations", "contexts"})
    if unknown:
        raise ShapeError(
            f"answer returned key {unknown[0]!r} (expected answer, citations, contexts)"
        )
    answer = value.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ShapeError(f"answer returned answer {_kind(answer)} (expected a string or None)")
    out: dict[str, Any] = {"answer": answer}
    if value.get("citations") is not None:
        out["citations"] = _str_ids("answer", "citations", value["citations"])
    if value.get("contexts") is not None:
        contexts = value["contexts"]
        if not _is_list(contexts):
            raise ShapeError(f"answer returned contexts {_kind(contexts)} (expected a list)")
        norm = []
        for i, c in enumerate(contexts):
            if isinstance(c, str):
                norm.append({"text": c})
            elif isinstance(c, Mapping) and isinstance(c.get("text"), str):
                norm.append({k: str(c[k]) for k in ("id", "text", "title") if c.get(k) is not None})
            else:
                raise ShapeError(
                    f"answer returned contexts[{i}] {_kind(c)} (expected a string or {{id, text}})"
                )
        out["contexts"] = norm
    return out


def _entities(value: Any, text: str) -> list[dict[str, Any]]:
    if not _is_list(value):
        raise ShapeError(f"extract_entities returned {_kind(value)} (expected a list of spans)")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, Mapping):
            raise ShapeError(
                f"extract_entities returned {_kind(m)} at position {i} "
                "(expected {start, end, type})"
            )
        start, end, label = m.get("start"), m.get("end"), m.get("type")
        for key, v in (("start", start), ("end", end)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ShapeError(
                    f"extract_entities returned {key} {v!r} at position {i} (expected an integer)"
                )
        if not isinstance(label, str) or not label:
            raise ShapeError(
                f"extract_entities returned type {label!r} at position {i} (expected a label)"
            )
        start, end = int(start), int(end)
        if not 0 <= start < end <= len(text):
            raise ShapeError(
                f"extract_entities returned span {start}-{end} outside the text "
                f"(expected 0 <= start < end <= {len(text)})"
            )
        out.append({"start": start, "end": end, "type": label, "text": text[start:end]})
    return out


def _classify(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value:
        return {"primary_type": value, "secondary_types": []}
    if isinstance(value, Mapping):
        primary = value.get("primary_type")
        if isinstance(primary, str) and primary:
            secondary = value.get("secondary_types") or []
            return {
                "primary_type": primary,
                "secondary_types": _str_ids("classify", "secondary_types", secondary),
            }
        value = primary
    raise ShapeError(f"classify returned label {value!r} (expected a non-empty string)")


def _link(value: Any) -> dict[str, Any]:
    nil = None
    candidates = value
    if isinstance(value, Mapping):
        candidates = value.get("candidates", [])
        nil = value.get("nil")
        if nil is not None and not isinstance(nil, bool):
            raise ShapeError(f"link returned nil {nil!r} (expected true or false)")
    if not _is_list(candidates):
        raise ShapeError(f"link returned {_kind(candidates)} (expected a list of candidates)")
    out = []
    for i, c in enumerate(candidates):
        if isinstance(c, str):
            c = {"kb_id": c}
        if not isinstance(c, Mapping) or not isinstance(c.get("kb_id"), str) or not c["kb_id"]:
            got = c.get("kb_id") if isinstance(c, Mapping) else c
            raise ShapeError(
                f"link returned kb_id {got!r} at position {i} (expected a non-empty string)"
            )
        cand: dict[str, Any] = {"kb_id": c["kb_id"]}
        if c.get("score") is not None:
            cand["score"] = _score("link", c["score"], f"candidate {c['kb_id']!r}")
        out.append(cand)
    result: dict[str, Any] = {"candidates": out}
    if nil is not None:
        result["nil"] = nil
    return result


def check_result(method: str, value: Any, args: Mapping[str, Any]) -> Any:
    """The checked, JSON-ready form of what ``method`` returned for ``args``."""
    if method == "retrieve":
        return _retrieve(value, int(args["k"]))
    if method == "answer":
        return _answer(value)
    if method == "extract_entities":
        return _entities(value, args["text"])
    if method == "classify":
        return _classify(value)
    if method == "link":
        return _link(value)
    raise ValueError(f"unknown method {method!r}")  # pragma: no cover - METHODS is closed
