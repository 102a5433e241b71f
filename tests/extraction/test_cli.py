"""``ragmeter ner``, ``classify``, ``link`` and ``agreement``: output contracts and errors."""

from __future__ import annotations

import json

import pytest

from tests.extraction.vectors import close, vectors
from tests.helpers import invoke, run_cli

TEXT = "Het Rijksmuseum Amsterdam opende in 1885."


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def conll(tmp_path):
    gold = write(
        tmp_path / "gold.conll",
        "Het O\nRijksmuseum B-MUS\nAmsterdam I-MUS\nopende O\nin O\n1885 B-TMP\n. O\n",
    )
    pred = write(
        tmp_path / "pred.conll",
        "Het O\nRijksmuseum B-MUS\nAmsterdam B-LOC\nopende O\nin O\n1885 B-TMP\n. O\n",
    )
    return gold, pred


@pytest.fixture
def heritage(tmp_path):
    def rec(anns):
        return json.dumps(
            {
                "id": "d1",
                "text": TEXT,
                "ner_annotations": [
                    {"text": TEXT[s:e], "type": t, "start": s, "end": e} for s, e, t in anns
                ],
            }
        )

    gold = write(tmp_path / "gold.jsonl", rec([(4, 25, "MUS"), (36, 40, "TMP")]) + "\n")
    pred = write(
        tmp_path / "pred.jsonl", rec([(4, 15, "MUS"), (16, 25, "LOC"), (36, 40, "TMP")]) + "\n"
    )
    return gold, pred


def test_ner_json_contract_on_tags_equals_seqeval(conll):
    res = invoke("ner", *conll, "--json")
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    for schema in ("strict", "exact", "partial", "type"):
        block = out[schema]
        assert set(block) >= {"micro", "macro", "weighted", "per_label", "counts"}
        for avg in ("micro", "macro", "weighted"):
            assert set(block[avg]) >= {"precision", "recall", "f1"}
    assert out["strict"]["micro"]["f1"] == 0.4 and out["type"]["micro"]["f1"] == 0.8
    assert out["strict"]["counts"] == {
        "COR": 1,
        "INC": 1,
        "PAR": 0,
        "MIS": 0,
        "SPU": 1,
        "POS": 2,
        "ACT": 3,
    }
    from seqeval.metrics import classification_report

    g = [["O", "B-MUS", "I-MUS", "O", "O", "B-TMP", "O"]]
    p = [["O", "B-MUS", "B-LOC", "O", "O", "B-TMP", "O"]]
    ref = classification_report(g, p, output_dict=True, zero_division=0)
    for avg in ("micro", "macro", "weighted"):
        assert close(out["strict"][avg]["f1"], ref[f"{avg} avg"]["f1-score"]), avg
    assert close(out["token_accuracy"], 6 / 7)


def test_ner_heritage_spans_table_and_schema_spellings(heritage):
    res = invoke("ner", *heritage)
    assert res.code == 0, res.stderr
    assert "strict" in res.stdout and "0.4000" in res.stdout and "0.8000" in res.stdout
    for flag in ("--schema", "--schemas"):
        res = invoke("ner", *heritage, flag, "strict,ent_type", "--json")
        out = json.loads(res.stdout)
        assert set(out) & {"strict", "exact", "partial", "type"} == {"strict", "type"}


def test_ner_per_document_and_output_file(heritage, tmp_path):
    out_file = tmp_path / "report.json"
    res = invoke("ner", *heritage, "--per-document", "--token-level", "--json", "-o", str(out_file))
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["per_document"]["d1"]["strict"]["COR"] == 1
    assert close(out["token_level"]["micro"]["f1"], 2 / 3)
    saved = json.loads(out_file.read_text(encoding="utf-8"))
    assert set(saved) >= {
        "metrics",
        "per_document",
        "undefined",
        "reports",
        "settings",
        "token_level",
    }
    table = invoke("ner", *heritage, "--per-document")
    assert "per document" in table.stdout and "d1" in table.stdout


def test_ner_brat_folders(tmp_path):
    for side, spans in (
        ("gold", ["T1\tMUS 4 25\tRijksmuseum Amsterdam"]),
        ("pred", ["T1\tMUS 4 15\tRijksmuseum"]),
    ):
        write(tmp_path / side / "d1.txt", TEXT)
        write(tmp_path / side / "d1.ann", "\n".join(spans) + "\n")
    res = invoke(
        "ner", str(tmp_path / "gold"), str(tmp_path / "pred"), "--json", "--schemas", "partial"
    )
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["partial"]["counts"]["PAR"] == 1


