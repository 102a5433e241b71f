"""SQuAD v2 under the ``squad`` profile: an empty answer list is an unanswerable question, scored
as the official v2 evaluation script scores it, so the overall EM/F1 are the script's.

The fixture is SQuAD-v2-shaped (``data → paragraphs → qas`` with ``is_impossible``), written for
this test. The reference below follows the official script's definitions (normalize_answer,
compute_exact, compute_f1, the ``['']`` gold of unanswerable questions, and
``100.0 * sum(scores.values()) / total`` in file order)."""

from __future__ import annotations

import collections
import json
import re
import string

import pytest

import ragmeter.answers as ra
from tests.helpers import invoke


def _qa(qid, question, answers):
    return {
        "id": qid,
        "question": question,
        "answers": [{"text": a, "answer_start": 0} for a in answers],
        "is_impossible": not answers,
    }


DATASET = {
    "version": "v2.0",
    "data": [
        {
            "title": "Normans",
            "paragraphs": [
                {
                    "context": "The Normans were the people who in the 10th and 11th centuries ...",
                    "qas": [
                        _qa("n1", "In what country is Normandy located?", ["France"] * 3),
                        _qa(
                            "n2",
                            "When were the Normans in Normandy?",
                            ["10th and 11th centuries", "in the 10th and 11th centuries"],
                        ),
                        _qa(
                            "n3",
                            "From which countries did the Norse originate?",
                            ["Denmark, Iceland and Norway"],
                        ),
                        _qa("n4", "Who did King Charles III swear fealty to?", []),
                        _qa("n5", "When did the Frankish identity emerge?", []),
                        _qa(
                            "n6",
                            "Who was the duke in the battle of Hastings?",
                            ["William the Conqueror"],
                        ),
                    ],
                },
                {
                    "context": "The English name Normans comes from the French words ...",
                    "qas": [
                        _qa(
                            "n7",
                            "What is the original meaning of the word Norman?",
                            ["Norseman, Viking"],
                        ),
                        _qa(
                            "n8",
                            "When was the Latin version of the word Norman first recorded?",
                            [],
                        ),
                        _qa("n9", "What name comes from the English words Normans/Normanz?", []),
                    ],
                },
            ],
        },
        {
            "title": "Computational_complexity_theory",
            "paragraphs": [
                {
                    "context": "Computational complexity theory is a branch of ...",
                    "qas": [
                        _qa(
                            "c1",
                            "What branch of computer science classifies problems by difficulty?",
                            ["Computational complexity theory"],
                        ),
                        _qa(
                            "c2",
                            "What is the term for a task that can be solved by a computer?",
                            ["computational problem", "A computational problem"],
                        ),
                        _qa("c3", "What measure of a computational problem bounds the time?", []),
                    ],
                }
            ],
        },
    ],
}

PREDICTIONS = {
    "n1": "France",
    "n2": "10th century",
    "n3": "Denmark and Norway",
    "n4": "",  # unanswerable, abstained: right
    "n5": "the 10th century",  # unanswerable, answered: wrong
    "n6": "William",
    "n7": "Viking",
    "n8": "",
    "n9": "Normans",
    "c1": "complexity theory",
    "c2": "a computational problem",
    "c3": "",
}


# -- the official SQuAD v2 evaluation, as the script defines it --------------------------------
def _normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _compute_f1(a_gold: str, a_pred: str) -> float:
    gold_toks = _normalize_answer(a_gold).split()
    pred_toks = _normalize_answer(a_pred).split()
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def _official_raw_scores(dataset, preds):
    exact, f1 = {}, {}
    for article in dataset["data"]:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                golds = [a["text"] for a in qa["answers"] if _normalize_answer(a["text"])]
                if not golds:
                    golds = [""]  # unanswerable: only the empty answer is right
                pred = preds[qa["id"]]
                exact[qa["id"]] = max(
                    int(_normalize_answer(g) == _normalize_answer(pred)) for g in golds
                )
                f1[qa["id"]] = max(_compute_f1(g, pred) for g in golds)
    return exact, f1


def _rows():
    for article in DATASET["data"]:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                yield {
                    "id": qa["id"],
                    "question": qa["question"],
                    "golden_answers": [a["text"] for a in qa["answers"]],
                    "pred_answer": PREDICTIONS[qa["id"]],
                }


def test_overall_em_f1_match_the_official_v2_script(tmp_path):
    path = tmp_path / "squad_v2.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    res = invoke("answers", str(path), "-m", "em", "-m", "f1")
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    exact, f1 = _official_raw_scores(DATASET, PREDICTIONS)
    total = len(exact)
    # per question, and overall (the script reports 100 · sum / total, summed in file order)
    assert out["em"] == [float(v) for v in exact.values()]
    assert out["f1"] == [float(v) for v in f1.values()]
    assert out["ragmeter"]["status_counts"] == {"ok": total}
    assert out["avg_em"] == sum(exact.values()) / total
    assert out["avg_f1"] == sum(f1.values()) / total
    assert 100.0 * out["avg_em"] == pytest.approx(100.0 * sum(exact.values()) / total, abs=1e-12)
    assert 100.0 * out["avg_f1"] == pytest.approx(100.0 * sum(f1.values()) / total, abs=1e-12)
    # the unanswerable questions count: HasAns-only would be a different number
    has_ans = [
        q for q, v in exact.items() if any(r["id"] == q and r["golden_answers"] for r in _rows())
    ]
    assert len(has_ans) == 7 and out["avg_em"] != sum(exact[q] for q in has_ans) / len(has_ans)
    assert [out["em"][i] for i in (3, 4, 7, 8, 11)] == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_unanswerable_is_only_an_explicit_empty_list():
    # a missing gold is not "unanswerable": it has no gold and is left out
    res = ra.evaluate(["", "", "x"], [[], None, []], metrics=["em", "f1", "rouge-l"])
    assert res.per_sample["status"] == ["ok", "no_gold", "ok"]
    assert res.per_sample["em"] == [1.0, None, 0.0]
    assert res.per_sample["f1"] == [1.0, None, 0.0]
    assert res.per_sample["rouge-l"] == [1.0, None, 0.0]
    # ultrarag and flashrag keep their references' rule (an empty list scores 0, counted)
    res = ra.evaluate([""], [[]], metrics=["em"], profile="ultrarag")
    assert (res.per_sample["status"], res.per_sample["em"]) == (["ok"], [0.0])
