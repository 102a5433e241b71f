"""Which gold samples (and which parts of them) each runner task reads (docs/runner.md).

A *unit* is what a task scores one value for: a query (retrieval), a QA pair (answers, grounded,
semantic, judge, steps), a sample (ner, classification) or a gold mention (linking). Every unit
belongs to one gold sample, whose strata it inherits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ragmeter.datasets.gold import GoldSample, GoldSet, QAPair

__all__ = ["TASK_UNITS", "Unit", "units"]


@dataclass(frozen=True)
class Unit:
    id: str
    sample: GoldSample
    qa: QAPair | None = None
    item: Any = None  # the query's grades, or the gold Link


def _retrieval(gold: GoldSet) -> Iterator[Unit]:
    for s in gold:
        for qid, grades in (s.relevant_docs or {}).items():
            qa = next((q for q in s.qa_pairs if q.qid == qid), None)
            yield Unit(qid, s, qa, grades)


def _qa(pred: Callable[[QAPair], bool]) -> Callable[[GoldSet], Iterator[Unit]]:
    def gen(gold: GoldSet) -> Iterator[Unit]:
        for s in gold:
            for qa in s.qa_pairs:
                if pred(qa):
                    yield Unit(qa.qid, s, qa)

    return gen


def _ner(gold: GoldSet) -> Iterator[Unit]:
    for s in gold:
        if s.ner_annotations is not None:
            yield Unit(s.id, s)


def _classification(gold: GoldSet) -> Iterator[Unit]:
    for s in gold:
        if s.type_classification is not None:
            yield Unit(s.id, s)


def _linking(gold: GoldSet) -> Iterator[Unit]:
    for s in gold:
        for link in s.entity_linking or ():
            yield Unit(link.mention_id, s, None, link)


TASK_UNITS: dict[str, Callable[[GoldSet], Iterator[Unit]]] = {
    "retrieval": _retrieval,
    "answers": _qa(lambda q: q.golden_answers is not None or q.answer is not None),
    "grounded": _qa(lambda q: q.answerable is not None),
    "semantic": _qa(lambda q: q.golden_answers is not None or q.answer is not None),
    "judge": _qa(lambda q: q.question is not None),
    "steps": _qa(lambda q: q.reference_steps is not None),
    "ner": _ner,
    "classification": _classification,
    "linking": _linking,
}
"""Task name → the units of a gold set it scores (keys are the registry's task names)."""


def units(gold: GoldSet, task: str) -> list[Unit]:
    """The units of ``task`` in ``gold``, in file order."""
    return list(TASK_UNITS[task](gold))