def test_ner_offset_mismatch_prints_one_line_per_span(tmp_path):
    v = vectors("ner_spans.json")["TV-NER-14"]
    text = v["input"]["text"]
    rec = {"id": "eval_001", "text": text, "ner_annotations": v["input"]["ner_annotations"]}
    gold = write(tmp_path / "gold.jsonl", json.dumps(rec) + "\n")
    res = invoke("ner", gold, gold)
    assert res.code == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{gold}:1: document 'eval_001': span 58-62 'TMP' reads 'n 18'")
    assert lines[1].startswith(
        f"{gold}:1: document 'eval_001': span 93-104 'TOP' reads 'ctie Nederl'"
    )
    ok = invoke("ner", gold, gold, "--on-offset-mismatch", "relocate", "--json")
    assert ok.code == 0 and json.loads(ok.stdout)["strict"]["micro"]["f1"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--schemas", "fuzzy"], "ragmeter ner: unknown NER schema 'fuzzy'"),
        (["--format", "xml"], "ragmeter ner: --format 'xml' is not one of brat, conll, heritage"),
        (["--zero-division", "2"], "ragmeter ner: --zero-division '2' is not one of 0, 1, warn"),
        (["--min-overlap", "1.5"], "ragmeter ner: --min-overlap 1.5 is not between 0 and 1"),
        (["--scheme", "BIO"], "ragmeter ner: --scheme 'BIO' is not one of"),
        (["--token-level"], "ragmeter ner: --token-level needs character spans"),
    ],
)
def test_ner_usage_errors(conll, args, message):
    res = invoke("ner", *conll, *args)
    assert res.code == 2 and res.stderr.startswith(message), res.stderr


def test_ner_token_mismatch_and_missing_file(conll, tmp_path):
    other = write(tmp_path / "other.conll", "Het O\n")
    res = invoke("ner", conll[0], other)
    assert res.code == 2 and "other.conll" in res.stderr and "sentences" not in res.stdout
    res = invoke("ner", str(tmp_path / "nope.conll"), conll[1])
    assert res.code == 2 and "nope.conll: cannot read" in res.stderr


def test_classify_json_contract(tmp_path):
    v = vectors("type_classification.json")["TV-CLS-08"]
    gold = write(
        tmp_path / "gold.tsv",
        "id\tlabel\n" + "".join(f"i{k}\t{g}\n" for k, g in enumerate(v["input"]["y_true"])),
    )
    pred = write(
        tmp_path / "pred.jsonl",
        "".join(
            json.dumps({"id": f"i{k}", "label": p}) + "\n"
            for k, p in enumerate(v["input"]["y_pred"])
        ),
    )
    for flag in (["--profile", "heritage"], ["--labels", "heritage"]):
        res = invoke("classify", gold, pred, *flag, "--json")
        assert res.code == 0, res.stderr
        out = json.loads(res.stdout)
        assert set(out) >= {
            "accuracy",
            "balanced_accuracy",
            "micro",
            "macro",
            "weighted",
            "per_class",
            "labels_used",
            "confusion_matrix",
            "top_confusions",
            "invalid_labels",
        }
        assert out["accuracy"] == 0.4 and close(out["macro"]["f1"], v["expected"]["macro_f1"])
        assert out["confusion_matrix"] == {
            "labels": v["expected"]["confusion_matrix_labels"],
            "matrix": v["expected"]["confusion_matrix_rows_gold"],
        }
        assert out["invalid_labels"] == {"gold": {}, "pred": {"museum": 1}}
    assert (
        "museum" in invoke("classify", gold, pred, "--profile", "heritage").stderr
    )  # warning line


def test_classify_label_sets_and_tables(tmp_path):
    v = vectors("type_classification.json")["TV-CLS-02"]
    gold = write(
        tmp_path / "g.tsv",
        "id\tlabel\n" + "".join(f"{k}\t{x}\n" for k, x in enumerate(v["input"]["y_true"])),
    )
    pred = write(
        tmp_path / "p.tsv",
        "id\tlabel\n" + "".join(f"{k}\t{x}\n" for k, x in enumerate(v["input"]["y_pred"])),
    )
    fixed = json.loads(
        invoke("classify", gold, pred, "--profile", "heritage", "--labels", "all", "--json").stdout
    )
    assert close(fixed["macro"]["f1"], v["expected"]["macro_f1_zero_division_0"])
    listed = json.loads(invoke("classify", gold, pred, "--labels", "A,M", "--json").stdout)
    assert listed["labels_used"] == ["A", "M"]
    table = invoke("classify", gold, pred, "--profile", "heritage", "--per-item")
    assert table.code == 0 and "hierarchy" in table.stdout and "per item" in table.stdout
    res = invoke("classify", gold, pred, "--labels", "all")
    assert res.code == 2 and "ragmeter classify: --labels all needs --profile" in res.stderr


