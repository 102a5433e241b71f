"""The gold-standard format (docs/runner.md): parsing, offsets, every error as one line."""

from __future__ import annotations

import json

import pytest

from ragmeter.datasets import describe, load_gold, units
from ragmeter.errors import InputError
from tests.helpers import invoke

TEXT = (
    "Het Rijksmuseum Amsterdam (ISIL: NL-AmRM) werd opgericht in 1800 en beheert de grootste "
    "collectie Nederlandse kunst."
)

# the heritage sample entry as published, with its two wrong offsets (docs/runner.md)
HERITAGE = {
    "id": "eval_001",
    "text": TEXT,
    "strata": {"custodian_type": "M", "country": "NL", "data_tier": 1, "source_type": "web"},
    "ner_annotations": [
        {"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 4, "end": 25},
        {"text": "NL-AmRM", "type": "IDENTIFIER", "start": 33, "end": 40},
        {"text": "1800", "type": "TMP", "start": 58, "end": 62},
        {"text": "Nederlandse", "type": "TOP", "start": 93, "end": 104},
    ],
    "type_classification": {"primary_type": "M", "secondary_types": []},
    "entity_linking": {
        "Rijksmuseum Amsterdam": {
            "wikidata_id": "Q190804",
            "viaf_id": "148691498",
            "isil_code": "NL-AmRM",
        }
    },
    "qa_pairs": [
        {
            "question": "Wanneer is het Rijksmuseum opgericht?",
            "answer": "Het Rijksmuseum werd opgericht in 1800.",
            "answer_type": "factual",
            "supporting_facts": ["opgericht in 1800"],
        }
    ],
}


def write(tmp_path, *rows, name="gold.jsonl"):
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_the_heritage_sample_reports_both_wrong_offsets(tmp_path):
    path = write(tmp_path, HERITAGE)
    with pytest.raises(InputError) as exc:
        load_gold(path)
    assert str(exc.value) == (
        f"{path}:1: sample 'eval_001': ner_annotations[2]: text[58:62] is 'n 18', not '1800' "
        "(expected the mention's offsets; it occurs once, at 60-64); ner_annotations[3]: "
        "text[93:104] is 'ctie Nederl', not 'Nederlandse' (expected the mention's offsets; it "
        "occurs once, at 98-109)"
    )


def test_relocate_moves_spans_to_their_unique_occurrence(tmp_path):
    gold = load_gold(write(tmp_path, HERITAGE), on_offset_mismatch="relocate")
    s = gold.by_id["eval_001"]
    assert [(m.text, m.start, m.end) for m in s.ner_annotations] == [
        ("Rijksmuseum Amsterdam", 4, 25),
        ("NL-AmRM", 33, 40),
        ("1800", 60, 64),
        ("Nederlandse", 98, 109),
    ]
    assert len(gold.warnings) == 2 and "moved 58-62 to 60-64" in gold.warnings[0]
    link = s.entity_linking[0]
    assert (link.mention_id, link.kb_ids, link.identifiers["isil"]) == (
        "eval_001:4-25",
        ("Q190804",),
        "NL-AmRM",
    )
    assert s.qa_pairs[0].qid == "eval_001-q1" and s.qa_pairs[0].golds == [
        "Het Rijksmuseum werd opgericht in 1800."
    ]
    skipped = load_gold(write(tmp_path, HERITAGE), on_offset_mismatch="skip")
    assert len(skipped.by_id["eval_001"].ner_annotations) == 2


def fixed(**changes):
    row = json.loads(json.dumps(HERITAGE))
    row["ner_annotations"][2].update(start=60, end=64)
    row["ner_annotations"][3].update(start=98, end=109)
    row.update(changes)
    return row


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {**fixed(), "ner_annotation": []},
            "sample 'eval_001': ner_annotation: unknown key (expected one of id, text, "
            "language, strata, ner_annotations, type_classification, entity_linking, "
            "qa_pairs, relevant_docs, meta; put free-form data under meta); did you mean "
            "'ner_annotations'?",
        ),
        ({"text": "x"}, "id: missing (expected a unique sample id)"),
        (fixed(id=""), "id: is empty (expected a unique sample id)"),
        (fixed(id=[1]), "id: is a list (expected a string)"),
        (
            fixed(strata={"country": ["NL"]}),
            "sample 'eval_001': strata.country: is a list (expected a string, number or null)",
        ),
        (
            fixed(ner_annotations=[{"text": "Het", "type": "X", "start": 0, "end": 300}]),
            "sample 'eval_001': ner_annotations[0]: offsets 0-300 are outside the text "
            "of 116 characters (expected 0 <= start < end <= len(text), half-open)",
        ),
        (
            fixed(ner_annotations=[{"text": "Het", "type": "X", "start": "0", "end": 3}]),
            "sample 'eval_001': ner_annotations[0].start: is a string (expected an integer offset)",
        ),
        (
            fixed(ner_annotations=[{"text": "Het", "start": 0, "end": 3}]),
            "sample 'eval_001': ner_annotations[0].type: missing (expected type, start and end)",
        ),
        (
            fixed(
                ner_annotations=[
                    {"type": "X", "start": 0, "end": 3},
                    {"type": "X", "start": 0, "end": 3},
                ]
            ),
            "sample 'eval_001': ner_annotations[1]: duplicates ner_annotations[0] (X 0-3)",
        ),
        (
            fixed(
                ner_annotations=[{"text": "de", "type": "X", "start": 0, "end": 2}],
                entity_linking=None,
            ),
            "sample 'eval_001': ner_annotations[0]: text[0:2] is 'He', not 'de' "
            "(expected the mention's offsets; it occurs 2 times)",
        ),
        (
            {**fixed(), "entity_linking": {"Amsterdam": {"wikidata_id": "Q727"}}},
            "sample 'eval_001': entity_linking.Amsterdam: no NER annotations have this "
            "text (expected exactly one; use the list form with start and end to link an "
            "ambiguous surface)",
        ),
        (
            {
                **fixed(),
                "entity_linking": [{"start": 4, "end": 25, "wikidata_id": "Q1", "nil": True}],
            },
            "sample 'eval_001': entity_linking[0]: is nil but has KB ids (expected one "
            "or the other)",
        ),
        (
            {**fixed(), "entity_linking": [{"wikidata_id": "Q1"}]},
            "sample 'eval_001': entity_linking[0]: has no mention_id and no offsets "
            "(expected one of them)",
        ),
        (
            {**fixed(), "qa_pairs": [{"qid": "a", "answerable": "false"}]},
            "sample 'eval_001': qa_pairs[0].answerable: is a string (expected a JSON boolean)",
        ),
        (
            {**fixed(), "qa_pairs": [{"qid": "a", "anwser": "x"}]},
            "sample 'eval_001': qa_pairs[0].anwser: unknown key (expected one of qid, "
            "question, answer, answer_type, golden_answers, supporting_facts, "
            "gold_claim_substr, gold_citations, answerable, template_id, "
            "reference_steps, reference_contexts, meta; put free-form data under meta); "
            "did you mean 'answer'?",
        ),
        (
            {**fixed(), "relevant_docs": {"eval_001-q9": {"d": 1}}},
            "sample 'eval_001': relevant_docs.eval_001-q9: names no qid of this sample "
            "(expected a qid of its qa_pairs, or the sample id)",
        ),
        (
            {**fixed(), "relevant_docs": {"eval_001-q1": {"d": 1.5}}},
            "sample 'eval_001': relevant_docs.eval_001-q1.d: grade is a number (expected "
            "an integer)",
        ),
        (
            {**fixed(), "type_classification": {"secondary_types": ["A"]}},
            "sample 'eval_001': type_classification.primary_type: missing (expected a type label)",
        ),
    ],
)
def test_one_line_errors(tmp_path, row, message):
    path = write(tmp_path, row)
    with pytest.raises(InputError) as exc:
        load_gold(path)
    assert str(exc.value) == f"{path}:1: {message}"


