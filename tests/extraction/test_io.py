"""Loaders and writers: round trips, conversions and every bad-input message (FILE:LINE)."""

from __future__ import annotations

import json

import pytest

from ragmeter.errors import InputError
from ragmeter.extraction.errors import (
    AmbiguousLinkError,
    DuplicateMentionError,
    InvalidLabelError,
    OffsetMismatchError,
    OverlapError,
    TagSchemeError,
    TokenMismatchError,
)
from ragmeter.extraction.model import Corpus, Document, Span
from ragmeter.extraction.profiles import HierarchyProfile, load_profile
from ragmeter.io.brat import load_brat, write_brat
from ragmeter.io.conll import check_same_tokens, load_conll, read_conll, write_conll
from ragmeter.io.heritage import load_heritage, load_linking_json, load_type_tsv, write_heritage
from ragmeter.io.labels import read_labels
from ragmeter.io.mentions import read_link_gold, read_link_predictions
from ragmeter.io.records import read_records

TEXT = "Het Rijksmuseum Amsterdam (ISIL: NL-AmRM) werd opgericht in 1800."


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- BRAT --------------------------------------------------------------------------------------
def brat(tmp_path, ann, text=TEXT, name="doc"):
    write(tmp_path / f"{name}.txt", text)
    return write(tmp_path / f"{name}.ann", ann)


@pytest.mark.parametrize(
    ("ann", "message"),
    [
        ("X1\tfoo\n", ":1: line starts with 'X1' (expected a BRAT id"),
        ("T1\tMUS 4 15\n", ":1: text-bound line has 2 tab-separated fields (expected 3"),
        ("T1\tMUS 4-15\tRijksmuseum\n", ":1: offsets '4-15' (expected two non-negative integers"),
        ("T1\tMUS\tRijksmuseum\n", ":1: text-bound annotation 'MUS' (expected 'Label start end')"),
        (
            "T1\tMUS 4 15\tRijksmuseum\nT1\tMUS 4 15\tRijksmuseum\n",
            ":2: id T1 is used twice (first on line 1",
        ),
        (
            "T1\tMUS 4 15\tRijksmuseum\nN1\tReference T2 Wikidata:Q1\tx\n",
            ":2: normalization refers to T2",
        ),
        (
            "T1\tMUS 4 15\tRijksmuseum\nN1\tReference T1 Q1\tx\n",
            ":2: normalization target 'Q1' has no database prefix",
        ),
        (
            "T1\tMUS 4 15\tRijksmuseum\nN1\tRef T1 wd:Q1\tx\n",
            ":2: normalization 'Ref T1 wd:Q1' (expected 'Reference T<k> <DB>:<ID>')",
        ),
        (
            "T1\tMUS 4 15\tRijksmuseum\nA1\tNIL\n",
            ":2: attribute 'NIL' (expected 'Name T<k>' or 'Name T<k> value')",
        ),
        ("T1\tMUS 4 99\tRijksmuseum\n", ":1: document 'doc': span 4-99 'MUS' ends after the text"),
        (
            "T1\tMUS 4 15\tRijksmuseun\n",
            ":1: document 'doc': span 4-15 'MUS' reads 'Rijksmuseum', not 'Rijksmuseun'",
        ),
        (
            "T1\tMUS 4 15\tRijksmuseum\nN1\tReference T1 wd:Q1\tx\nA1\tNIL T1\n",
            ":1: span 4-15 is marked NIL and has KB ids Q1",
        ),
    ],
)
def test_brat_bad_input(tmp_path, ann, message):
    path = brat(tmp_path, ann)
    with pytest.raises(InputError) as exc:
        load_brat(tmp_path)
    assert str(exc.value).startswith(str(path)), str(exc.value)
    assert message in str(exc.value)


