"""Validation of reference datasets and agent responses (docs/steps.md).

Everything is checked before anything is evaluated. The first problem in file order raises
:class:`~ragmeter.errors.InputError` with one line,
``FILE[:LINE]: question ID: FIELD_PATH: PROBLEM (expected EXPECTATION)``; warnings are collected
as lines of the same shape (``strict=True`` turns them into errors).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import Located, ResponseEntry
from ragmeter.steps import sparql as sp
from ragmeter.steps.modes import DEFAULT
from ragmeter.steps.retrieval_steps import document_ids
from ragmeter.steps.scoring import JSON_MEDIA_TYPE, SPARQL_MEDIA_TYPE, SPECIAL_NAMES

__all__ = ["REFERENCE_NAME", "RESPONSES_NAME", "Dataset", "Item", "validate"]

REFERENCE_NAME = "<reference_qas>"
RESPONSES_NAME = "<chat_responses>"
NUMERIC_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec")
_NEAR_MISS = {name.lower(): name for name in SPECIAL_NAMES}


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


def field_path(parts: Sequence[Any]) -> str:
    """``("reference_steps", 0, 1, "output")`` → ``reference_steps[0][1].output``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    # finite only: JSON's 1e309 parses as infinity, which no token count or time can be
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "infinity"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class _Reporter:
    """Builds the one-line errors and warnings of one source."""

    def __init__(self, source: Located, strict: bool, warnings: list[str]) -> None:
        self.source = source
        self.strict = strict
        self.warnings = warnings

    def error(
        self,
        path: tuple,
        fields: Sequence[Any],
        problem: str,
        expected: str | None = None,
        *,
        who: str | None = None,
        line: int | None = None,
    ) -> InputError:
        text = field_path(fields)
        message = f"{text}: {problem}" if text else problem
        if expected:
            message += f" (expected {expected})"
        return InputError(
            message,
            path=self.source.name,
            line=line if line is not None else self.source.line(path),
            location=who,
        )

    def warn(self, *args: Any, **kwargs: Any) -> None:
        err = self.error(*args, **kwargs)
        if self.strict:
            raise err
        self.warnings.append(str(err))


def _who(qid: Any) -> str:
    return f"question {qid}"


def _check_reference_step(
    rep: _Reporter,
    step: Any,
    base: tuple,
    fields: tuple,
    who: str,
    mode: str,
    check_names: bool,
) -> None:
    if not isinstance(step, Mapping):
        raise rep.error(base, fields, f"{_type_name(step)}, not a step", "a mapping", who=who)
    name = step.get("name")
    if "name" not in step:
        raise rep.error(base, (*fields, "name"), "missing", "a tool name", who=who)
    if not isinstance(name, str) or not name:
        raise rep.error(
            (*base, "name"),
            (*fields, "name"),
            f"{_type_name(name)}",
            "a non-empty string",
            who=who,
        )
    intended = _NEAR_MISS.get(name.lower().replace("-", "_"))
    if check_names and intended is not None and intended != name:
        raise rep.error(
            (*base, "name"),
            (*fields, "name"),
            f'unknown step name "{name}"',
            f'"{intended}"',
            who=who,
        )
    args = step.get("args")
    if "args" in step and not isinstance(args, Mapping):
        raise rep.error((*base, "args"), (*fields, "args"), _type_name(args), "a mapping", who=who)
    args = args if isinstance(args, Mapping) else {}
    for flag in ("ordered", "ignore_duplicates"):
        if flag in step and not isinstance(step[flag], bool):
            raise rep.error(
                (*base, flag), (*fields, flag), _type_name(step[flag]), "true or false", who=who
            )
    required = step.get("required_columns")
    if "required_columns" in step and (
        not isinstance(required, list) or not all(isinstance(c, str) for c in required)
    ):
        raise rep.error(
            (*base, "required_columns"),
            (*fields, "required_columns"),
            _type_name(required),
            "a list of variable names",
            who=who,
        )
    media = step.get("output_media_type")
    output = step.get("output")
    out_path, out_fields = (*base, "output"), (*fields, "output")
    if media == SPARQL_MEDIA_TYPE:
        if output is None:
            raise rep.error(base, out_fields, "missing", "SPARQL 1.1 JSON results", who=who)
        problem = sp.reference_problem(output)
        if problem is not None:
            raise rep.error(out_path, out_fields, problem, "SPARQL 1.1 JSON results", who=who)
        result = sp.load_result(output)
        assert result is not None
        if not result.is_ask:
            if not result.vars and not required:
                raise rep.error(
                    out_path,
                    out_fields,
                    "a SELECT result without head.vars and the step has no required_columns "
                    "(nothing to compare)",
                    "head.vars or required_columns",
                    who=who,
                )
            missing = [c for c in (required or ()) if result.vars and c not in result.vars]
            if missing:
                args_ = (
                    (*base, "required_columns"),
                    (*fields, "required_columns"),
                    f"column {missing[0]!r} is not in the reference result's head.vars",
                    f"one of {', '.join(result.vars)}",
                )
                if mode == DEFAULT:
                    raise rep.error(*args_, who=who)
                rep.warn(*args_, who=who)
    elif media == JSON_MEDIA_TYPE:
        if output is None:
            raise rep.error(base, out_fields, "missing", "a JSON document", who=who)
        if isinstance(output, str):
            import json

            try:
                json.loads(output)
            except ValueError as exc:
                raise rep.error(
                    out_path, out_fields, f"not JSON: {exc}", "JSON text", who=who
                ) from None
    if name == "retrieval":
        if output is not None and document_ids(output) is None:
            raise rep.error(
                out_path,
                out_fields,
                "not a list of documents with an id",
                'a JSON list of {"id": ..., "text": ...} objects',
                who=who,
            )
        if "k" in args and (
            isinstance(args["k"], bool) or not isinstance(args["k"], int) or args["k"] < 1
        ):
            raise rep.error(
                (*base, "args", "k"),
                (*fields, "args", "k"),
                f"{args['k']!r}",
                "a positive integer",
                who=who,
            )
    elif name == "iri_discovery":
        if not isinstance(output, str):
            raise rep.error(
                out_path if "output" in step else base,
                out_fields,
                "missing" if output is None else _type_name(output),
                "the IRI to discover",
                who=who,
            )
    elif name == "retrieve_data_points" and "external_id" not in args:
        raise rep.error(
            (*base, "args"),
            (*fields, "args", "external_id"),
            "missing",
            "the time series' external id",
            who=who,
        )
    if output is None and name not in ("retrieve_time_series", "retrieve_data_points"):
        rep.warn(
            base,
            fields,
            f'step "{name}" has no output, so it can never match',
            "an output to compare with",
            who=who,
        )