def test_duplicate_ids_and_qids(tmp_path):
    path = write(tmp_path, fixed(), fixed())
    with pytest.raises(InputError) as exc:
        load_gold(path)
    assert str(exc.value) == (
        f"{path}:2: sample 'eval_001': id: appears twice (first at line 1; expected a unique "
        "sample id)"
    )
    other = fixed(id="eval_002")
    other["qa_pairs"][0]["qid"] = "eval_001-q1"
    with pytest.raises(InputError) as exc:
        load_gold(write(tmp_path, fixed(), other))
    assert str(exc.value) == (
        f"{path}:2: sample 'eval_002': qa_pairs[0].qid: qid 'eval_001-q1' appears twice (first "
        "in sample 'eval_001' at line 1; expected a unique qid)"
    )


def test_unicode_and_offsets_in_code_points(tmp_path):
    text = "🏛 Rijksmuseum in Zürich"
    row = {
        "id": "u",
        "text": text,
        "ner_annotations": [{"text": "Zürich", "type": "TOP", "start": 17, "end": 23}],
    }
    gold = load_gold(write(tmp_path, row))
    m = gold.by_id["u"].ner_annotations[0]
    assert text[m.start : m.end] == "Zürich"


def test_task_views(tmp_path):
    rows = [
        fixed(relevant_docs={"eval_001-q1": {"doc-17": 3, "doc-4": 1}}),
        {
            "id": "s2",
            "qa_pairs": [
                {"qid": "s2-q1", "question": "?", "golden_answers": "x", "answerable": False},
                {"qid": "s2-q2", "question": "?", "reference_steps": [[{"name": "retrieval"}]]},
            ],
            "entity_linking": [{"mention_id": "m1", "wikidata_id": "NIL"}],
        },
    ]
    gold = load_gold(write(tmp_path, *rows))
    assert [u.id for u in units(gold, "retrieval")] == ["eval_001-q1"]
    assert [u.id for u in units(gold, "answers")] == ["eval_001-q1", "s2-q1"]
    assert [u.id for u in units(gold, "grounded")] == ["s2-q1"]
    assert [u.id for u in units(gold, "steps")] == ["s2-q2"]
    assert [u.id for u in units(gold, "judge")] == ["eval_001-q1", "s2-q1", "s2-q2"]
    assert [u.id for u in units(gold, "ner")] == ["eval_001"]
    assert [u.id for u in units(gold, "linking")] == ["eval_001:4-25", "m1"]
    assert gold.by_id["s2"].qa_pairs[0].golds == ["x"]
    assert gold.by_id["s2"].entity_linking[0].nil
    d = describe(gold)
    assert d["tasks"]["linking"] == {"units": 2, "samples": 2, "nil": 1, "in_kb": 1}
    assert d["tasks"]["grounded"] == {"units": 1, "samples": 1, "answerable": 0, "unanswerable": 1}
    assert (d["nil_ratio"], d["answerable_ratio"]) == (0.5, 0.0)
    assert d["strata"]["country"] == {"NL": 1, "__missing__": 1}
    assert d["labels"]["ner"] == {"GRP.HER.MUS": 1, "IDENTIFIER": 1, "TMP": 1, "TOP": 1}