def test_brat_missing_text_and_bad_utf8(tmp_path):
    write(tmp_path / "a" / "x.ann", "T1\tA 0 1\tH\n")
    with pytest.raises(InputError, match=r"x\.ann has no \.txt"):
        load_brat(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "y.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(InputError, match=r"y\.txt:1: not valid UTF-8 \(byte 0xe9"):
        load_brat(tmp_path / "b")
    with pytest.raises(InputError, match=r"no \.txt/\.ann documents"):
        load_brat(tmp_path / "c" if (tmp_path / "c").mkdir() is None else None)


def test_brat_doc_ids_are_relative_paths_and_text_is_byte_exact(tmp_path):
    text = "Zürich\r\nMusée  d’Orsay 🏛\n"
    write(tmp_path / "sub" / "x.txt", text)
    write(tmp_path / "sub" / "x.ann", "T1\tMUS 8 22\tMusée  d’Orsay\n")
    (tmp_path / "solo.txt").write_text("geen annotaties", encoding="utf-8")
    corpus, report = load_brat(tmp_path)
    assert corpus.doc_ids == ["solo", "sub/x"] and corpus.spans["solo"] == []
    assert corpus.documents["sub/x"].text == text  # no newline translation, no normalization
    write_brat(corpus, tmp_path / "out")
    assert (tmp_path / "out" / "sub" / "x.txt").read_bytes() == text.encode("utf-8")
    assert report.warnings == []


def test_brat_relations_are_kept_and_renumbered(tmp_path):
    ann = (
        "T2\tLOC 16 25\tAmsterdam\n"
        "T1\tMUS 4 15\tRijksmuseum\n"
        "R1\tlocated_in Arg1:T1 Arg2:T2\n"
        "#1\tAnnotatorNotes T2\tcity\n"
        "A1\tConfidence T1 high\n"
    )
    brat(tmp_path, ann)
    corpus, _ = load_brat(tmp_path)
    report = write_brat(corpus, tmp_path / "out")
    assert (tmp_path / "out" / "doc.ann").read_text(encoding="utf-8") == (
        "T1\tMUS 4 15\tRijksmuseum\n"
        "T2\tLOC 16 25\tAmsterdam\n"
        "A1\tConfidence T1 high\n"
        "R1\tlocated_in Arg1:T1 Arg2:T2\n"
        "#1\tAnnotatorNotes T2\tcity\n"
    )
    assert report.lossless


def test_brat_writer_refuses_surfaces_with_line_breaks_and_lists_identifiers(tmp_path):
    text = "Rijks\nmuseum"
    c = Corpus({"d": Document("d", text)}, {"d": [Span("d", 0, 12, "MUS")]})
    with pytest.raises(InputError, match="covers a tab or line break"):
        write_brat(c, tmp_path)
    c = Corpus(
        {"d": Document("d", TEXT)}, {"d": [Span("d", 4, 15, "MUS", identifiers={"viaf": "1"})]}
    )
    report = write_brat(c, tmp_path / "ok")
    assert report.lost == [{"doc_id": "d", "span": [4, 15], "identifiers": {"viaf": "1"}}]


def test_brat_discontinuous_error_policy(tmp_path):
    brat(tmp_path, "T1\tMUS 0 3;4 15\tHet Rijksmuseum\n")
    with pytest.raises(InputError, match=r"doc\.ann:1: T1 is discontinuous \(2 fragments"):
        load_brat(tmp_path, discontinuous="error")


def test_brat_utf8_offsets_inside_a_character(tmp_path):
    brat(tmp_path, "T1\tX 1 3\tx\n", text="🏛 Rijksmuseum")
    with pytest.raises(InputError, match=r"doc\.ann:1: utf8 offset 1 falls inside a character"):
        load_brat(tmp_path, offset_unit="utf8")


# -- CoNLL ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "kwargs", "message"),
    [
        ("Het O\nmuseum\n", {}, ":2: one column (expected at least a token and a tag)"),
        ("Het X-MUS\n", {}, ":1: tag 'X-MUS' is not a IOB2 tag"),
        ("Het E-MUS\n", {"mode": "strict"}, ":1: tag 'E-MUS' is not a IOB2 tag"),
        ("Het OMUS\n", {}, ":1: tag 'OMUS' is not a IOB2 tag"),
        ("# doc_id = \nHet O\n", {}, ":1: empty doc_id comment"),
        ("", {}, ": no tokens (expected one 'token tag' line per token)"),
        ("# doc_id = a\nHet O\n# doc_id = a\nHet O\n", {}, ": document 'a' appears twice"),
    ],
)
def test_conll_bad_input(tmp_path, content, kwargs, message):
    path = write(tmp_path / "x.conll", content)
    with pytest.raises(InputError) as exc:
        read_conll(path, **kwargs)
    assert str(exc.value).startswith(str(path)) and message in str(exc.value), str(exc.value)


def test_conll_documents_comments_and_columns(tmp_path):
    content = (
        "-DOCSTART- -X- -X- O\n\n"
        "Het DET _ O\nRijksmuseum PROPN _ B-MUS\n\n"
        "# doc_id = second\n# text = Amsterdam bloeit\n"
        "Amsterdam PROPN _ B-LOC\nbloeit VERB _ O\n"
        "-DOCSTART- O\n# doc_id = third\n\n# O\n"
    )
    path = write(tmp_path / "x.conll", content)
    cf = read_conll(path)
    assert [d.doc_id for d in cf.documents] == ["doc0001", "second", "third"]
    assert cf.documents[2].tokens == [["#"]]
    corpus, report = load_conll(path)
    assert [(s.start, s.end, s.label) for s in corpus.spans["second"]] == [(0, 9, "LOC")]
    assert report.notes["text_rebuilt"] is True


def test_conll_text_alignment_errors(tmp_path):
    path = write(tmp_path / "x.conll", "Het O\nRijksmuseum B-MUS\n")
    with pytest.raises(
        TokenMismatchError, match=r"x\.conll:2: token 'Rijksmuseum' is not at offset 4"
    ):
        load_conll(path, text={"x": "Het Stedelijk"})
    with pytest.raises(TokenMismatchError, match="no text given for document 'x'"):
        load_conll(path, text={"y": "Het Rijksmuseum"})
    corpus, _ = load_conll(path, text={"x": "  Het\tRijksmuseum!"})
    assert [(s.start, s.end) for s in corpus.spans["x"]] == [(6, 17)]


def test_conll_gold_and_predictions_need_the_same_tokens(tmp_path):
    g = read_conll(write(tmp_path / "g.conll", "Het O\nRijksmuseum B-MUS\n\nis O\n"))
    p = read_conll(write(tmp_path / "p.conll", "Het O\nRijksmusea B-MUS\n\nis O\n"))
    with pytest.raises(TokenMismatchError) as exc:
        check_same_tokens(g, p)
    assert str(exc.value) == (
        f"{tmp_path / 'p.conll'}:2: token 'Rijksmusea' differs from gold 'Rijksmuseum' at "
        f"{tmp_path / 'g.conll'}:2 (expected identical tokens in gold and predictions)"
    )
    short = read_conll(write(tmp_path / "s.conll", "Het O\nRijksmuseum B-MUS\n"))
    with pytest.raises(TokenMismatchError, match="has 1 sentences, gold has 2"):
        check_same_tokens(g, short)


def test_conll_strict_gold_and_repairs(tmp_path):
    path = write(tmp_path / "x.conll", "Het O\nRijksmuseum I-MUS\n")
    _, report = load_conll(path)
    assert report.conversions[0]["kind"] == "repaired_tags"
    corpus, report = load_conll(path, mode="strict")
    assert corpus.spans["x"] == [] and report.conversions[0]["kind"] == "dropped_ill_formed"
    with pytest.raises(TagSchemeError, match=r"x\.conll:1: ill-formed IOB2 sentence"):
        load_conll(path, strict_gold=True)


@pytest.mark.parametrize("scheme", ["IOB2", "IOB1", "IOBES", "BILOU", "IOE1", "IOE2"])
def test_conll_schemes_round_trip(tmp_path, scheme):
    text = "Rijksmuseum Stedelijk Museum opende in 1885 ."
    spans = [Span("d", 0, 11, "MUS"), Span("d", 12, 28, "MUS"), Span("d", 39, 43, "TMP")]
    c = Corpus({"d": Document("d", text)}, {"d": spans})
    write_conll(c, tmp_path / "x.conll", scheme=scheme)
    back, _ = load_conll(tmp_path / "x.conll", scheme=scheme, mode="strict", text={"doc0001": text})
    assert [(s.start, s.end, s.label) for s in back.spans["doc0001"]] == [
        (s.start, s.end, s.label) for s in spans
    ]


def test_conll_writer_reports_what_iob_cannot_hold(tmp_path):
    text = "Het Rijksmuseum Amsterdam\nis groot"
    spans = [Span("d", 4, 25, "MUS"), Span("d", 16, 25, "LOC"), Span("d", 5, 15, "X")]
    c = Corpus({"d": Document("d", text)}, {"d": spans})
    with pytest.raises(OverlapError, match="share a token and cannot be written as tags"):
        write_conll(c, tmp_path / "x.conll")
    report = write_conll(c, tmp_path / "x.conll", on_overlap="keep_longest")
    reasons = sorted(row["reason"] for row in report.lost)
    assert reasons == ["misaligned", "overlap", "overlap"]
    lines = (tmp_path / "x.conll").read_text(encoding="utf-8").split("\n")
    assert lines[2:9] == [
        "Het\tO",
        "Rijksmuseum\tB-MUS",
        "Amsterdam\tI-MUS",
        "",
        "is\tO",
        "groot\tO",
        "",
    ]


# -- heritage JSON ----------------------------------------------------------------------------
def record(**over):
    rec = {
        "id": "eval_001",
        "text": TEXT,
        "ner_annotations": [
            {"text": "Rijksmuseum Amsterdam", "type": "GRP.HER.MUS", "start": 4, "end": 25},
            {"text": "NL-AmRM", "type": "IDENTIFIER", "start": 33, "end": 40},
        ],
        "type_classification": {"primary_type": "M", "secondary_types": ["A"]},
        "entity_linking": {
            "Rijksmuseum Amsterdam": {
                "wikidata_id": "Q190804",
                "viaf_id": "148691498",
                "isil_code": "NL-AmRM",
                "ghcid": None,
            }
        },
    }
    rec.update(over)
    return rec


def jsonl(tmp_path, *records, name="gold.jsonl"):
    return write(tmp_path / name, "".join(json.dumps(r) + "\n" for r in records))


@pytest.mark.parametrize(
    ("rec", "message"),
    [
        ({"id": None}, ":1: record has no 'id'"),
        ({"text": 5}, ":1: record 'eval_001': 'text' is missing or not a string"),
        ({"ner_annotations": {}}, ":1: record 'eval_001': ner_annotations is not a list"),
        (
            {"ner_annotations": [{"type": "X", "start": "4", "end": 5}]},
            "ner_annotations[0]: start is '4'",
        ),
        ({"ner_annotations": [{"start": 4, "end": 5}]}, "ner_annotations[0]: type is None"),
        (
            {"type_classification": {"secondary_types": []}},
            "type_classification has no 'primary_type'",
        ),
        (
            {"entity_linking": {"Amsterdam": {"wikidata_id": "Q727"}}},
            "entity_linking key 'Amsterdam' matches 0 annotations",
        ),
        ({"entity_linking": 5}, "entity_linking is neither an object keyed by surface nor a list"),
        (
            {"entity_linking": [{"start": 4, "end": 25, "mention": "Rijks"}]},
            "link 4-25 reads 'Rijksmuseum Amsterdam', not 'Rijks'",
        ),
        (
            {"entity_linking": {"Rijksmuseum Amsterdam": {"wikidata_id": 5}}},
            "wikidata_id is 5 (expected a string or null)",
        ),
    ],
)
def test_heritage_bad_input(tmp_path, rec, message):
    path = jsonl(tmp_path, record(**rec))
    with pytest.raises(InputError) as exc:
        load_heritage(path)
    assert str(exc.value).startswith(str(path)) and message in str(exc.value), str(exc.value)


def test_heritage_ambiguous_surface_and_duplicate_ids(tmp_path):
    text = "Museum A en Museum B, Museum"
    rec = record(
        text=text,
        ner_annotations=[
            {"text": "Museum", "type": "GRP.HER.MUS", "start": 0, "end": 6},
            {"text": "Museum", "type": "GRP.HER.MUS", "start": 12, "end": 18},
        ],
        entity_linking={"Museum": {"wikidata_id": "Q1"}},
    )
    with pytest.raises(
        AmbiguousLinkError, match="entity_linking key 'Museum' matches 2 annotations"
    ):
        load_heritage(jsonl(tmp_path, rec))
    with pytest.raises(InputError, match=r":2: record id 'eval_001' appears twice"):
        load_heritage(jsonl(tmp_path, record(), record(), name="dup.jsonl"))


def test_heritage_list_form_round_trip(tmp_path):
    text = "Museum A en Museum B"
    rec = {
        "id": "r1",
        "text": text,
        "strata": {"country": "NL"},
        "ner_annotations": [
            {"text": "Museum", "type": "GRP.HER.MUS", "start": 0, "end": 6},
            {"text": "Museum", "type": "GRP.HER.MUS", "start": 12, "end": 18},
        ],
        "entity_linking": [
            {"mention_id": "m1", "mention": "Museum", "start": 0, "end": 6, "wikidata_id": "Q1"},
            {"mention_id": "m2", "mention": "Museum", "start": 12, "end": 18, "wikidata_id": None},
        ],
        "qa_pairs": [],
    }
    path = write(tmp_path / "gold.json", json.dumps([rec], indent=2))
    corpus, report = load_heritage(path)
    s1, s2 = corpus.spans["r1"]
    assert (s1.mention_id, sorted(s1.kb_ids), s2.mention_id, s2.nil) == (
        "r1:m1",
        ["Q1"],
        "r1:m2",
        True,
    )
    assert report.notes["nil_ratio"] == 0.5
    out = tmp_path / "out.json"
    wr = write_heritage(corpus, out)
    assert wr.notes["list_form"] == ["r1"]
    again, _ = load_heritage(out)
    assert again.spans == corpus.spans
    assert read_records(out)[0][1]["strata"] == {"country": "NL"}
    write_heritage(again, tmp_path / "out2.json")
    assert (tmp_path / "out2.json").read_bytes() == out.read_bytes()


def test_heritage_surface_form_round_trip_is_byte_exact(tmp_path):
    path = jsonl(tmp_path, record(), record(id="eval_002", entity_linking=None))
    corpus, _ = load_heritage(path)
    write_heritage(corpus, tmp_path / "a.jsonl")
    again, _ = load_heritage(tmp_path / "a.jsonl")
    write_heritage(again, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert again.spans == corpus.spans
    first = json.loads((tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert list(first) == ["id", "text", "ner_annotations", "type_classification", "entity_linking"]
    from ragmeter.io.heritage import linking_gold, type_labels

    assert type_labels(again) == {"eval_001": "M", "eval_002": "M"}
    assert type_labels(again, secondary=True)["eval_001"] == {"M", "A"}
    assert linking_gold(again) == {"eval_001:4-25": frozenset({"Q190804"})}


def test_heritage_relocation_covers_list_links(tmp_path):
    rec = record(
        ner_annotations=[{"text": "1800", "type": "TMP", "start": 58, "end": 62}],
        entity_linking=[{"start": 58, "end": 62, "mention": "1800", "wikidata_id": "NIL"}],
    )
    path = jsonl(tmp_path, rec)
    with pytest.raises(OffsetMismatchError, match="span 58-62 'TMP' reads 'n 18', not '1800'"):
        load_heritage(path)
    corpus, report = load_heritage(path, on_offset_mismatch="relocate")
    (span,) = corpus.spans["eval_001"]
    assert (span.start, span.end, span.nil) == (60, 64, True)
    assert report.conversions[0]["kind"] == "relocated_link"


def test_heritage_offset_units(tmp_path):
    text = "🏛 Rijksmuseum"
    rec = {
        "id": "r",
        "text": text,
        "ner_annotations": [{"text": "Rijksmuseum", "type": "MUS", "start": 5, "end": 16}],
    }
    corpus, _ = load_heritage(jsonl(tmp_path, rec), offset_unit="utf8")
    assert (corpus.spans["r"][0].start, corpus.spans["r"][0].end) == (2, 13)
    bad = dict(rec, ner_annotations=[{"type": "MUS", "start": 1, "end": 16}])
    with pytest.raises(InputError, match="ner_annotations\\[0\\]: utf8 offset 1 falls inside"):
        load_heritage(jsonl(tmp_path, bad, name="bad.jsonl"), offset_unit="utf8")


def test_heritage_vocabulary(tmp_path):
    with pytest.raises(InvalidLabelError, match="gold label 'IDENTIFIER'"):
        load_heritage(jsonl(tmp_path, record()), vocabulary=["GRP.HER.MUS"])


def test_records_reader_errors(tmp_path):
    cases = {
        "a.json": ('[{"id": 1},\n 5]', ":2: a JSON int (expected an object per record)"),
        "b.json": ('[{"id": 1}\n {"id": 2}]', "expected ',' or ']' after a record"),
        "c.json": ("[]", "empty array (expected at least one record)"),
        "d.json": ('[{"x": NaN}]', ":1: NaN is not valid JSON"),
        "e.jsonl": ('{"id": 1}\n{"id": \n', ":2: not valid JSON"),
        "f.json": ("   ", "empty file"),
        "g.json": ('[{"id": 1}] x', "text after the closing ']'"),
    }
    for name, (content, message) in cases.items():
        path = write(tmp_path / name, content)
        with pytest.raises(InputError) as exc:
            read_records(path)
        assert message in str(exc.value), (name, str(exc.value))


# -- related heritage files, labels, mentions, profiles ----------------------------------------
def test_type_tsv(tmp_path):
    path = write(tmp_path / "t.tsv", "text\tgold_type\tsecondary_types\nA\tM\tA|L\nB\tA\t\n")
    rows = load_type_tsv(path)
    assert [(r.id, r.primary, r.secondary, r.line) for r in rows] == [
        ("1", "M", ["A", "L"], 2),
        ("2", "A", [], 3),
    ]
    for content, message in [
        ("text\tlabel\n", ":1: header 'text\\tlabel' (expected text<TAB>gold_type"),
        ("text\tgold_type\nA\tM\tx\n", ":2: 3 column(s) (expected 2: text, gold_type)"),
        ("id\ttext\tgold_type\n1\tA\tM\n1\tB\tA\n", ":3: id '1' appears twice (first on line 2)"),
        ("text\tgold_type\nA\t \n", ":2: empty gold_type"),
        ("text\tgold_type\n", ": no rows after the header"),
    ]:
        p = write(tmp_path / "bad.tsv", content)
        with pytest.raises(InputError) as exc:
            load_type_tsv(p)
        assert message in str(exc.value), str(exc.value)


def test_label_files(tmp_path):
    tsv = read_labels(write(tmp_path / "a.tsv", "id\tlabel\tlabels\nq1\tM\tA|L\nq2\tA\t\n"))
    assert tsv.labels == {"q1": "M", "q2": "A"} and tsv.label_sets["q1"] == {"M", "A", "L"}
    js = read_labels(
        write(tmp_path / "b.jsonl", '{"id": "q1", "label": "M"}\n{"id": 2, "labels": ["A", "L"]}\n')
    )
    assert js.labels == {"q1": "M", "2": "A"} and js.secondary == {"2": ["L"]}
    gold = read_labels(jsonl(tmp_path, record(), name="g.jsonl"))
    assert gold.labels == {"eval_001": "M"} and gold.secondary == {"eval_001": ["A"]}
    heritage = read_labels(write(tmp_path / "h.tsv", "text\tgold_type\tsecondary_types\nx\tM\t\n"))
    numbers = read_labels(jsonl(tmp_path, {"id": "q1", "label": 3}, name="n.jsonl"))
    assert numbers.labels == {"q1": "3"}  # ratings on a scale, read as their text
    assert heritage.labels == {"1": "M"} and heritage.format == "heritage-tsv"
    for name, content, message in [
        ("c.tsv", "item\tlabel\nq1\tM\n", ":1: header 'item\\tlabel' (expected id<TAB>label"),
        ("d.tsv", "id\tlabel\nq1\tM\nq1\tA\n", ":3: item 'q1' appears twice (first on line 2"),
        ("e.tsv", "id\tlabel\nq1\n", ":2: 1 column(s) (expected 2: id, label)"),
        ("f.jsonl", '{"id": "q1", "label": true}\n', ":1: label is True (expected a string or"),
        ("g.jsonl", '{"label": "M"}\n', ":1: record has no 'id'"),
        ("h.tsv", "", ": empty file"),
        ("i.tsv", "id\tlabel\nq1\t\n", ":2: item 'q1' has an empty label"),
    ]:
        p = write(tmp_path / name, content)
        with pytest.raises(InputError) as exc:
            read_labels(p)
        assert str(exc.value).startswith(str(p)) and message in str(exc.value), str(exc.value)


def test_mention_files(tmp_path):
    gold = read_link_gold(
        write(
            tmp_path / "g.jsonl",
            '{"mention_id": "doc1:4-25", "kb_id": "wd:Q190804"}\n'
            '{"doc_id": "doc2", "start": 0, "end": 8, "kb_ids": null}\n',
        )
    )
    assert gold.records == {
        "doc1:4-25": {"kb_ids": ["Q190804"], "nil": False},
        "doc2:0-8": {"kb_ids": [], "nil": True},
    }
    assert gold.notes["nil_ratio"] == 0.5
    heritage = read_link_gold(
        write(
            tmp_path / "el.json",
            '[{"mention": "Rijksmuseum", "context": "x", "gold_wikidata": "Q190804"},'
            ' {"mention": "Museum X", "context": "y", "gold_wikidata": ""}]',
        )
    )
    assert list(heritage.records) == ["m1", "m2"] and heritage.notes["nil_ratio"] == 0.5
    full = read_link_gold(jsonl(tmp_path, record(), name="full.jsonl"))
    assert full.records == {"eval_001:4-25": {"kb_ids": ["Q190804"], "nil": False}}
    pred = read_link_predictions(
        write(
            tmp_path / "p.jsonl",
            '{"doc_id": "eval_001", "mention_id": "m1", "candidates": ["Q1"]}\n',
        )
    )
    assert list(pred.records) == ["eval_001:m1"]
    dup = write(
        tmp_path / "d.jsonl",
        '{"mention_id": "a", "candidates": []}\n{"mention_id": "a", "candidates": []}\n',
    )
    with pytest.raises(
        DuplicateMentionError,
        match=r"d\.jsonl:2: second prediction for mention 'a' \(first on line 1",
    ):
        read_link_predictions(dup)
    with pytest.raises(InputError, match=r":1: record has no mention_id"):
        read_link_predictions(write(tmp_path / "e.jsonl", '{"candidates": []}\n'))
    with pytest.raises(InputError, match=r":1: record has neither 'candidates' nor 'nil'"):
        read_link_predictions(write(tmp_path / "f.jsonl", '{"mention_id": "a"}\n'))
    with pytest.raises(InputError, match=r":1: mention 'a' is NIL and has KB ids"):
        read_link_gold(
            write(tmp_path / "h.jsonl", '{"mention_id": "a", "kb_ids": ["Q1"], "nil": true}\n')
        )


def test_linking_json_duplicate_ids(tmp_path):
    path = write(
        tmp_path / "el.jsonl", '{"id": "a", "mention": "x"}\n{"id": "a", "mention": "y"}\n'
    )
    with pytest.raises(InputError, match=r":2: mention id 'a' appears twice"):
        load_linking_json(path)


def test_profiles(tmp_path):
    good = write(
        tmp_path / "p.yaml", "name: mini\nvocabulary: [A, B]\nparent: {A: X, B: X, X: TOP}\n"
    )
    prof = load_profile(good)
    assert prof.ancestors("A") == ("X", "TOP") and prof.category("A", level=2) == "TOP"
    for content, message in [
        ("vocabulary: [A, B]\nparent: {A: X}\n", "label 'B' has no parent"),
        (
            "vocabulary: [A, B]\nparent: {A: B, B: X}\n",
            "category 'B' of 'A' is also a vocabulary label",
        ),
        ("vocabulary: [A]\nparent: {A: X, X: Y, Y: X}\n", "cycle in the hierarchy"),
        ("vocabulary: [A, A]\n", "label 'A' listed twice"),
        ("vocabulary: A\n", "'vocabulary' must be a list of strings"),
        ("vocab: [A]\n", "unknown key 'vocab'"),
        ("vocabulary: [A]\nner_to_type: {MUS: Z}\n", "ner_to_type maps 'MUS' to 'Z'"),
        ("[unclosed\n", "bad.yaml:2: not valid YAML"),
    ]:
        p = write(tmp_path / "bad.yaml", content)
        with pytest.raises(InputError) as exc:
            load_profile(p)
        assert str(exc.value).startswith(str(p)) and message in str(exc.value), str(exc.value)
    with pytest.raises(InputError, match="reserved"):
        HierarchyProfile("x", ("__INVALID__",))
