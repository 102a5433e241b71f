"""Conformance: TV-FMT-01 (formats.json): BRAT, CoNLL IOB2, round trips, offset units."""

from __future__ import annotations

import pytest

from ragmeter.extraction.model import Corpus, Document, Span
from ragmeter.extraction.tokenize import simple_tokenize, tags_to_spans
from ragmeter.io.annotations import OffsetConverter
from ragmeter.io.brat import load_brat, parse_ann, write_brat
from ragmeter.io.conll import load_conll, read_conll, write_conll
from tests.extraction.vectors import vectors

V = vectors("formats.json")["TV-FMT-01"]
INP, EXP = V["input"], V["expected"]
TEXT = INP["text"]


def _corpus() -> Corpus:
    spans = []
    for n, (a, b, label) in enumerate(INP["entities_half_open"], start=1):
        tid = f"T{n}"
        kb = {INP["kb_links"][tid]} if tid in INP["kb_links"] else set()
        nil = INP["attributes"].get(tid) == "NIL"
        spans.append(Span("doc", a, b, label, text=TEXT[a:b], kb_ids=kb, nil=nil))
    return Corpus({"doc": Document("doc", TEXT)}, {"doc": spans})


def test_brat_lines_exact(tmp_path):
    report = write_brat(_corpus(), tmp_path)
    assert (tmp_path / "doc.ann").read_text(encoding="utf-8").splitlines() == EXP["brat_ann_lines"]
    assert (tmp_path / "doc.txt").read_bytes() == TEXT.encode("utf-8")
    assert report.lossless and report.n_spans == 4


def test_brat_parse():
    tlines, norms, attrs, extras, _ = parse_ann("\n".join(EXP["brat_ann_lines"]) + "\n", text=TEXT)
    parsed = [
        {
            "id": t.tid,
            "type": t.label,
            "fragments": [list(f) for f in t.fragments],
            "text": t.surface,
            "text_matches": " ".join(TEXT[a:b] for a, b in t.fragments) == t.surface,
        }
        for t in tlines
    ]
    assert parsed == EXP["brat_parsed"]
    assert norms == {"T1": [("Q190804", 5)]}
    assert attrs == {"T3": {"NIL": "true"}}
    assert extras == []


def test_brat_round_trip_is_exact(tmp_path):
    write_brat(_corpus(), tmp_path / "a")
    corpus, report = load_brat(tmp_path / "a")
    loaded = corpus.spans["doc"]
    assert [(s.start, s.end, s.label) for s in loaded] == [
        tuple(e) for e in EXP["iob2_back_to_char_spans"]
    ]
    assert sorted(loaded[0].kb_ids) == ["Q190804"] and loaded[2].nil
    write_brat(corpus, tmp_path / "b")
    for name in ("doc.txt", "doc.ann"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert report.n_spans == 4 and report.validation["relocated"] == []


def test_conll_lines_and_way_back(tmp_path):
    path = tmp_path / "doc.conll"
    report = write_conll(_corpus(), path)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[:2] == ["-DOCSTART-\tO", ""]
    assert lines[2:22] == EXP["conll_iob2_lines"]
    assert lines[22:] == ["", ""]
    # the KB link and the NIL flag cannot be held by IOB: listed
    reasons = [row["reason"] for row in report.lost]
    assert sum("KB link or NIL flag" in r for r in reasons) == 2
    tags = [line.split("\t")[1] for line in EXP["conll_iob2_lines"]]
    back = tags_to_spans(simple_tokenize(TEXT), tags)
    assert [list(s) for s in back] == EXP["iob2_back_to_char_spans"]
    assert EXP["roundtrip_equal"] is True
    corpus, _ = load_conll(path, text={"doc0001": TEXT})
    assert [[s.start, s.end, s.label] for s in corpus.spans["doc0001"]] == (
        EXP["iob2_back_to_char_spans"]
    )


def test_conll_round_trip_bytes(tmp_path):
    write_conll(_corpus(), tmp_path / "a.conll", doc_ids=True)
    corpus, _ = load_conll(tmp_path / "a.conll")
    assert corpus.doc_ids == ["doc"]
    write_conll(corpus, tmp_path / "b.conll", doc_ids=True)
    assert (tmp_path / "a.conll").read_bytes() == (tmp_path / "b.conll").read_bytes()
    cf = read_conll(tmp_path / "a.conll")
    assert len(cf.documents[0].tokens[0]) == 20


def test_discontinuous_brat_span(tmp_path):
    d = EXP["discontinuous"]
    (tmp_path / "x.txt").write_text(d["text"], encoding="utf-8")
    (tmp_path / "x.ann").write_text(d["ann"] + "\n", encoding="utf-8")
    corpus, report = load_brat(tmp_path)
    (span,) = corpus.spans["x"]
    assert [d["text"][a:b] for a, b in span.fragments] == d["fragments_text"]
    assert report.conversions[0]["kind"] == "discontinuous"
    split, _ = load_brat(tmp_path, discontinuous="fragments")
    assert [s.text for s in split.spans["x"]] == d["fragments_text"]
    write_brat(corpus, tmp_path / "out")
    assert (tmp_path / "out" / "x.ann").read_text(encoding="utf-8") == d["ann"] + "\n"


@pytest.mark.parametrize(
    ("unit", "key"), [("utf16", "utf16_code_unit_start"), ("utf8", "utf8_byte_start")]
)
def test_offset_units(unit, key):
    u = EXP["offset_units"]
    assert u["text"][u["python_codepoint_start"] :].startswith("Rijksmuseum")
    assert OffsetConverter(u["text"], unit)(u[key]) == u["python_codepoint_start"]


def test_offset_units_in_brat(tmp_path):
    u = EXP["offset_units"]
    (tmp_path / "e.txt").write_text(u["text"], encoding="utf-8")
    (tmp_path / "e.ann").write_text("T1\tMUS 3 14\tRijksmuseum\n", encoding="utf-8")
    corpus, _ = load_brat(tmp_path, offset_unit="utf16")
    assert (corpus.spans["e"][0].start, corpus.spans["e"][0].end) == (2, 13)