def test_task_views_cover_every_runner_task():
    from ragmeter.datasets import TASK_UNITS
    from ragmeter.runner.tasks import task_names

    assert list(TASK_UNITS) == task_names()


def test_foreign_formats(tmp_path):
    g = tmp_path / "ref.yaml"
    g.write_text(
        "- template_id: t1\n  questions:\n    - id: 101\n      question_text: Who?\n"
        "      reference_answer: Me\n      reference_steps: [[{name: retrieval}]]\n"
    )
    gold = load_gold(g, fmt="graphrag-eval")
    s = gold.by_id["101"]
    assert (s.strata, s.qa_pairs[0].template_id, s.qa_pairs[0].answer) == (
        {"template_id": "t1"},
        "t1",
        "Me",
    )
    u = write(tmp_path, {"id": 0, "question": "q", "golden_answers": ["a", "b"]}, name="u.jsonl")
    assert load_gold(u, fmt="ultrarag").qa["0"][1].golds == ["a", "b"]
    gr = write(
        tmp_path,
        {"qid": "g1", "answerable": True, "gold_claim_substr": ["abcde"], "gold_citations": ["d1"]},
        name="g.jsonl",
    )
    qa = load_gold(gr, fmt="grounded").qa["g1"][1]
    assert (qa.answerable, qa.gold_citations) == (True, ("d1",))
    q = tmp_path / "qrels"
    q.write_text("301 0 D1 2\n301 0 D2 0\n302 0 D9 1\n")
    trec = load_gold(q, fmt="trec")
    assert trec.by_id["301"].relevant_docs == {"301": {"D1": 2, "D2": 0}}
    q.write_text("301 0 D1 2\n301 0 D1 1\n")
    with pytest.raises(InputError, match=r"qrels:2: document 'D1' is judged twice for query '301'"):
        load_gold(q, fmt="trec")
    bad = write(
        tmp_path,
        {"qid": "g1", "answerable": "yes", "gold_claim_substr": [], "gold_citations": []},
        name="b.jsonl",
    )
    with pytest.raises(
        InputError,
        match=(
            r"b.jsonl:1: sample 'g1': qa_pairs\[0\].answerable: is a string \(expected a JSON "
            r"boolean\)"
        ),
    ):
        load_gold(bad, fmt="grounded")