def test_classify_multilabel_from_heritage_tsv(tmp_path):
    gold = write(
        tmp_path / "types.tsv", "id\ttext\tgold_type\tsecondary_types\na\tx\tM\tA\nb\ty\tL\t\n"
    )
    pred = write(
        tmp_path / "pred.jsonl", '{"id": "a", "labels": ["M"]}\n{"id": "b", "label": "L"}\n'
    )
    out = json.loads(invoke("classify", gold, pred, "--multilabel", "--json").stdout)
    assert out["accuracy"] == 1.0
    assert out["multilabel"]["subset_accuracy"] == 0.5


def test_classify_bad_input(tmp_path):
    gold = write(tmp_path / "g.tsv", "id\tlabel\na\tm\n")
    res = invoke("classify", gold, gold, "--profile", "heritage")
    assert res.code == 2
    assert res.stderr == (
        f"{gold}:2: gold label 'm' of item 'a' is not in the heritage vocabulary (expected one of "
        "G L A M O R C U B E S F I X P H D N T, or --invalid-gold drop_items)\n"
    )
    pred = write(tmp_path / "p.tsv", "id\tlabel\nb\tM\n")
    ok = write(tmp_path / "ok.tsv", "id\tlabel\na\tM\n")
    res = invoke("classify", ok, pred)
    assert res.stderr == (
        f"{ok}:2: item 'a' has no prediction in {pred} (expected a prediction for every gold "
        "item, or --missing as_invalid)\n"
    )
    both = write(tmp_path / "both.tsv", "id\tlabel\na\tM\nb\tM\n")
    res = invoke("classify", ok, both)
    assert res.code == 2 and res.stderr == (
        f"{both}:3: item 'b' is not in the gold file {ok} (expected predictions for gold items "
        "only, or --extra ignore)\n"
    )
    dup = write(tmp_path / "d.tsv", "id\tlabel\na\tM\na\tA\n")
    res = invoke("classify", dup, gold)
    assert (
        res.code == 2
        and res.stderr
        == f"{dup}:3: item 'a' appears twice (first on line 2; expected one label per item)\n"
    )


def test_link_json_and_k_spellings(tmp_path):
    v = vectors("entity_linking.json")["TV-EL-02"]
    gold = write(
        tmp_path / "gold.jsonl",
        "".join(
            json.dumps({"mention_id": m, "kb_id": q}) + "\n" for m, q in v["input"]["gold"].items()
        ),
    )
    pred = write(
        tmp_path / "pred.jsonl",
        "".join(
            json.dumps({"mention_id": m, "candidates": c}) + "\n"
            for m, c in v["input"]["candidates"].items()
        ),
    )
    for flag in ("-k", "--k"):
        res = invoke("link", gold, pred, flag, "1,5", "--json")
        assert res.code == 0, res.stderr
        out = json.loads(res.stdout)
        assert close(out["ranking"]["hits@1"], 1 / 3) and close(out["ranking"]["hits@5"], 2 / 3)
        assert out["ranking"]["mrr"] == 0.5 and "nil" in out
    table = invoke("link", gold, pred, "--per-mention")
    assert "Hits@10" in table.stdout and "doc1:40-49" in table.stdout
    bad = invoke("link", gold, pred, "-k", "one")
    assert bad.code == 2 and "ragmeter link: -k 'one' is not a comma-separated list" in bad.stderr


def test_link_duplicate_prediction_line(tmp_path):
    gold = write(tmp_path / "g.jsonl", '{"mention_id": "m", "kb_id": "Q1"}\n')
    pred = write(
        tmp_path / "p.jsonl",
        '{"mention_id": "m", "candidates": ["Q1"]}\n{"mention_id": "m", "candidates": ["Q1"]}\n',
    )
    res = invoke("link", gold, pred)
    assert res.code == 2 and res.stderr.startswith(f"{pred}:2: second prediction for mention 'm'")


