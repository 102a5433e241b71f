"""Validation of reference datasets and agent responses (docs/steps.md).

Everything is checked before anything is evaluated. The first problem in file order raises
:class:`~ragmeter.errors.InputError` with one line,
``FILE[:LINE]: question ID: FIELD_PATH: PROBLEM (expected EXPECTATION)``; warnings are collected
as lines of the same shape (``strict=True`` turns them into errors).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import Located, ResponseEntry
from ragmeter.steps.reference_checks import _check_reference
from ragmeter.steps.validation_report import (
    _is_id,
    _is_number,
    _Reporter,
    _type_name,
    _who,
    field_path,  # noqa: F401  (still importable from here)
)

__all__ = ["REFERENCE_NAME", "RESPONSES_NAME", "Dataset", "Item", "validate"]

REFERENCE_NAME = "<reference_qas>"
RESPONSES_NAME = "<chat_responses>"
NUMERIC_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")


@dataclass
class Item:
    """One reference question and the response it is scored against."""

    template_id: Any
    question: Mapping[str, Any]
    response: Mapping[str, Any]


@dataclass
class Dataset:
    items: list[Item]
    warnings: list[str] = field(default_factory=list)


def _check_response(
    rep: _Reporter, entry: ResponseEntry, index: int
) -> tuple[str, Mapping[str, Any]]:
    record, line = entry.record, entry.line
    where = f"responses[{index}]" if entry.key is None else f"response {entry.key}"
    if line is not None:
        where = None  # the line says where
    if not isinstance(record, Mapping):
        raise rep.error(
            (),
            (),
            f"{_type_name(record)}, not a response record",
            "a mapping",
            who=where,
            line=line,
        )
    if "question_id" not in record:
        raise rep.error(
            (), ("question_id",), "missing", "the id of a reference question", who=where, line=line
        )
    qid = record["question_id"]
    if not _is_id(qid):
        raise rep.error(
            (), ("question_id",), _type_name(qid), "a string or integer", who=where, line=line
        )
    who = _who(qid)
    if entry.key is not None and str(entry.key) != str(qid):
        raise rep.error(
            (),
            ("question_id",),
            f"{qid!r} differs from its key {entry.key!r}",
            "the key and question_id to be equal",
            who=who,
            line=line,
        )
    for name in NUMERIC_FIELDS:
        if name in record and not _is_number(record[name]):
            raise rep.error((), (name,), _type_name(record[name]), "a number", who=who, line=line)
    if "actual_answer" in record and not isinstance(record["actual_answer"], str):
        raise rep.error(
            (),
            ("actual_answer",),
            _type_name(record["actual_answer"]),
            "a string",
            who=who,
            line=line,
        )
    if record.get("status") == "error" and "error" not in record:
        rep.warn(
            (),
            ("status",),
            '"error" but the record has no "error" key, so it is scored as a success response',
            'an "error" key on error responses',
            who=who,
            line=line,
        )
    steps = record.get("actual_steps")
    if "actual_steps" in record:
        if not isinstance(steps, list):
            raise rep.error(
                (), ("actual_steps",), _type_name(steps), "a list of steps", who=who, line=line
            )
        ids: set[str] = set()
        for j, step in enumerate(steps):
            f = ("actual_steps", j)
            if not isinstance(step, Mapping):
                raise rep.error((), f, _type_name(step), "a mapping", who=who, line=line)
            if "id" not in step:
                raise rep.error((), (*f, "id"), "missing", "the step's call id", who=who, line=line)
            if not _is_id(step["id"]):
                raise rep.error(
                    (),
                    (*f, "id"),
                    _type_name(step["id"]),
                    "a string or integer",
                    who=who,
                    line=line,
                )
            if "name" not in step:
                raise rep.error((), (*f, "name"), "missing", "the tool name", who=who, line=line)
            if not isinstance(step["name"], str) or not step["name"]:
                raise rep.error(
                    (),
                    (*f, "name"),
                    _type_name(step["name"]),
                    "a non-empty string",
                    who=who,
                    line=line,
                )
            if "status" not in step:
                raise rep.error(
                    (),
                    (*f, "status"),
                    "missing",
                    'a string such as "success" or "error"',
                    who=who,
                    line=line,
                )
            if not isinstance(step["status"], str):
                raise rep.error(
                    (),
                    (*f, "status"),
                    _type_name(step["status"]),
                    'a string such as "success" or "error"',
                    who=who,
                    line=line,
                )
            if "args" in step and not isinstance(step["args"], Mapping):
                raise rep.error(
                    (), (*f, "args"), _type_name(step["args"]), "a mapping", who=who, line=line
                )
            sid = str(step["id"])
            if sid in ids:
                rep.warn(
                    (),
                    (*f, "id"),
                    f"duplicate step id {step['id']!r}",
                    "step ids unique within a response",
                    who=who,
                    line=line,
                )
            ids.add(sid)
    return str(qid), record


def validate(
    reference: Located,
    responses: Sequence[ResponseEntry],
    responses_name: str,
    *,
    mode: str,
    on_missing: str = "error",
    check_names: bool = True,
    strict: bool = False,
) -> Dataset:
    """Check both inputs (docs/steps.md) and pair every reference question with its response."""
    if on_missing not in ("error", "error-sample"):
        from ragmeter.errors import UsageError

        raise UsageError(
            f"on_missing={on_missing!r} is not supported (expected 'error' or 'error-sample')"
        )
    warnings: list[str] = []
    ref_rep = _Reporter(reference, strict, warnings)
    questions = _check_reference(reference.data, ref_rep, mode, check_names)

    resp_rep = _Reporter(Located(None, responses_name), strict, warnings)
    by_id: dict[str, Mapping[str, Any]] = {}
    first_line: dict[str, int | None] = {}
    actual_names: set[str] = set()
    for index, entry in enumerate(responses):
        key, record = _check_response(resp_rep, entry, index)
        if key in by_id:
            where = first_line[key]
            raise resp_rep.error(
                (),
                ("question_id",),
                "duplicate response" + (f" (first at line {where})" if where else ""),
                "one record per question",
                who=_who(record["question_id"]),
                line=entry.line,
            )
        by_id[key] = record
        first_line[key] = entry.line
        for step in record.get("actual_steps") or ():
            actual_names.add(step["name"])

    reference_ids = {str(q["id"]) for _t, q, _p in questions}
    stray = [k for k in by_id if k not in reference_ids]
    if stray:
        resp_rep.warn(
            (),
            (),
            f"{len(stray)} response(s) have a question id that is in no template and are "
            f"ignored, e.g. {stray[0]!r}",
            "one response per reference question",
        )
    named: set[str] = set()
    for _tid, question, qpath in questions:
        for g, group in enumerate(question.get("reference_steps") or ()):
            for s, step in enumerate(group):
                name = step["name"]
                if name in named or name == "iri_discovery" or name in actual_names:
                    continue
                named.add(name)
                ref_rep.warn(
                    (*qpath, "reference_steps", g, s, "name"),
                    ("reference_steps", g, s, "name"),
                    f'no actual step of {responses_name} is named "{name}", so this step can '
                    "never match",
                    "tool names as the agent reports them",
                    who=_who(question["id"]),
                )

    items = []
    for tid, question, _qpath in questions:
        key = str(question["id"])
        response = by_id.get(key)
        if response is None:
            if on_missing == "error":
                raise InputError(
                    "no response (expected one record per reference question; --on-missing "
                    "error-sample scores it as an error)",
                    path=responses_name,
                    location=_who(question["id"]),
                )
            response = {"question_id": question["id"], "error": "no response"}
        items.append(Item(tid, question, response))
    return Dataset(items, warnings)
