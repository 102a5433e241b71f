"""Each extraction task's entry point is ``evaluate``; the old names warn and give the same."""

from __future__ import annotations

from ragmeter.extraction import classification, linking, ner
from tests.helpers import warns

GOLD = {"d1": [(4, 25, "MUS"), (36, 40, "TMP")]}
PRED = {"d1": [(4, 15, "MUS"), (16, 25, "LOC"), (36, 40, "TMP")]}


def test_ner_evaluate_and_deprecated_alias_agree() -> None:
    new = ner.evaluate(GOLD, PRED)
    assert [new.get(f"overall.{s}.f1") for s in ("strict", "exact", "partial", "type")] == [
        0.4,
        0.4,
        0.6,
        0.8,
    ]
    with warns(DeprecationWarning, r"evaluate_ner is deprecated: use .*ner\.evaluate"):
        old = ner.evaluate_ner(GOLD, PRED)
    assert old.to_dict() == new.to_dict()
    assert ner.evaluate_ner.__name__ == "evaluate_ner"


def test_ner_tags_alias() -> None:
    tags = [["B-MUS", "I-MUS", "O", "B-LOC", "O"]]
    with warns(DeprecationWarning, "evaluate_ner_tags"):
        old = ner.evaluate_ner_tags(tags, tags)
    assert old.get("overall.strict.f1") == ner.evaluate_tags(tags, tags).get("overall.strict.f1")
    assert old.get("overall.strict.f1") == 1.0


def test_classification_and_linking_aliases() -> None:
    gold, pred = dict(enumerate("MMMAALGM")), dict(enumerate("MMAALLMM"))
    assert classification.evaluate(gold, pred).accuracy == 0.625
    with warns(DeprecationWarning, "evaluate_types is deprecated"):
        assert classification.evaluate_types(gold, pred).accuracy == 0.625
    g = {1: {"M"}, 2: {"M", "A"}}
    with warns(DeprecationWarning, "evaluate_types_multilabel"):
        old = classification.evaluate_types_multilabel(g, g)
    assert old.subset_accuracy == classification.evaluate_multilabel(g, g).subset_accuracy == 1.0
    lg = {"doc1:4-25": "Q190804", "doc2:0-8": "Q5"}
    lp = {"doc1:4-25": [{"kb_id": "Q190804", "score": 0.9}], "doc2:0-8": []}
    assert linking.evaluate(lg, lp, k=(1,)).ranking["hits@1"] == 0.5
    with warns(DeprecationWarning, "evaluate_linking is deprecated"):
        assert linking.evaluate_linking(lg, lp, k=(1,)).ranking["hits@1"] == 0.5
    assert linking.evaluate_linking_e2e.__wrapped__ is linking.evaluate_e2e