def test_validate_lists_every_problem_of_every_sample(tmp_path):
    broken = fixed(
        colour=1,
        strata={"country": ["NL"]},
        type_classification={"primary_type": "museum", "secondary_types": ["A", "Z"]},
        language=7,
    )
    broken["ner_annotations"][2].update(start=58, end=62)  # wrong span
    broken["ner_annotations"].append({"text": "x", "type": 3, "start": 0, "end": 1})
    broken["qa_pairs"].append({"question": 1, "answerable": "yes"})
    path = write(tmp_path, fixed(), broken, fixed(id="eval_003"), {"id": 9, "txt": ""})
    out = invoke("dataset", "validate", str(path))
    assert out.code == 2
    p = f"{path}:2: sample 'eval_001'"
    assert out.stderr.splitlines() == [
        f"{p}: colour: unknown key (expected one of id, text, language, strata, ner_annotations, "
        "type_classification, entity_linking, qa_pairs, relevant_docs, meta; put free-form data "
        "under meta)",
        f"{p}: strata.country: is a list (expected a string, number or null)",
        f"{p}: ner_annotations[4].type: is a number (expected a string)",
        f"{p}: qa_pairs[1].answerable: is a string (expected a JSON boolean)",
        f"{p}: ner_annotations[2]: text[58:62] is 'n 18', not '1800' (expected the mention's "
        "offsets; it occurs once, at 60-64)",
        f"{p}: language: is a number (expected a string)",
        # a sample with other problems still counts for duplicate ids
        f"{p}: id: appears twice (first at line 1; expected a unique sample id)",
        f"{p}: qa_pairs[0].qid: qid 'eval_001-q1' appears twice (first in sample 'eval_001' at "
        "line 1; expected a unique qid)",
        f"{p}: type_classification.primary_type: 'museum' is not a heritage type label "
        "(expected one of G L A M O R C U B E S F I X P H D N T; labels are compared exactly)",
        f"{p}: type_classification.secondary_types[1]: 'Z' is not a heritage type label "
        "(expected one of G L A M O R C U B E S F I X P H D N T; labels are compared exactly)",
        f"{path}:4: sample '9': txt: unknown key (expected one of id, text, language, strata, "
        "ner_annotations, type_classification, entity_linking, qa_pairs, relevant_docs, meta; "
        "put free-form data under meta); did you mean 'text'?",
        f"{path}: 11 problem(s) in 4 samples",
    ]
    # --profile none leaves labels alone; a profile file is a label set of its own
    assert invoke("dataset", "validate", str(path), "--profile", "none").stderr.endswith(
        f"{path}: 9 problem(s) in 4 samples\n"
    )
    labels = tmp_path / "labels.yaml"
    labels.write_text("name: mine\nvocabulary: [museum, A, Z]\nparent: {}\n")
    mine = invoke("dataset", "validate", str(path), "--profile", str(labels))
    assert f"{p}: type_classification.secondary_types[1]" not in mine.stderr
    assert (
        f"{path}:1: sample 'eval_001': type_classification.primary_type: 'M' is not a mine type "
        "label (expected one of museum A Z; labels are compared exactly)"
        in mine.stderr.splitlines()
    )
    bad = invoke("dataset", "validate", str(path), "--profile", "heritge")
    assert (bad.code, bad.stderr) == (
        2,
        "ragmeter dataset: --profile: unknown profile 'heritge' (expected one of heritage or a "
        "YAML/JSON file)\n",
    )
    # stats checks the labels too (the first wrong one, as a run would)
    wrong = write(tmp_path, fixed(type_classification={"primary_type": "X1"}), name="w.jsonl")
    stats = invoke("dataset", "stats", str(wrong))
    assert (stats.code, stats.stderr) == (
        2,
        f"{wrong}:1: sample 'eval_001': type_classification.primary_type: 'X1' is not a "
        "heritage type label (expected one of G L A M O R C U B E S F I X P H D N T; labels are "
        "compared exactly)\n",
    )
    assert invoke("dataset", "stats", str(wrong), "--profile", "none").code == 0


def test_dataset_stats_and_validate_commands(tmp_path):
    path = write(tmp_path, fixed(), HERITAGE | {"id": "eval_002"}, {"id": "x", "strata": []})
    out = invoke("dataset", "validate", str(path))
    assert out.code == 2
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith(f"{path}:2: sample 'eval_002': ner_annotations[2]: text[58:62]")
    assert lines[1].startswith(f"{path}:2: sample 'eval_002': ner_annotations[3]: text[93:104]")
    assert (
        lines[2] == f"{path}:3: sample 'x': strata: is a list (expected an object factor -> value)"
    )
    assert lines[3] == f"{path}: 3 problem(s) in 3 samples"
    good = write(tmp_path, fixed(), name="ok.jsonl")
    assert invoke("dataset", "validate", str(good)).stdout == f"{good}: 1 samples, no problems\n"
    stats = invoke("dataset", "stats", str(good), "--json")
    data = json.loads(stats.stdout)
    assert data["samples"] == 1 and data["tasks"]["ner"]["mentions"] == 4
    written = tmp_path / "stats.json"
    also = invoke("dataset", "stats", str(good), "-o", str(written))
    assert also.code == 0 and "linking" in also.stdout  # the table still prints
    assert json.loads(written.read_text()) == data
    table = invoke("dataset", "stats", str(good))
    assert table.code == 0 and "linking" in table.stdout and "custodian_type" in table.stdout
    assert invoke("dataset", "stats", str(path)).code == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    e = invoke("dataset", "stats", str(empty))
    assert (e.code, e.stderr) == (
        2,
        f"{empty}: no data lines (expected one JSON object per line)\n",
    )
