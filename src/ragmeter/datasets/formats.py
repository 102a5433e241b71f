"""Gold standards in other tools' formats, converted to ragmeter gold samples.

``dataset.format`` in the runner config:

- ``graphrag-eval``: a reference file (YAML or JSON list of templates with ``questions``, as in
  graphrag-eval, docs/steps.md "Inputs"). Each question becomes a sample with one QA pair
  (``question_text`` → question, ``reference_answer`` → answer, ``reference_steps``), stratum
  ``template_id``.
- ``ultrarag``: UltraRAG evaluation JSONL (``id``, ``question``, ``golden_answers``).
- ``grounded``: grounded-QA gold JSONL (``qid``, ``answerable``, ``gold_claim_substr``,
  ``gold_citations``, optional ``question``; docs/answers.md "Grounded QA").
- ``trec``: a TREC qrels file (``qid iter docno grade``); each query becomes a sample whose
  ``relevant_docs`` are its judgments.

In every case the sample id and the qid are the source's id, so system outputs keep their ids.
"""

from __future__ import annotations

import os
from typing import Any

from ragmeter.datasets.gold_model import GoldSample
from ragmeter.datasets.gold_parse import parse_sample
from ragmeter.errors import InputError
from ragmeter.io.files import display_name, open_text
from ragmeter.io.jsonl import iter_jsonl

__all__ = ["FORMATS", "load_foreign"]

FORMATS = ("ragmeter", "graphrag-eval", "ultrarag", "grounded", "trec")


def _graphrag(path: str | os.PathLike[str]) -> list[GoldSample]:
    from ragmeter.io import yamlsafe

    name = display_name(path)
    with open_text(path) as fh:
        data = yamlsafe.load(fh.read(), name)
    if not isinstance(data, list):
        raise InputError(
            "not a list of templates (expected graphrag-eval reference data)", path=name
        )
    samples = []
    for t_index, template in enumerate(data):
        where = f"[{t_index}]"
        if not isinstance(template, dict) or "template_id" not in template:
            raise InputError(
                "template without template_id (expected {template_id, questions})",
                path=name,
                location=where,
            )
        questions = template.get("questions")
        if not isinstance(questions, list):
            raise InputError(
                "questions is not a list (expected a list of questions)",
                path=name,
                location=f"{where}.questions",
            )
        for q_index, q in enumerate(questions):
            loc = f"{where}.questions[{q_index}]"
            if not isinstance(q, dict) or "id" not in q or "question_text" not in q:
                raise InputError(
                    "question without id or question_text (expected both)",
                    path=name,
                    location=loc,
                )
            qid = str(q["id"])
            qa: dict[str, Any] = {
                "qid": qid,
                "question": q["question_text"],
                "template_id": str(template["template_id"]),
            }
            if q.get("reference_answer") is not None:
                qa["answer"] = q["reference_answer"]
            if q.get("reference_steps") is not None:
                qa["reference_steps"] = q["reference_steps"]
            record = {
                "id": qid,
                "strata": {"template_id": str(template["template_id"])},
                "qa_pairs": [qa],
            }
            samples.append(parse_sample(record, path=name, line=None))
    if not samples:
        raise InputError("no questions (expected graphrag-eval reference data)", path=name)
    return samples


def _ultrarag(path: str | os.PathLike[str]) -> list[GoldSample]:
    name = display_name(path)
    samples = []
    for index, (line, obj) in enumerate(iter_jsonl(path)):
        raw_id = obj.get("id", index)
        qa: dict[str, Any] = {"qid": str(raw_id)}
        if obj.get("question") is not None:
            qa["question"] = obj["question"]
        if obj.get("golden_answers") is None:
            raise InputError(
                "golden_answers missing (expected a string or a list of gold answers)",
                path=name,
                line=line,
            )
        qa["golden_answers"] = obj["golden_answers"]
        samples.append(parse_sample({"id": str(raw_id), "qa_pairs": [qa]}, path=name, line=line))
    return samples


def _grounded(path: str | os.PathLike[str]) -> list[GoldSample]:
    name = display_name(path)
    samples = []
    for line, obj in iter_jsonl(path):
        qid = obj.get("qid", obj.get("q_id"))
        if qid is None:
            raise InputError("qid missing (expected a string)", path=name, line=line)
        for need in ("answerable", "gold_claim_substr", "gold_citations"):
            if need not in obj:
                raise InputError(
                    f"{need} missing (expected qid, answerable, gold_claim_substr, gold_citations)",
                    path=name,
                    line=line,
                )
        qa = {
            "qid": str(qid),
            "answerable": obj["answerable"],
            "gold_claim_substr": obj["gold_claim_substr"],
            "gold_citations": obj["gold_citations"],
        }
        if obj.get("question") is not None:
            qa["question"] = obj["question"]
        samples.append(parse_sample({"id": str(qid), "qa_pairs": [qa]}, path=name, line=line))
    return samples


def _trec(path: str | os.PathLike[str]) -> list[GoldSample]:
    name = display_name(path)
    judged: dict[str, dict[str, int]] = {}
    first: dict[str, int] = {}
    with open_text(path) as fh:
        for line_no, raw in enumerate(fh, start=1):
            fields = raw.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) != 4:
                raise InputError(
                    f"{len(fields)} fields, expected 4 (qid iter docno grade)",
                    path=name,
                    line=line_no,
                )
            qid, _, doc, grade = fields
            try:
                value = int(grade)
            except ValueError:
                raise InputError(
                    f"grade {grade!r} is not an integer", path=name, line=line_no
                ) from None
            docs = judged.setdefault(qid, {})
            first.setdefault(qid, line_no)
            if doc in docs:
                raise InputError(
                    f"document {doc!r} is judged twice for query {qid!r}", path=name, line=line_no
                )
            docs[doc] = value
    if not judged:
        raise InputError(
            "no data lines (expected lines of 4 fields: qid iter docno grade)", path=name
        )
    return [
        parse_sample({"id": qid, "relevant_docs": {qid: docs}}, path=name, line=first[qid])
        for qid, docs in judged.items()
    ]


_LOADERS = {"graphrag-eval": _graphrag, "ultrarag": _ultrarag, "grounded": _grounded, "trec": _trec}


def load_foreign(path: str | os.PathLike[str], fmt: str) -> list[GoldSample]:
    """Gold samples from a file in another tool's format (see the module docstring)."""
    try:
        loader = _LOADERS[fmt]
    except KeyError:
        raise InputError(
            f"unknown dataset format {fmt!r} (expected one of {', '.join(FORMATS)})",
            path=display_name(path),
        ) from None
    return loader(path)
