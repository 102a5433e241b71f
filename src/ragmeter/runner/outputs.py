"""Reading a system's outputs (``systems[].outputs`` of the config), validated against the gold.

Four kinds, each read once per system and shared by the tasks that need it:

- ``run``: a retrieval run, TREC (``qid Q0 docno rank score tag``) or JSONL
  (``{qid, retrieved_ids, scores?}``), read by the retrieval engine's reader;
- ``answers``: JSONL ``{id, answer, contexts?, citations?, retrieved_ids?}`` keyed by qid; the
  UltraRAG spelling (``pred_answer``) and the grounded-QA trace (``qid``, ``answer_json.claim``,
  ``answer_json.citations``, ``retrieved_ids``) are accepted too, one spelling per file;
- ``traces``: graphrag-eval responses (``question_id``, ``actual_answer``, ``actual_steps``), as
  JSONL, a JSON array, or a JSON object keyed by id;
- ``entities``: JSONL ``{id, ner_annotations?, type_classification?, entity_linking?}`` keyed by
  sample id.

Every id must name a gold unit of the *whole* gold file (so outputs that cover every split work
with ``dataset.split``); an id that matches nothing is an error with its line, as is an id given
twice or a file that switches spelling half-way (mixed formats).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.datasets.gold import GoldSet
from ragmeter.errors import InputError
from ragmeter.io.files import display_name, open_binary, sha256_file
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.jsonutil import json_type

__all__ = [
    "OUTPUT_KINDS",
    "AnswerOutput",
    "EntityOutput",
    "OutputFile",
    "TraceOutput",
    "read_answers",
    "read_entities",
    "read_sidecar",
    "read_traces",
]

OUTPUT_KINDS = ("run", "answers", "traces", "entities")

_ANSWER_ID_KEYS = ("id", "qid", "q_id", "question_id")
_ANSWER_KEYS = ("answer", "pred_answer", "response", "actual_answer", "answer_json")


@dataclass
class OutputFile:
    """One parsed output file: its records by id, its hash, and where each id was read."""

    path: str
    sha256: str
    records: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int | None] = field(default_factory=dict)
    # the ``<path>.meta.json`` a baseline wrote next to the file (docs/baselines.md), kept in the
    # stored run's metadata so the options and inputs that produced the output travel with it
    sidecar: dict[str, Any] | None = None


@dataclass(frozen=True)
class AnswerOutput:
    id: str
    answer: str | None
    contexts: tuple[Mapping[str, Any], ...] | None = None  # {"id"?, "text"}
    citations: tuple[str, ...] | None = None
    retrieved_ids: tuple[str, ...] | None = None
    error: str | None = None


@dataclass(frozen=True)
class EntityOutput:
    id: str
    ner: tuple[Mapping[str, Any], ...] | None = None
    types: tuple[str, tuple[str, ...]] | None = None  # (primary, secondary)
    links: tuple[Mapping[str, Any], ...] | None = None


@dataclass(frozen=True)
class TraceOutput:
    id: str
    record: Mapping[str, Any]


def _unknown_id(kind: str, value: str, gold: GoldSet, path: str, line: int | None) -> InputError:
    what = {"answers": "QA pair", "traces": "QA pair", "entities": "sample"}[kind]
    expected = "a qid" if what == "QA pair" else "a sample id"
    return InputError(
        f"id {value!r} matches no gold {what} (expected {expected} of {gold.path})",
        path=path,
        line=line,
    )


def _output_id(
    obj: Mapping[str, Any], key: str, kind: str, gold: GoldSet, out: OutputFile, line: int
) -> str:
    """The id under ``key`` of one output record: a string or integer that names a gold unit
    (a QA pair, or a sample for ``entities``) not seen earlier in the file."""
    known = gold.by_id if kind == "entities" else gold.qa
    raw = obj.get(key)
    if not isinstance(raw, (str, int)) or isinstance(raw, bool):
        expected = "a sample id" if kind == "entities" else "a qid"
        raise InputError(
            f"{key} is {json_type(raw)} (expected {expected})", path=out.path, line=line
        )
    value = str(raw)
    if value not in known:
        raise _unknown_id(kind, value, gold, out.path, line)
    if value in out.records:
        raise InputError(
            f"{key} {value!r} appears twice (first at line {out.lines[value]})",
            path=out.path,
            line=line,
        )
    return value


def _first_key(obj: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((k for k in keys if k in obj), None)


def _str_list(value: Any, path: str, line: int, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) for v in value):
        raise InputError(
            f"{key} is {json_type(value)} (expected a list of ids)", path=path, line=line
        )
    return tuple(str(v) for v in value)


def _contexts(value: Any, path: str, line: int) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list):
        raise InputError(
            f"contexts is {json_type(value)} (expected a list of strings or {{id, text}} objects)",
            path=path,
            line=line,
        )
    out = []
    for i, c in enumerate(value):
        if isinstance(c, str):
            out.append({"text": c})
        elif isinstance(c, dict) and isinstance(c.get("text"), str):
            out.append({k: c[k] for k in ("id", "text", "title") if k in c})
        else:
            raise InputError(
                f"contexts[{i}] is {json_type(c)} (expected a string or an object with text)",
                path=path,
                line=line,
            )
    return tuple(out)


def read_answers(path: str | os.PathLike[str], gold: GoldSet) -> OutputFile:
    """Read an answers file; every id must be a qid of ``gold``."""
    name = display_name(path)
    out = OutputFile(name, sha256_file(path))
    id_key = answer_key = None
    first_line = 0
    for line, obj in iter_jsonl(path):
        this_id = _first_key(obj, _ANSWER_ID_KEYS)
        this_answer = _first_key(obj, _ANSWER_KEYS)
        if this_id is None:
            raise InputError(
                f"no id (expected one of {', '.join(_ANSWER_ID_KEYS)})", path=name, line=line
            )
        if id_key is None:
            id_key, answer_key, first_line = this_id, this_answer, line
        elif this_id != id_key or (this_answer != answer_key and this_answer is not None):
            was = f"'{id_key}'" + (f" and '{answer_key}'" if answer_key else "")
            now = f"'{this_id}'" + (f" and '{this_answer}'" if this_answer else "")
            raise InputError(
                f"mixed formats: this line uses {now} where line {first_line} used {was} "
                "(expected one format per file)",
                path=name,
                line=line,
            )
        qid = _output_id(obj, id_key, "answers", gold, out, line)
        answer, citations, error = None, None, None
        if answer_key == "answer_json":
            aj = obj.get("answer_json")
            if not isinstance(aj, dict):
                raise InputError(
                    f"answer_json is {json_type(aj)} (expected an object with claim and citations)",
                    path=name,
                    line=line,
                )
            answer = aj.get("claim")
            if aj.get("citations") is not None:
                citations = _str_list(aj["citations"], name, line, "answer_json.citations")
        elif answer_key is not None:
            answer = obj.get(answer_key)
        if answer is not None and not isinstance(answer, str):
            raise InputError(
                f"{answer_key} is {json_type(answer)} (expected a string or null)",
                path=name,
                line=line,
            )
        if obj.get("citations") is not None:
            citations = _str_list(obj["citations"], name, line, "citations")
        if obj.get("error") is not None:
            error = str(obj["error"])
        out.records[qid] = AnswerOutput(
            qid,
            answer,
            contexts=_contexts(obj["contexts"], name, line)
            if obj.get("contexts") is not None
            else None,
            citations=citations,
            retrieved_ids=_str_list(obj["retrieved_ids"], name, line, "retrieved_ids")
            if obj.get("retrieved_ids") is not None
            else None,
            error=error,
        )
        out.lines[qid] = line
    return out


def read_entities(path: str | os.PathLike[str], gold: GoldSet) -> OutputFile:
    """Read predicted entities, types and links; every id must be a gold sample id."""
    name = display_name(path)
    out = OutputFile(name, sha256_file(path))
    for line, obj in iter_jsonl(path):
        sid = _output_id(obj, "id", "entities", gold, out, line)
        known = {"id", "ner_annotations", "entities", "type_classification", "entity_linking"}
        if "ner_annotations" in obj and "entities" in obj:
            raise InputError(
                "both ner_annotations and entities (expected one of them)", path=name, line=line
            )
        ner = obj.get("ner_annotations", obj.get("entities"))
        if ner is not None:
            if not isinstance(ner, list) or not all(isinstance(m, dict) for m in ner):
                raise InputError(
                    f"ner_annotations is {json_type(ner)} (expected a list of "
                    "{start, end, type} objects)",
                    path=name,
                    line=line,
                )
            for i, m in enumerate(ner):
                for k in ("start", "end", "type"):
                    if k not in m:
                        raise InputError(
                            f"ner_annotations[{i}].{k} missing (expected start, end and type)",
                            path=name,
                            line=line,
                        )
        types = None
        tc = obj.get("type_classification")
        if isinstance(tc, str):
            types = (tc, ())
        elif isinstance(tc, dict):
            if not isinstance(tc.get("primary_type"), str):
                raise InputError(
                    "type_classification.primary_type is "
                    f"{json_type(tc.get('primary_type'))} (expected a type label)",
                    path=name,
                    line=line,
                )
            secondary = tc.get("secondary_types") or []
            types = (tc["primary_type"], _str_list(secondary, name, line, "secondary_types"))
        elif tc is not None:
            raise InputError(
                f"type_classification is {json_type(tc)} (expected a label or an object)",
                path=name,
                line=line,
            )
        links = obj.get("entity_linking")
        if links is not None and (
            not isinstance(links, list) or not all(isinstance(x, dict) for x in links)
        ):
            raise InputError(
                f"entity_linking is {json_type(links)} (expected a list of link predictions)",
                path=name,
                line=line,
            )
        extra = sorted(set(obj) - known)
        if extra:
            from ragmeter.registry import suggest

            hint = suggest(extra[0], sorted(known), n=1)
            if hint:  # a likely typo of a key we read: silently ignoring it would score 0
                raise InputError(
                    f"unknown key '{extra[0]}'; did you mean '{hint[0]}'?", path=name, line=line
                )
        out.records[sid] = EntityOutput(
            sid,
            tuple(ner) if ner is not None else None,
            types,
            tuple(links) if links is not None else None,
        )
        out.lines[sid] = line
    return out


def _trace_records(path: str | os.PathLike[str]) -> list[tuple[int | None, Any]]:
    """JSONL, a JSON array of responses, or a JSON object keyed by question id."""
    name = display_name(path)
    with open_binary(path) as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte offset {exc.start})", path=name) from None
    head = text.lstrip()[:1]
    if head in ("[", "{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None  # several lines of JSON: JSONL
        if head == "[" and data is None:
            raise InputError("not valid JSON (expected a JSON array of responses)", path=name)
        if isinstance(data, list):
            return [(None, r) for r in data]
        if isinstance(data, dict) and "question_id" not in data:
            return [
                (None, {"question_id": k, **v} if isinstance(v, dict) else v)
                for k, v in data.items()
            ]
    return list(iter_jsonl(path))


def read_traces(path: str | os.PathLike[str], gold: GoldSet) -> OutputFile:
    """Read graphrag-eval responses; every ``question_id`` must be a gold qid."""
    name = display_name(path)
    out = OutputFile(name, sha256_file(path))
    for line, obj in _trace_records(path):
        if not isinstance(obj, dict):
            raise InputError(
                f"a response is {json_type(obj)} (expected an object with question_id)",
                path=name,
                line=line,
            )
        qid = _output_id(obj, "question_id", "traces", gold, out, line)
        out.records[qid] = TraceOutput(qid, obj)
        out.lines[qid] = line
    return out


def _run_format(path: str | os.PathLike[str]) -> str:
    """``jsonl`` when the first non-blank character is ``{``, else ``trec``."""
    with open_binary(path) as fh:
        head = fh.read(4096)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return "jsonl" if head.lstrip()[:1] == b"{" else "trec"


def read_run(path: str | os.PathLike[str], gold: GoldSet) -> OutputFile:
    """Read a retrieval run (TREC, or JSONL ``{qid, retrieved_ids, scores?}``) with the
    retrieval engine's reader (docs/retrieval.md); every query id must be a gold query.

    The engine's :class:`~ragmeter.io.trec.Run` is the record under the key ``"run"``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from ragmeter.io.trec import read_run as engine_read_run

    name = display_name(path)
    fmt = _run_format(path)
    run = engine_read_run(path, format=fmt)
    qids = run.qid.combine_chunks()
    if isinstance(qids.type, pa.DictionaryType):
        uniques = qids.dictionary
    else:
        uniques = pc.unique(qids)
    known = set(gold.query_owner) | set(gold.qa)
    unknown = [
        q for q in (u.decode("utf-8", "replace") for u in uniques.to_pylist()) if q not in known
    ]
    if unknown:
        first = min(
            unknown,
            key=lambda q: pc.index(
                pc.cast(qids, pa.binary()) if isinstance(qids.type, pa.DictionaryType) else qids,
                q.encode(),
            ).as_py(),
        )
        plain = pc.cast(qids, pa.binary()) if isinstance(qids.type, pa.DictionaryType) else qids
        row = pc.index(plain, first.encode()).as_py()
        line = run.origin.locate([row])[0].line
        raise InputError(
            f"query {first!r} matches no gold query (expected a qid of {gold.path}"
            f"{'' if len(unknown) == 1 else f'; {len(unknown)} queries do not match'})",
            path=name,
            line=line,
        )
    out = OutputFile(name, run.sha256 or sha256_file(path))
    out.records["run"] = run
    return out


def read_sidecar(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The JSON object in ``<path>.meta.json``, or ``None`` when there is no such file.

    ``ragmeter baseline`` writes one next to every output; any tool may. A sidecar that is not
    a JSON object is bad input (its content would be stored as the output's provenance).
    """
    side = f"{os.fspath(path)}.meta.json"
    if not os.path.isfile(side):
        return None
    try:
        with open(side, encoding="utf-8") as fh:
            data = json.load(fh)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 (expected a JSON object)", path=side, line=1) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON ({exc.msg}) (expected a JSON object)", path=side, line=exc.lineno
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{json_type(data)} (expected a JSON object)", path=side, line=1)
    return data
