"""Reading system outputs: every bad line is one error with the file and line (docs/runner.md)."""

from __future__ import annotations

import json

import pytest

from ragmeter.datasets.gold import GoldSet, parse_sample
from ragmeter.errors import InputError
from ragmeter.runner.outputs import read_answers, read_entities, read_traces

GOLD = GoldSet(
    [
        parse_sample(
            {"id": "s1", "text": "Het Rijksmuseum", "qa_pairs": [{"qid": "q1", "question": "?"}]}
        ),
        parse_sample({"id": "s2", "qa_pairs": [{"qid": "q2", "question": "?"}]}),
    ],
    path="gold.jsonl",
)


def write(tmp_path, name, *rows):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def error(fn, path):
    with pytest.raises(InputError) as exc:
        fn(path, GOLD)
    return str(exc.value).replace(str(path), "F")


def test_answers_spellings_and_fields(tmp_path):
    p = write(
        tmp_path,
        "a.jsonl",
        {
            "id": "q1",
            "answer": "x",
            "contexts": ["c1", {"id": "d", "text": "c2"}],
            "citations": ["d"],
            "retrieved_ids": ["d", 7],
        },
        {"id": "q2", "answer": None},
    )
    out = read_answers(p, GOLD)
    a = out.records["q1"]
    assert (a.answer, a.contexts, a.citations, a.retrieved_ids) == (
        "x",
        ({"text": "c1"}, {"id": "d", "text": "c2"}),
        ("d",),
        ("d", "7"),
    )
    assert out.records["q2"].answer is None and out.lines == {"q1": 1, "q2": 2}
    grounded = write(
        tmp_path,
        "g.jsonl",
        {"qid": "q1", "retrieved_ids": ["d"], "answer_json": {"claim": "c", "citations": ["d"]}},
    )
    g = read_answers(grounded, GOLD).records["q1"]
    assert (g.answer, g.citations) == ("c", ("d",))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [{"id": "q1", "answer": "x"}, {"id": "q1", "answer": "y"}],
            "F:2: id 'q1' appears twice (first at line 1)",
        ),
        ([{"answer": "x"}], "F:1: no id (expected one of id, qid, q_id, question_id)"),
        ([{"id": "q1", "answer": 3}], "F:1: answer is a number (expected a string or null)"),
        (
            [{"id": "q1", "answer": "x", "contexts": "c"}],
            "F:1: contexts is a string (expected a list of strings or {id, text} objects)",
        ),
        (
            [{"id": "q1", "answer": "x", "citations": "d"}],
            "F:1: citations is a string (expected a list of ids)",
        ),
        (
            [{"id": "qq", "answer": "x"}],
            "F:1: id 'qq' matches no gold QA pair (expected a qid of gold.jsonl)",
        ),
        (
            [{"id": "q1", "answer": "x"}, {"qid": "q2", "answer": "y"}],
            "F:2: mixed formats: this line uses 'qid' and 'answer' where line 1 used 'id' and "
            "'answer' (expected one format per file)",
        ),
        (
            ['{"id": "q1", "answer": NaN}'],
            "F:1: NaN is not valid JSON (NaN and infinity have no JSON spelling; use null)",
        ),
        (["[1, 2]"], "F:1: a JSON list (expected one JSON object per line)"),
    ],
)
def test_answers_errors(tmp_path, rows, message):
    assert error(read_answers, write(tmp_path, "a.jsonl", *rows)) == message


def test_empty_output_file(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("\n\n")
    assert error(read_answers, p) == "F: no data lines (expected one JSON object per line)"


def test_entities(tmp_path):
    p = write(
        tmp_path,
        "e.jsonl",
        {
            "id": "s1",
            "entities": [{"start": 4, "end": 15, "type": "MUS"}],
            "type_classification": "M",
            "entity_linking": [{"start": 4, "end": 15, "wikidata_id": "Q1"}],
        },
    )
    e = read_entities(p, GOLD).records["s1"]
    assert (e.ner[0]["type"], e.types, e.links[0]["wikidata_id"]) == ("MUS", ("M", ()), "Q1")
    for rows, message in [
        (
            [{"id": "s9"}],
            "F:1: id 's9' matches no gold sample (expected a sample id of gold.jsonl)",
        ),
        (
            [{"id": "s1", "ner_annotation": []}],
            "F:1: unknown key 'ner_annotation'; did you mean 'ner_annotations'?",
        ),
        (
            [{"id": "s1", "ner_annotations": [{"start": 1, "end": 2}]}],
            "F:1: ner_annotations[0].type missing (expected start, end and type)",
        ),
        (
            [{"id": "s1", "type_classification": {"secondary_types": []}}],
            "F:1: type_classification.primary_type is null (expected a type label)",
        ),
        (
            [{"id": "s1", "entity_linking": {"a": 1}}],
            "F:1: entity_linking is an object (expected a list of link predictions)",
        ),
    ]:
        assert error(read_entities, write(tmp_path, "e.jsonl", *rows)) == message


def test_traces_in_three_layouts(tmp_path):
    rec = {"question_id": "q1", "actual_answer": "a", "actual_steps": []}
    jsonl = write(tmp_path, "t.jsonl", rec)
    array = tmp_path / "t.json"
    array.write_text(json.dumps([rec]))
    keyed = tmp_path / "k.json"
    keyed.write_text(json.dumps({"q1": {"actual_answer": "a"}}, indent=2))
    for path in (jsonl, array, keyed):
        assert list(read_traces(path, GOLD).records) == ["q1"]
    assert error(read_traces, write(tmp_path, "t2.jsonl", {"question_id": "zz"})) == (
        "F:1: id 'zz' matches no gold QA pair (expected a qid of gold.jsonl)"
    )