def test_link_e2e_and_mapping(tmp_path):
    for side, ann in (
        ("gold", "T1\tMUS 4 25\tRijksmuseum Amsterdam\nN1\tReference T1 Wikidata:Q190804\tx\n"),
        ("pred", "T1\tMUS 4 25\tRijksmuseum Amsterdam\nN1\tReference T1 Wikidata:Q1\tx\n"),
    ):
        write(tmp_path / side / "d.txt", TEXT)
        write(tmp_path / side / "d.ann", ann)
    res = invoke("link", str(tmp_path / "gold"), str(tmp_path / "pred"), "--e2e", "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["counts"] == {"tp": 0, "fp": 1, "fn": 1}
    mapping = write(tmp_path / "map.tsv", "wikidata_id\tscheme\tvalue\nQ1\tviaf\t42\n")
    gold = write(tmp_path / "g.jsonl", '{"mention_id": "m", "kb_id": "Q1"}\n')
    pred = write(
        tmp_path / "p.jsonl",
        '{"mention_id": "m", "candidates": ["Q1"], "identifiers": {"viaf": "42"}}\n',
    )
    out = json.loads(invoke("link", gold, pred, "--mapping", mapping, "--json").stdout)
    assert out["cross_kb"]["consistency_rate"] == 1.0


def test_agreement_numeric_ordinal_ratings_in_numeric_order(tmp_path):
    """JSONL numbers are ratings; without --categories ordinal labels order as numbers."""
    import krippendorff
    import numpy as np

    r1 = [1, 2, 3, 9, 10, 10, 2, 3]
    r2 = [1, 3, 3, 10, 9, 10, 2, 1]
    paths = []
    for name, ratings in (("a", r1), ("b", r2)):
        paths.append(
            write(
                tmp_path / f"{name}.jsonl",
                "".join(
                    json.dumps({"id": f"i{k}", "label": x}) + "\n" for k, x in enumerate(ratings)
                ),
            )
        )
    res = invoke("agreement", *paths, "--level", "ordinal", "--json")
    assert res.code == 0, res.stderr
    got = json.loads(res.stdout)
    # krippendorff ranks ordinal values by their numeric value, as the categories 1 < 2 < 3 < 9 < 10
    want = krippendorff.alpha(reliability_data=np.array([r1, r2]), level_of_measurement="ordinal")
    assert close(got["krippendorff_alpha"], want)
    explicit = invoke(
        "agreement", *paths, "--level", "ordinal", "--categories", "1,2,3,9,10", "--json"
    )
    assert json.loads(explicit.stdout)["krippendorff_alpha"] == got["krippendorff_alpha"]
    words = [write(tmp_path / f"w{k}.tsv", "id\tlabel\ni1\tlow\ni2\thigh\n") for k in (1, 2)]
    bad = invoke("agreement", *words, "--level", "ordinal")
    assert bad.code == 2
    assert bad.stderr == (
        "ragmeter agreement: --level ordinal needs --categories LOW,...,HIGH (the labels are not "
        "numbers, so their order is unknown)\n"
    )


def test_ner_heritage_offsets_in_utf16(tmp_path):
    """--offset-unit applies to heritage JSON too (docs/extraction.md#data-model-and-validation,
    TV-FMT-01's text)."""
    text = "\U0001f3db Rijksmuseum"
    rec = {
        "id": "d1",
        "text": text,
        "ner_annotations": [{"text": "Rijksmuseum", "type": "MUS", "start": 3, "end": 14}],
    }
    gold = write(tmp_path / "g.jsonl", json.dumps(rec) + "\n")
    res = invoke("ner", gold, gold, "--offset-unit", "utf16", "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["strict"]["micro"]["f1"] == 1.0
    plain = invoke("ner", gold, gold, "--json")
    assert plain.code == 2 and "ends after the text" in plain.stderr


def test_agreement_labels_and_spans(tmp_path):
    v = vectors("iaa.json")["TV-IAA-01"]
    a = write(
        tmp_path / "a.tsv",
        "id\tlabel\n" + "".join(f"{k}\t{x}\n" for k, x in enumerate(v["input"]["rater1"])),
    )
    b = write(
        tmp_path / "b.tsv",
        "id\tlabel\n" + "".join(f"{k}\t{x}\n" for k, x in enumerate(v["input"]["rater2"])),
    )
    out = json.loads(invoke("agreement", a, b, "--json").stdout)
    assert close(out["cohen_kappa"], v["expected"]["sklearn_cohen_kappa"])
    assert close(out["observed_agreement"], 0.7)
    table = invoke("agreement", a, b)
    assert "cohen_kappa" in table.stdout and "krippendorff_alpha" in table.stdout
    t = vectors("iaa.json")["TV-IAA-05"]["input"]
    c1 = write(
        tmp_path / "a1.conll", "".join(f"t{k} {tag}\n" for k, tag in enumerate(t["annotator1"][0]))
    )
    c2 = write(
        tmp_path / "a2.conll", "".join(f"t{k} {tag}\n" for k, tag in enumerate(t["annotator2"][0]))
    )
    spans = json.loads(invoke("agreement", c1, c2, "--json").stdout)
    assert close(spans["mean_f1"]["strict"], 2 / 3) and spans["mean_f1"]["type"] == 1.0
    assert close(spans["token_kappa"], 0.8205128205128205)
    res = invoke("agreement", a)
    assert (
        res.code == 2 and "ragmeter agreement: needs at least two annotators' files" in res.stderr
    )


def test_commands_in_a_real_process(conll):
    res = run_cli("ner", *conll, "--json")
    assert res.code == 0 and json.loads(res.stdout)["strict"]["micro"]["f1"] == 0.4
    help_text = run_cli("--help").stdout
    for command in ("ner", "classify", "link", "agreement"):
        assert command in help_text