def _check_reference(
    data: Any, rep: _Reporter, mode: str, check_names: bool
) -> list[tuple[Any, Mapping[str, Any], tuple]]:
    if not isinstance(data, list):
        raise rep.error(
            (),
            (),
            f"{_type_name(data)}, not a list of templates",
            "a list of {template_id, questions} mappings",
        )
    seen: dict[str, int] = {}
    out = []
    for ti, template in enumerate(data):
        tpath = (ti,)
        tname = f"templates[{ti}]"
        if not isinstance(template, Mapping):
            raise rep.error(
                tpath, (), f"{_type_name(template)}, not a template", "a mapping", who=tname
            )
        if "template_id" not in template:
            raise rep.error(tpath, ("template_id",), "missing", "a string or integer", who=tname)
        tid = template["template_id"]
        if not _is_id(tid):
            raise rep.error(
                (*tpath, "template_id"),
                ("template_id",),
                _type_name(tid),
                "a string or integer",
                who=tname,
            )
        who_t = f"template {tid}"
        if "questions" not in template:
            raise rep.error(tpath, ("questions",), "missing", "a list of questions", who=who_t)
        questions = template["questions"]
        if not isinstance(questions, list):
            raise rep.error(
                (*tpath, "questions"),
                ("questions",),
                _type_name(questions),
                "a list of questions",
                who=who_t,
            )
        for qi, question in enumerate(questions):
            qpath = (*tpath, "questions", qi)
            if not isinstance(question, Mapping):
                raise rep.error(
                    qpath, (f"questions[{qi}]",), _type_name(question), "a mapping", who=who_t
                )
            if "id" not in question:
                raise rep.error(
                    qpath, (f"questions[{qi}]", "id"), "missing", "a string or integer", who=who_t
                )
            qid = question["id"]
            if not _is_id(qid):
                raise rep.error(
                    (*qpath, "id"),
                    (f"questions[{qi}]", "id"),
                    _type_name(qid),
                    "a string or integer",
                    who=who_t,
                )
            who = _who(qid)
            key = str(qid)
            if key in seen:
                args = (
                    (*qpath, "id"),
                    ("id",),
                    f"duplicate question id (first at line {seen[key]})"
                    if seen[key]
                    else "duplicate question id",
                    "ids unique across the file",
                )
                if mode == DEFAULT:
                    raise rep.error(*args, who=who)
                rep.warn(*args, who=who)
            seen.setdefault(key, rep.source.line((*qpath, "id")) or 0)
            if "question_text" not in question:
                raise rep.error(qpath, ("question_text",), "missing", "a string", who=who)
            if not isinstance(question["question_text"], str):
                raise rep.error(
                    (*qpath, "question_text"),
                    ("question_text",),
                    _type_name(question["question_text"]),
                    "a string",
                    who=who,
                )
            if "reference_answer" in question and not isinstance(question["reference_answer"], str):
                raise rep.error(
                    (*qpath, "reference_answer"),
                    ("reference_answer",),
                    _type_name(question["reference_answer"]),
                    "a string",
                    who=who,
                )
            if "reference_steps" in question:
                groups = question["reference_steps"]
                gpath = (*qpath, "reference_steps")
                if not isinstance(groups, list) or not groups:
                    raise rep.error(
                        gpath,
                        ("reference_steps",),
                        "empty" if groups == [] else _type_name(groups),
                        "a non-empty list of groups (lists of steps)",
                        who=who,
                    )
                for g, group in enumerate(groups):
                    if not isinstance(group, list) or not group:
                        raise rep.error(
                            (*gpath, g),
                            ("reference_steps", g),
                            "an empty group" if group == [] else _type_name(group),
                            "a non-empty list of steps",
                            who=who,
                        )
                    for s, step in enumerate(group):
                        _check_reference_step(
                            rep,
                            step,
                            (*gpath, g, s),
                            ("reference_steps", g, s),
                            who,
                            mode,
                            check_names,
                        )
            out.append((tid, question, qpath))
    return out


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
