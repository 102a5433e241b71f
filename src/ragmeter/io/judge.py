"""Reading judge inputs: JSONL samples with aliases and ``--key`` maps (docs/judge.md#command-line).

Canonical keys: ``id``, ``question``, ``answer``, ``reference``, ``contexts`` (strings or
``{id, text}`` objects), ``reference_contexts`` and ``template_id``. Known aliases are accepted
when the canonical key is absent (``user_input``, ``response``, ``ground_truth``, …), and
``--key canonical=field`` maps anything else. Every problem is an :class:`InputError` with the
file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragmeter.errors import InputError, UsageError

__all__ = [
    "ALIASES",
    "CANONICAL",
    "REQUIRED",
    "parse_key_map",
    "read_samples",
    "sample_from_record",
    "samples_from_records",
]

CANONICAL = (
    "id",
    "question",
    "answer",
    "reference",
    "contexts",
    "reference_contexts",
    "template_id",
)

ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("user_input", "question_text"),
    "answer": ("response", "actual_answer", "pred_answer"),
    "reference": ("reference_answer", "ground_truth"),
    "contexts": ("retrieved_contexts",),
}

# which inputs each pipeline reads (a missing key is an input error; an empty one is no_claims)
REQUIRED: dict[str, tuple[str, ...]] = {
    "answer_correctness": ("reference", "answer"),
    "answer_relevance": ("question", "answer"),
    "faithfulness": ("answer", "contexts"),
    "context_precision": ("reference", "contexts"),
    "context_utilization": ("answer", "contexts"),
    "context_recall": ("reference", "contexts"),
    "context_entity_recall": ("reference", "contexts"),
    "retrieval_answer": ("reference", "contexts"),
    "retrieval_context": ("reference_contexts", "contexts"),
}


def parse_key_map(items: Iterable[str]) -> dict[str, str]:
    """``["question=query", ...]`` → ``{"question": "query"}`` (``--key``).

    >>> parse_key_map(["question=query", "contexts=passages"])
    {'question': 'query', 'contexts': 'passages'}
    """
    out: dict[str, str] = {}
    for item in items:
        canonical, sep, field = item.partition("=")
        canonical, field = canonical.strip(), field.strip()
        if not sep or not canonical or not field:
            raise UsageError(f"--key {item!r} (expected canonical=field)", command="judge")
        if canonical not in CANONICAL:
            raise UsageError(
                f"--key {canonical!r} is not a judge input "
                f"(expected one of {', '.join(CANONICAL)})",
                command="judge",
            )
        out[canonical] = field
    return out


def _text(value: Any, key: str, where: dict[str, Any]) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    raise InputError(f"{key} is a JSON {type(value).__name__} (expected text or null)", **where)


def _contexts(
    value: Any, key: str, where: dict[str, Any]
) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    if value is None:
        return (), ()
    if not isinstance(value, list):
        raise InputError(
            f"{key} is a JSON {type(value).__name__} "
            "(expected a list of texts or {id, text} objects)",
            **where,
        )
    texts: list[str] = []
    ids: list[str | None] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            texts.append(item)
            ids.append(None)
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            texts.append(item["text"])
            cid = item.get("id")
            ids.append(None if cid is None else str(cid))
        else:
            raise InputError(f"{key}[{i}] is not text or an {{id, text}} object", **where)
    return tuple(texts), tuple(ids)


def _lookup(
    record: Mapping[str, Any], canonical: str, key_map: Mapping[str, str]
) -> tuple[bool, str, Any]:
    if canonical in key_map:
        field = key_map[canonical]
        return field in record, field, record.get(field)
    if canonical in record:
        return True, canonical, record[canonical]
    for alias in ALIASES.get(canonical, ()):
        if alias in record:
            return True, alias, record[alias]
    return False, canonical, None


def sample_from_record(
    record: Mapping[str, Any],
    *,
    line: int | None = None,
    path: str | None = None,
    key_map: Mapping[str, str] | None = None,
    required: Iterable[str] = (),
    default_id: str | None = None,
) -> Any:
    """One :class:`~ragmeter.records.judge.Sample` from a JSON object."""
    from ragmeter.records.judge import Sample

    key_map = key_map or {}
    where: dict[str, Any] = (
        {"path": path, "line": line} if path else {"location": f"sample {default_id}"}
    )
    found: dict[str, Any] = {}
    for canonical in CANONICAL:
        present, field, value = _lookup(record, canonical, key_map)
        if present:
            found[canonical] = (field, value)
    for need in required:
        if need not in found:
            aliases = ", ".join((need, *ALIASES.get(need, ())))
            raise InputError(
                f"missing key '{key_map.get(need, need)}' (expected one of {aliases})", **where
            )
    sid: Any = found.get("id", (None, None))[1]
    if sid is None:
        sid = default_id if default_id is not None else (str(line) if line is not None else None)
    if sid is None or isinstance(sid, (dict, list, bool)):
        raise InputError("id is missing or not a string or number", **where)
    contexts = ids = ref_ctx = None
    if "contexts" in found:
        contexts, ids = _contexts(found["contexts"][1], found["contexts"][0], where)
    if "reference_contexts" in found:
        ref_ctx, _ = _contexts(
            found["reference_contexts"][1], found["reference_contexts"][0], where
        )
    return Sample(
        id=str(sid),
        question=_text(found["question"][1], found["question"][0], where)
        if "question" in found
        else None,
        answer=_text(found["answer"][1], found["answer"][0], where) if "answer" in found else None,
        reference=_text(found["reference"][1], found["reference"][0], where)
        if "reference" in found
        else None,
        contexts=contexts,
        context_ids=ids,
        reference_contexts=ref_ctx,
        template_id=None
        if found.get("template_id", (None, None))[1] is None
        else str(found["template_id"][1]),
        line=line,
    )


def required_inputs(
    pipelines: Sequence[str], rubric_inputs: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    need: list[str] = []
    for p in pipelines:
        keys = REQUIRED.get(p)
        if keys is None and p.startswith("rubric:") and rubric_inputs is not None:
            keys = tuple(rubric_inputs.get(p.split(":", 1)[1], ()))
        for k in keys or ():
            if k not in need:
                need.append(k)
    return need


def read_samples(
    path: str | os.PathLike[str],
    *,
    key_map: Mapping[str, str] | None = None,
    required: Iterable[str] = (),
) -> list[Any]:
    """Every sample of a JSONL file, validated; duplicate ids are an error with both lines."""
    from ragmeter.io.jsonl import iter_jsonl

    name = os.fspath(path)
    required = list(required)
    samples = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(name, allow_stdin=True):
        s = sample_from_record(
            obj,
            line=line,
            path=name if name != "-" else "<stdin>",
            key_map=key_map,
            required=required,
        )
        if s.id in seen:
            raise InputError(
                f"sample id {s.id!r} appears twice (first on line {seen[s.id]})",
                path=name,
                line=line,
            )
        seen[s.id] = line
        samples.append(s)
    return samples


def samples_from_records(
    records: Iterable[Mapping[str, Any]], *, key_map: Mapping[str, str] | None = None
) -> list[Any]:
    """Samples from Python dicts (ids default to the 1-based position)."""
    out = []
    seen: set[str] = set()
    for i, rec in enumerate(records, start=1):
        s = sample_from_record(rec, key_map=key_map, default_id=str(i))
        if s.id in seen:
            raise InputError(f"sample id {s.id!r} appears twice", location=f"sample {i}")
        seen.add(s.id)
        out.append(s)
    return out
