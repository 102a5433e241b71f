"""Engine behaviour beyond the vectors: tokenizers, linking rules, subsets, hierarchy, results."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from ragmeter import registry
from ragmeter.errors import InputError
from ragmeter.extraction.classification import evaluate_types, evaluate_types_multilabel
from ragmeter.extraction.columns import SpanTable
from ragmeter.extraction.distribution import type_distribution
from ragmeter.extraction.errors import (
    DuplicateMentionError,
    OverlapError,
    TagSchemeError,
    TokenMismatchError,
)
from ragmeter.extraction.iaa import agreement, span_agreement
from ragmeter.extraction.kbids import canonical_kb_id
from ragmeter.extraction.linking import evaluate_linking, evaluate_linking_e2e
from ragmeter.extraction.ner import evaluate_ner, evaluate_ner_tags
from ragmeter.extraction.profiles import HERITAGE, HERITAGE_NER_TO_TYPE, HierarchyProfile
from ragmeter.extraction.tags import encode, normalize
from ragmeter.extraction.tokenize import get_tokenizer, simple_tokenize, spans_to_tags


# -- tokenizers --------------------------------------------------------------------------------
def test_simple_tokenizer_rules():
    text = "«Musée d’Orsay» (NL-AmRM), ¿qué? ... „Rijks“"
    tokens = [text[a:b] for a, b in simple_tokenize(text)]
    assert tokens == [
        "«",
        "Musée",
        "d’Orsay",
        "»",
        "(",
        "NL-AmRM",
        ")",
        ",",
        "¿",
        "qué",
        "?",
        ".",
        ".",
        ".",
        "„",
        "Rijks“",
    ]  # “ is in the opening set only (docs/extraction.md#tokenization-and-span--token-alignment)


def test_spacy_tokenizer_uses_token_idx_and_drops_whitespace(monkeypatch):
    """``spacy:<lang>`` builds spacy.blank(lang) and reads Token.idx (spaCy faked here)."""

    class Tok:
        def __init__(self, text, idx):
            self.text, self.idx = text, idx

    calls = []

    def blank(lang):
        calls.append(lang)
        nlp = types.SimpleNamespace()
        nlp.make_doc = lambda text: [Tok("Het", 0), Tok(" ", 4), Tok("Rijks", 5)]
        return nlp

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(blank=blank))
    from ragmeter.extraction import tokenize

    tokenize._cache.clear()
    tok, name = get_tokenizer("spacy:nl")
    assert name == "spacy:nl" and calls == ["nl"]
    assert tok("Het  Rijks") == [(0, 3), (5, 10)]
    tokenize._cache.clear()


def test_tokenizer_errors():
    with pytest.raises(ValueError, match="unknown tokenizer 'nltk'"):
        get_tokenizer("nltk")
    tok, _ = get_tokenizer(lambda text: [(0, 4), (2, 6)])
    with pytest.raises(
        ValueError, match="returned token 2-6, outside the text, empty or overlapping"
    ):
        tok("abcdefg")


def test_alignment_policies():
    text = "Het Rijksmuseum Amsterdam"
    tokens = simple_tokenize(text)
    conv = spans_to_tags(tokens, [(5, 20, "MUS")])
    assert conv.tags == ["O", "B-MUS", "I-MUS"]
    assert conv.misaligned == [{"start": 5, "end": 20, "label": "MUS", "expanded_to": [4, 25]}]
    assert spans_to_tags(tokens, [(5, 20, "MUS")], misaligned="drop").tags == ["O", "O", "O"]
    with pytest.raises(TagSchemeError, match="does not fall on token boundaries"):
        spans_to_tags(tokens, [(5, 20, "MUS")], misaligned="error")
    with pytest.raises(OverlapError):
        spans_to_tags(tokens, [(4, 25, "MUS"), (16, 25, "LOC")])
    kept = spans_to_tags(tokens, [(16, 25, "LOC"), (4, 25, "MUS")], on_overlap="keep_longest")
    assert kept.tags == ["O", "B-MUS", "I-MUS"] and kept.overlaps[0]["label"] == "LOC"


def test_tag_scheme_normalization_and_errors():
    assert normalize(["U-A", "B-A", "L-A"], "BILOU") == ["S-A", "B-A", "E-A"]
    assert encode([("A", 0, 1), ("A", 1, 3)], 3, scheme="IOB1") == ["I-A", "B-A", "I-A"]
    with pytest.raises(TagSchemeError, match="unknown tag scheme 'BIO'"):
        normalize(["O"], "BIO")
    with pytest.raises(TagSchemeError, match="tag 'X-A' has prefix 'X', which lenient decoding"):
        evaluate_ner_tags([["X-A"]], [["O"]])
    with pytest.raises(TagSchemeError, match="tag 'O-A' starts with O but is not 'O'"):
        evaluate_ner_tags([["O-A"]], [["O"]])
    with pytest.raises(TagSchemeError, match="tag 'E-A' has prefix 'E', which IOB2 does not allow"):
        evaluate_ner_tags([["E-A"]], [["O"]], mode="strict")
    with pytest.raises(TagSchemeError, match="chunks overlap"):
        encode([("A", 0, 2), ("B", 1, 3)], 3)
    with pytest.raises(TokenMismatchError, match="has 2 gold tags but 1 predicted"):
        evaluate_ner_tags([["O", "O"]], [["O"]])
    with pytest.raises(TagSchemeError, match=r"gold sentence 1 is not well-formed IOB2"):
        evaluate_ner_tags([["I-A"]], [["I-A"]], strict_gold=True)


def test_tags_grouped_into_documents():
    r = evaluate_ner_tags([["B-A"], ["O", "B-A"]], [["B-A"], ["B-A", "O"]], doc_ids=["x", "x"])
    assert r.doc_ids == ["x"] and r.overall["strict"]["COR"] == 1
    assert r.per_document["x"]["strict"] == {
        "COR": 1,
        "INC": 0,
        "PAR": 0,
        "MIS": 1,
        "SPU": 1,
        "POS": 2,
        "ACT": 2,
    }


# -- NER extras --------------------------------------------------------------------------------
def test_min_overlap_and_confusions():
    gold = {"d": [(0, 10, "MUS"), (20, 24, "LOC")]}
    pred = {"d": [(0, 3, "MUS"), (20, 24, "MUS")]}
    loose = evaluate_ner(gold, pred)
    strict_overlap = evaluate_ner(gold, pred, min_overlap=0.5)
    assert loose.overall["type"]["COR"] == 1 and strict_overlap.overall["type"]["COR"] == 0
    assert strict_overlap.overall["type"]["MIS"] == 1
    assert loose.confusions == [["LOC", "MUS", 1]]


def test_span_table_input_equals_mapping_input():
    gold = {"a": [(0, 3, "X"), (5, 9, "Y")], "b": []}
    pred = {"a": [(0, 3, "X")], "b": [(1, 2, "Y")]}
    t_gold = SpanTable.from_arrays(["a", "a"], [0, 5], [3, 9], ["X", "Y"], documents=["a", "b"])
    t_pred = SpanTable.from_arrays(["a", "b"], [0, 1], [3, 2], ["X", "Y"])
    assert evaluate_ner(gold, pred).metrics == evaluate_ner(t_gold, t_pred).metrics


def test_document_counts_sum_to_micro():
    gold = {"a": [(0, 3, "X"), (5, 9, "Y")], "b": [(0, 4, "X")]}
    pred = {"a": [(0, 3, "X"), (5, 8, "Y")], "b": [(0, 4, "Y")]}
    r = evaluate_ner(gold, pred)
    for schema in ("strict", "partial"):
        counts = r.document_counts(schema)
        tp = sum(c[0] for c in counts.values())
        fp = sum(c[1] for c in counts.values())
        fn = sum(c[2] for c in counts.values())
        assert r.overall[schema]["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        assert r.overall[schema]["precision"] == pytest.approx(tp / (tp + fp))


def test_resampling_counts_for_stats():
    gold = {"a": [(0, 3, "X")], "b": [(0, 2, "Y")]}
    pred = {"a": [(0, 3, "X")], "b": [(0, 1, "Y")]}
    r = evaluate_ner(gold, pred)
    assert r.resampling_counts("ner.overall.strict.f1") == {
        "a": (1.0, 0.0, 0.0),
        "b": (0.0, 1.0, 1.0),
    }
    assert r.resampling_counts("overall.partial.f1")["b"] == (0.5, 0.5, 0.5)
    assert r.resampling_counts("entity.micro.f1") == r.document_counts("strict")
    with pytest.raises(KeyError):
        r.resampling_counts("macro_over_documents.strict.f1")
    e2e = evaluate_linking_e2e({"a": [{"start": 0, "end": 3, "kb": "Q1"}]}, {"a": []})
    assert e2e.resampling_counts("linking.e2e.strong.micro.f1") == {"a": (0, 0, 1)}
    link = evaluate_linking({"m": None}, {"m": {"nil": True}})
    assert link.resampling_counts("nil.f1") == {"m": (1, 0, 0)}


def test_ner_to_result_and_registry_names():
    gold = {"a": [(0, 3, "X")], "b": [], "c": [(0, 2, "Y")]}
    pred = {"a": [(0, 3, "X")], "b": [], "c": []}
    r = evaluate_ner(gold, pred)
    res = r.to_result()
    assert res.task == "ner"
    for name in res.aggregates:
        assert registry.resolve(f"ner.{name}").canonical == name
    assert res.summary["overall.strict.f1"] == r.overall["strict"]["f1"]
    assert res.values("overall.strict.f1") == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert res.summary["macro_over_documents.strict.f1"] == pytest.approx(2 / 3)
    rows = res.samples.to_pylist()
    detail = next(
        x["detail"] for x in rows if x["id"] == "c" and x["metric"] == "overall.strict.f1"
    )
    assert json.loads(detail) == {
        "COR": 0,
        "INC": 0,
        "PAR": 0,
        "MIS": 1,
        "SPU": 0,
        "POS": 1,
        "ACT": 0,
    }
    skip = evaluate_ner(gold, pred, empty_documents="skip").to_result()
    assert skip.statuses("macro_over_documents.strict.f1")["b"] == "no_gold"
    assert skip.aggregates["macro_over_documents.strict.f1"].n == 2
    assert set(r.summary) == set(res.aggregates)
    assert json.loads(r.to_json())["per_document"]["a"]["strict"]["COR"] == 1


def test_registry_resolves_heritage_keys():
    assert registry.resolve("ner.ner_f1_partial").canonical == "overall.type.f1"
    assert registry.resolve("ner.overall.ent_type.f1").canonical == "overall.type.f1"
    assert registry.resolve("classification.type_classification_accuracy").canonical == "accuracy"
    hit = registry.resolve("linking.entity_linking_hits@5")
    assert (hit.canonical, dict(hit.params)) == ("ranking.hits@5", {"k": 5})
    assert registry.resolve("linking.entity_linking_mrr").canonical == "ranking.mrr"
    assert registry.resolve("linking.ranking.accuracy@1").canonical == "ranking.hits@1"
    with pytest.raises(registry.UnknownMetricError, match="did you mean"):
        registry.resolve("linking.ranking.hits")


# -- classification extras ---------------------------------------------------------------------
def test_classification_join_and_policies():
    with pytest.raises(InputError, match=r"1 gold item\(s\) have no prediction: 'b'"):
        evaluate_types({"a": "M", "b": "A"}, {"a": "M"})
    with pytest.raises(InputError, match=r"1 predicted item\(s\) not in gold: 'z'"):
        evaluate_types({"a": "M"}, {"a": "M", "z": "A"})
    with pytest.raises(InputError, match="items are joined by id, never by position"):
        evaluate_types(["M"], ["M"])
    r = evaluate_types(
        {"a": "M", "b": "A"},
        {"a": "M", "z": "A"},
        missing="as_invalid",
        extra="ignore",
        profile="heritage",
    )
    assert r.accuracy == 0.5 and r.reports["extra_predictions"] == ["z"]
    assert r.confusion_labels == ["A", "M", "__INVALID__"]
    dropped = evaluate_types(
        {"a": "M", "b": "m"}, {"a": "M", "b": "M"}, profile="heritage", invalid_gold="drop_items"
    )
    assert dropped.n_items == 1 and dropped.reports["dropped_items"]["ids"] == ["b"]
    norm = evaluate_types(
        {"a": "m"}, {"a": " M"}, profile="heritage", normalize=lambda s: s.strip().upper()
    )
    assert norm.accuracy == 1.0 and norm.reports["normalized_labels"] == {
        "m": {"to": "M", "count": 1},
        " M": {"to": "M", "count": 1},
    }


@pytest.mark.parametrize(
    ("gold", "pred", "message"),
    [
        ({"a": "M", "b": 3}, {"a": "M", "b": "A"}, "item 'b': gold label 3 is not a string"),
        ({"a": None}, {"a": "M"}, "item 'a': gold label None is not a string"),
        ({"a": "M"}, {"a": 2.5}, "item 'a': predicted label 2.5 is not a string"),
        ({1: "M", "1": "A"}, {1: "M", "1": "A"}, "two gold item ids are equal as strings"),
    ],
)
def test_classification_label_types(gold, pred, message):
    with pytest.raises(InputError, match=message):
        evaluate_types(gold, pred)


def test_classification_result_rows_and_top_confusions():
    gold = {f"i{k}": g for k, g in enumerate("MMMAAL")}
    pred = {f"i{k}": p for k, p in enumerate("AAMLLL")}
    r = evaluate_types(gold, pred, top_k=2, profile="heritage")
    assert r.top_confusions == [["A", "L", 2], ["M", "A", 2]]
    assert (r.total_errors, r.unique_confusion_pairs) == (4, 2)
    res = r.to_result()
    assert res.values("accuracy")["i2"] == 1.0
    assert json.loads(res.samples.to_pylist()[0]["detail"]) == {"gold": "M", "pred": "A"}
    assert res.summary["accuracy"] == r.accuracy and "category_accuracy" in res.summary
    for name in res.aggregates:
        assert registry.resolve(f"classification.{name}").canonical == name


def test_heritage_profile_is_the_single_source():
    assert "".join(HERITAGE.vocabulary) == "GLAMORCUBESFIXPHDNT"
    assert HERITAGE.categories["UNKNOWN"] == ["U", "X"]
    assert HERITAGE_NER_TO_TYPE == {
        "GRP.HER.MUS": "M",
        "GRP.HER.ARC": "A",
        "GRP.HER.LIB": "L",
        "GRP.HER.SOC": "S",
    }
    assert len(HERITAGE.hash) == 64


def test_hierarchy_levels():
    prof = HierarchyProfile(
        "deep", ("a", "b", "c"), {"a": "X", "b": "Y", "c": "Y", "X": "R", "Y": "R"}
    )
    g = {1: "a", 2: "b"}
    p = {1: "b", 2: "c"}
    assert evaluate_types(g, p, profile=prof).hierarchy["category_accuracy"] == 0.5
    assert evaluate_types(g, p, profile=prof, level=2).hierarchy["category_accuracy"] == 1.0
    h = evaluate_types(g, p, profile=prof).hierarchy["hierarchical"]
    # augmented: {a,X,R} vs {b,Y,R} → 1; {b,Y,R} vs {c,Y,R} → 2
    assert (h["intersection"], h["sum_pred"], h["sum_gold"]) == (3, 6, 6)


def test_multilabel_invalid_and_result():
    r = evaluate_types_multilabel({1: {"M", "A"}}, {1: {"M", "museum"}}, profile="heritage")
    assert r.invalid_labels["pred"] == {"museum": 1}
    assert r.micro["precision"] == 0.5 and r.labels_used == ["A", "M"]
    res = r.to_result()
    assert res.summary["multilabel.subset_accuracy"] == 0.0
    with pytest.raises(InputError, match="are not a set or list of strings"):
        evaluate_types_multilabel({1: "M"}, {1: {"M"}})


def test_distribution_per_document():
    d = type_distribution(
        {"a": [(0, 1, "X")], "b": []}, {"a": [], "b": [(0, 1, "Y")]}, per_document=True
    )
    assert d["per_document"]["a"]["total_variation_distance"] is None
    assert d["total_variation_distance"] == 1.0
    with pytest.raises(InputError, match="per_document=True needs span inputs"):
        type_distribution(["A"], ["A"], per_document=True)


# -- linking extras ----------------------------------------------------------------------------
def test_candidate_ordering_and_duplicates():
    gold = {"m": "Q1"}
    by_score = {"m": [{"kb_id": "Q2", "score": 0.1}, {"kb_id": "Q1", "score": 0.9}]}
    assert evaluate_linking(gold, by_score).ranking["mrr"] == 1.0
    ties = {"m": [{"kb_id": "Q2", "score": 0.5}, {"kb_id": "Q1", "score": 0.5}]}
    assert evaluate_linking(gold, ties).ranking["mrr"] == 0.5  # ties keep input order
    listed = {"m": ["wd:Q2", "Q2", "https://www.wikidata.org/entity/Q1"]}
    r = evaluate_linking(gold, listed)
    assert r.ranking["mrr"] == 0.5 and r.ranking["n_duplicate_candidates_removed"] == 1
    with pytest.raises(InputError, match="some candidates have a score and some do not"):
        evaluate_linking(gold, {"m": [{"kb_id": "Q1", "score": 1}, {"kb_id": "Q2"}]})
    with pytest.raises(InputError, match="has score nan"):
        evaluate_linking(gold, {"m": [{"kb_id": "Q1", "score": float("nan")}]})
    with pytest.raises(DuplicateMentionError, match="gold mention id 'm' appears twice"):
        evaluate_linking([{"mention_id": "m", "kb_id": "Q1"}] * 2, {})
    nil_rank = evaluate_linking(gold, {"m": ["NIL", "Q1"]})
    assert nil_rank.ranking["hits@1"] == 0.0 and nil_rank.ranking["mrr"] == 0.5
    assert nil_rank.ranking["n_inkb_predicted_nil"] == 1


def test_unknown_mentions_and_strict():
    r = evaluate_linking({"m": "Q1"}, {"m": ["Q1"], "x": ["Q1"]})
    assert r.ranking["n_unmatched_predictions"] == 1 and r.warnings
    with pytest.raises(InputError, match="prediction\\(s\\) for mention ids not in gold"):
        evaluate_linking({"m": "Q1"}, {"x": ["Q1"]}, strict=True)


def test_linking_result_rows():
    r = evaluate_linking(
        {"a": "Q1", "b": None, "c": ["Q3", "Q4"]},
        {"a": ["Q2", "Q1"], "b": {"nil": True, "candidates": []}, "c": ["Q4"]},
    )
    assert r.ranking["mrr"] == pytest.approx((0.5 + 1) / 2)
    assert r.d2kb_accuracy == pytest.approx(2 / 3)
    res = r.to_result()
    assert res.statuses("ranking.mrr")["b"] == "no_gold"
    assert res.values("ranking.mrr") == {"a": 0.5, "c": 1.0}
    assert res.summary["ranking.mrr"] == r.ranking["mrr"]
    assert r.mention_counts()["b"] == (1, 0, 0)
    for name in res.aggregates:
        assert registry.resolve(f"linking.{name}").canonical == name


def test_e2e_matching_modes_differ_only_with_competition():
    gold = {"d": [{"start": 0, "end": 10, "kb": "Q1"}, {"start": 12, "end": 20, "kb": "Q1"}]}
    pred = {"d": [{"start": 5, "end": 15, "kb": "Q1"}, {"start": 0, "end": 4, "kb": "Q1"}]}
    optimal = evaluate_linking_e2e(gold, pred, match="weak")
    gerbil = evaluate_linking_e2e(gold, pred, match="weak", matching="gerbil")
    assert optimal.counts.tolist() == [[2, 0, 0]]
    assert gerbil.counts.tolist() == [[2, 0, 0]]
    # (5,15) overlaps both gold spans and comes first: GERBIL's greedy walk gives it to (0,10)
    pred2 = {"d": [{"start": 5, "end": 15, "kb": "Q1"}, {"start": 6, "end": 8, "kb": "Q1"}]}
    assert evaluate_linking_e2e(gold, pred2, match="weak").counts.tolist() == [[2, 0, 0]]
    assert evaluate_linking_e2e(gold, pred2, match="weak", matching="gerbil").counts.tolist() == [
        [1, 1, 1]
    ]


def test_e2e_subsets():
    gold = {"d": [{"start": 0, "end": 5, "kb": "NIL"}, {"start": 6, "end": 9, "kb": "Q1"}]}
    pred = {
        "d": [
            {"start": 0, "end": 5, "kb": "Q7"},
            {"start": 6, "end": 9, "kb": "Q1"},
            {"start": 10, "end": 12, "kb": "NIL"},
        ]
    }
    assert evaluate_linking_e2e(gold, pred, subset="ee").counts.tolist() == [[0, 1, 1]]
    assert evaluate_linking_e2e(gold, pred, subset="inkb").counts.tolist() == [[1, 1, 0]]
    assert evaluate_linking_e2e(gold, pred, subset="gs_inkb").counts.tolist() == [[1, 0, 0]]
    res = evaluate_linking_e2e(gold, pred, subset="inkb").to_result()
    assert "e2e.strong.inkb.micro.f1" in res.summary
    assert registry.resolve("linking.e2e.strong.inkb.micro.f1").definition.level == "corpus"


# -- agreement extras --------------------------------------------------------------------------
def test_agreement_mapping_input_and_undefined():
    ratings = {"ann1": {"a": "M", "b": "M"}, "ann2": {"a": "M", "b": "M"}}
    rep = agreement(ratings)
    assert rep.coefficients["cohen_kappa"] is None
    assert rep.undefined["cohen_kappa"].startswith("chance agreement is perfect")
    res = rep.to_result()
    assert res.aggregates["cohen_kappa"].value is None and res.aggregates["cohen_kappa"].reason
    with pytest.raises(InputError, match="one rater"):
        agreement([["a"], ["b"]])
    with pytest.raises(InputError, match="is not a number"):
        agreement([["a", "b"]], level="interval")


def test_span_agreement_three_annotators():
    a = {"d": [(0, 3, "X"), (5, 9, "Y")]}
    b = {"d": [(0, 3, "X")]}
    c = {"d": [(0, 3, "X"), (5, 8, "Y")]}
    rep = span_agreement({"a": a, "b": b, "c": c})
    m = np.array(rep.pairwise["strict"])
    assert np.allclose(m, m.T) and np.allclose(np.diag(m), 1)
    assert rep.pairwise["strict"][0][1] == pytest.approx(2 / 3)
    assert rep.pairwise["type"][0][2] == 1.0
    assert rep.mean_f1["strict"] == pytest.approx((2 / 3 + 1 / 2 + 2 / 3) / 3)
    assert rep.per_label["strict"]["X"] == 1.0
    assert rep.to_result().summary["span_f1.type"] == rep.mean_f1["type"]


def test_agreement_results_use_registry_names():
    """Every aggregate an agreement Result carries is a registry metric of task agreement."""
    names = {m.name for m in registry.get_task("agreement").metrics}
    ordinal = agreement([[1, 2], [2, 2], [3, 3], [1, 1]], level="ordinal").to_result()
    spans = span_agreement(
        {"a": {"d": [(0, 3, "X")]}, "b": {"d": [(0, 3, "X"), (4, 6, "Y")]}}
    ).to_result()
    produced = set(ordinal.aggregates) | set(spans.aggregates)
    assert {"cohen_kappa_quadratic", "krippendorff_alpha", "span_f1.strict"} <= produced
    assert produced <= names
    assert registry.resolve("agreement.fleiss_kappa").definition.range == (-1.0, 1.0)
    assert not registry.get_task("agreement").runner


def test_mapping_forms_and_normalizers(tmp_path):
    from ragmeter.extraction.crosskb import check_consistency, load_mapping

    jsonl_path = tmp_path / "m.jsonl"
    jsonl_path.write_text(
        '{"wikidata_id": "wd:Q1", "viaf": ["11", "12"], "P791": "nl-x"}\n', encoding="utf-8"
    )
    m = load_mapping(jsonl_path)
    ents = [
        {"entity_id": "a", "wikidata_id": "Q1", "viaf_id": "https://viaf.org/viaf/12/"},
        {"entity_id": "b", "wikidata_id": "Q1", "isil_code": "NL-X"},
    ]
    plain = check_consistency(ents, m)
    assert plain.status == {"a": "consistent", "b": "inconsistent"}
    folded = check_consistency(ents, m, normalizers={"isil": str.upper})
    assert folded.status["b"] == "consistent"
    assert folded.settings["normalizers"] == {"isil": "str.upper"}
    tsv = tmp_path / "m.tsv"
    tsv.write_text("wikidata_id\tscheme\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"m\.tsv:1: header is 'wikidata_id\\tscheme'"):
        load_mapping(tsv)
    tsv.write_text("wikidata_id\tscheme\tvalue\nQ1\tviaf\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"m\.tsv:2: 2 column\(s\)"):
        load_mapping(tsv)


def test_kb_id_canonical_forms():
    assert canonical_kb_id("Wikidata:Q190804") == "Q190804"
    assert canonical_kb_id("http://www.wikidata.org/entity/Q190804") == "Q190804"
    assert canonical_kb_id("ISIL:NL-AmRM") == "isil:NL-AmRM"
    assert canonical_kb_id(None) is None and canonical_kb_id("NIL") is None


# -- optional online resolver (a local SPARQL stand-in; no internet) ----------------------------
def test_build_mapping_against_a_local_endpoint(tmp_path):
    import http.server
    import threading
    import urllib.parse

    from ragmeter.extraction.crosskb import check_consistency
    from ragmeter.extraction.kb_online import build_mapping

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            query = urllib.parse.parse_qs(body)["query"][0]
            seen.append((query, self.headers["User-Agent"]))
            rows = []
            if "wd:Q190804" in query:
                rows = [
                    {
                        "item": {"value": "http://www.wikidata.org/entity/Q190804"},
                        "scheme": {"value": "viaf"},
                        "value": {"value": "148691498"},
                    },
                    {
                        "item": {"value": "http://www.wikidata.org/entity/Q190804"},
                        "scheme": {"value": "isil"},
                        "value": {"value": "NL-AmRM"},
                    },
                ]
            payload = json.dumps({"results": {"bindings": rows}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}/sparql"
        out = tmp_path / "mapping.tsv"
        mapping = build_mapping(
            ["wd:Q190804", "Q5", "Q924335"],
            endpoint=endpoint,
            batch_size=2,
            out=out,
            user_agent="ragmeter-test",
        )
    finally:
        server.shutdown()
    assert len(seen) == 2 and all(agent == "ragmeter-test" for _, agent in seen)
    assert "wdt:P214" in seen[0][0] and "wdt:P791" in seen[0][0]
    text = out.read_text(encoding="utf-8")
    assert "# endpoint: " + endpoint in text and "# retrieved: " in text
    assert text.splitlines()[-2:] == ["Q190804\tisil\tNL-AmRM", "Q190804\tviaf\t148691498"]
    r = check_consistency(
        [{"entity_id": "e", "wikidata_id": "Q190804", "viaf_id": "148691498"}], mapping
    )
    assert r.status == {"e": "consistent"} and r.settings["mapping"]["sha256"]
    with pytest.raises(InputError, match="no Wikidata property known for scheme 'orcid'"):
        build_mapping(["Q1"], schemes=["orcid"], out=tmp_path / "x.tsv", endpoint=endpoint)
