"""Writing what a live system returned as the output files the runner reads.

``results/<evaluation-id>/outputs/<system>/`` gets ``run.trec`` (retrieve), ``answers.jsonl``
(answer, with the retrieved ids and contexts) and ``entities.jsonl`` (extract_entities, classify
and link per gold sample), in the formats of docs/runner.md, so the unchanged tasks evaluate
them and a user can re-run the evaluation from these files alone. A unit whose call failed has
no line; its ``system_error`` row is added by the runner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragmeter.datasets.gold import GoldSet
from ragmeter.io.files import atomic_write
from ragmeter.systems.session import SystemCalls

__all__ = ["materialise"]


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _write_run(path: Path, name: str, ranked: dict[str, list[list[Any]]]) -> bool:
    if not any(ranked.values()):
        return False  # an empty TREC file is not a run; the retrieval task says why it skipped
    with atomic_write(path) as fh:
        for qid, docs in ranked.items():
            for rank, (doc, score) in enumerate(docs, 1):
                fh.write(f"{qid} Q0 {doc} {rank} {score!r} {name}\n")
    return True


def _write_answers(path: Path, calls: SystemCalls) -> bool:
    answers = calls.results.get("answer", {})
    if not answers:
        return False
    inputs = calls.inputs.get("answer", {})
    with atomic_write(path) as fh:
        for qid in inputs:  # gold order, whatever order the calls finished in
            if qid not in answers:
                continue
            value = answers[qid]
            given = inputs.get(qid, {}).get("contexts", [])
            record: dict[str, Any] = {"id": qid, "answer": value.get("answer")}
            if value.get("citations") is not None:
                record["citations"] = value["citations"]
            contexts = value.get("contexts")
            if contexts is None:
                contexts = [
                    {k: c[k] for k in ("id", "text", "title") if k in c}
                    for c in given
                    if "text" in c
                ]
            if contexts:
                record["contexts"] = contexts
            if given:
                record["retrieved_ids"] = [c["id"] for c in given]
            fh.write(_line(record))
    return True


def _write_entities(path: Path, gold: GoldSet, calls: SystemCalls) -> bool:
    ner = calls.results.get("extract_entities", {})
    types = calls.results.get("classify", {})
    links = calls.results.get("link", {})
    if not (ner or types or links):
        return False
    with atomic_write(path) as fh:
        for sample in gold:
            record: dict[str, Any] = {"id": sample.id}
            if sample.id in ner:
                record["ner_annotations"] = ner[sample.id]
            if sample.id in types:
                record["type_classification"] = types[sample.id]
            mine = [
                {"mention_id": link.mention_id, **links[link.mention_id]}
                for link in sample.entity_linking or ()
                if link.mention_id in links
            ]
            if mine:
                record["entity_linking"] = mine
            if len(record) > 1:
                fh.write(_line(record))
    return True


def materialise(calls: SystemCalls, gold: GoldSet, folder: Path) -> dict[str, Path]:
    """Write the output files of one system; returns output kind → path of those written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    if "retrieve" in calls.results:
        ranked = {
            qid: calls.results["retrieve"][qid]
            for qid in calls.inputs.get("retrieve", {})
            if qid in calls.results["retrieve"]
        }
        if _write_run(folder / "run.trec", calls.name, ranked):
            written["run"] = folder / "run.trec"
    if _write_answers(folder / "answers.jsonl", calls):
        written["answers"] = folder / "answers.jsonl"
    if _write_entities(folder / "entities.jsonl", gold, calls):
        written["entities"] = folder / "entities.jsonl"
    return written
