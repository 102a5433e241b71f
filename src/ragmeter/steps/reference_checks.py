"""Validation of a reference dataset: its questions and their reference steps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.steps import sparql as sp
from ragmeter.steps.modes import DEFAULT
from ragmeter.steps.retrieval_steps import document_ids
from ragmeter.steps.scoring import JSON_MEDIA_TYPE, SPARQL_MEDIA_TYPE, SPECIAL_NAMES
from ragmeter.steps.validation_report import _is_id, _Reporter, _type_name, _who

_NEAR_MISS = {name.lower(): name for name in SPECIAL_NAMES}


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
