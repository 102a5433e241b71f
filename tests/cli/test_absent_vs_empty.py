"""Absent is not empty: a heritage record without ``ner_annotations`` is not annotated for NER
(as in the runner), a record with ``"ner_annotations": []`` has no entities."""

from __future__ import annotations

import json

from tests.cli.world import TEXT, jsonl
from tests.helpers import invoke

MUS = {"text": "Rijksmuseum Amsterdam", "type": "MUS", "start": 4, "end": 25}


def write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text(jsonl(rows), encoding="utf-8")
    return str(path)


def test_ner_absent_gold_key_leaves_the_document_out_but_an_empty_list_counts(tmp_path):
    pred = write(
        tmp_path,
        "pred.jsonl",
        [{"id": d, "text": TEXT, "ner_annotations": [MUS]} for d in ("d1", "d2")],
    )
    absent = write(
        tmp_path,
        "absent.jsonl",
        [{"id": "d1", "text": TEXT, "ner_annotations": [MUS]}, {"id": "d2", "text": TEXT}],
    )
    empty = write(
        tmp_path,
        "empty.jsonl",
        [
            {"id": "d1", "text": TEXT, "ner_annotations": [MUS]},
            {"id": "d2", "text": TEXT, "ner_annotations": []},
        ],
    )
    res = invoke("ner", absent, pred, "--json")
    assert res.code == 0
    assert res.stderr == (
        f"warning: {absent}: 1 record(s) without ner_annotations not scored ('d2'); "
        'give "ner_annotations": [] for a document without entities\n'
    )
    strict = json.loads(res.stdout)["strict"]["micro"]
    assert (strict["precision"], strict["recall"]) == (1.0, 1.0)
    res = invoke("ner", empty, pred, "--json")
    assert res.code == 0 and res.stderr == ""
    strict = json.loads(res.stdout)["strict"]["micro"]
    assert (strict["precision"], strict["recall"]) == (0.5, 1.0)  # d2's prediction is spurious


def test_ner_and_agreement_without_any_annotated_record(tmp_path):
    bare = write(tmp_path, "bare.jsonl", [{"id": "d1", "text": TEXT}])
    other = write(tmp_path, "other.jsonl", [{"id": "d1", "text": TEXT, "ner_annotations": [MUS]}])
    want = (
        f"{bare}: no record has ner_annotations (expected a list on each record annotated for "
        "NER; [] for a document without entities)\n"
    )
    res = invoke("ner", bare, other)
    assert (res.code, res.stderr) == (2, want)
    res = invoke("agreement", other, bare, "--format", "heritage")
    assert (res.code, res.stderr) == (2, want)


def test_agreement_drops_a_document_one_annotator_left_unannotated(tmp_path):
    a = write(
        tmp_path,
        "a.jsonl",
        [{"id": "d1", "text": TEXT, "ner_annotations": [MUS]}, {"id": "d2", "text": TEXT}],
    )
    b = write(
        tmp_path,
        "b.jsonl",
        [{"id": d, "text": TEXT, "ner_annotations": [MUS]} for d in ("d1", "d2")],
    )
    res = invoke("agreement", a, b, "--format", "heritage", "--json")
    assert res.code == 0 and "1 record(s) without ner_annotations not scored ('d2')" in res.stderr
    assert json.loads(res.stdout)["mean_f1"]["strict"] == 1.0
