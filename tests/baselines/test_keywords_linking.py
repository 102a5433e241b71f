"""Keyword type classifier (built-in table, user YAML) and exact/fuzzy entity linking."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml
from rapidfuzz import fuzz, process

from ragmeter.baselines import ExactLinker, FuzzyLinker, KeywordClassifier
from ragmeter.baselines.inputs import read_labels
from ragmeter.baselines.linking import normalise
from ragmeter.errors import InputError

KB = (
    "kb_id\tlabel\taliases\nQ190804\tRijksmuseum\tRijksmuseum Amsterdam\n"
    "ex:amsterdam-museum\tAmsterdam Museum\t\nex:stedelijk\tStedelijk Museum Amsterdam\t\n"
)

# One sentence per keyword of the built-in table (each must make its keyword match)
SENTENCES = {
    "galerie": "Kunstgalerie De Poort", "gallery": "The Ashford Art Gallery",
    "galerij": "De Galerij aan zee", "kunsthal": "Kunsthal Rotterdam",
    "=galeria": "Galeria Nacional",
    "bibliotheek": "Openbare Bibliotheek Veenmeer", "library": "Ashbury Public Library",
    "libraries": "The city libraries", "bibliothek": "Stadtbibliothek Köln",
    "bibliotheque": "Bibliothèque nationale", "mediatheek": "Mediatheek Delft",
    "=biblioteca": "Biblioteca Nacional", "archief": "Regionaal Archief Zandmeer",
    "archieven": "Gemeentelijke archieven", "archiv": "Stadtarchiv München",
    "=archivo": "Archivo General", "=archivio": "Archivio di Stato",
    "record office": "The Millford Record Office", "museum": "Het Rijksmuseum",
    "musee": "Le Musée d'Orsay", "museo": "Museo del Prado", "=museu": "Museu Picasso",
    "=musea": "De musea van Leiden", "vereniging": "Historische Vereniging Eikdijk",
    "genootschap": "Oudheidkundig Genootschap", "heemkunde": "Heemkundekring Molhoven",
    "society": "Elderham Local History Society", "verein": "Heimatverein Trier",
    "societe": "Société historique",
}  # fmt: skip


def test_worked_examples() -> None:
    clf = KeywordClassifier.load("heritage", multi_label=True)
    recs = clf.predict([
        ("a", "Het Rijksmuseum Amsterdam (ISIL: NL-AmRM) werd opgericht in 1800 ..."),
        ("b", "Het Stadsarchief en de Openbare Bibliotheek delen een gebouw."),
        ("c", "Een verzameling oude foto's."),
    ])  # fmt: skip
    assert recs[0] == {
        "id": "a",
        "label": "M",
        "secondary_labels": [],
        "scores": {"M": 1},
        "matched": {"M": ["museum"]},
    }
    assert recs[1]["label"] == "A" and recs[1]["secondary_labels"] == ["L"]
    assert recs[1]["scores"] == {"A": 1, "L": 1}
    assert recs[2] == {"id": "c", "label": "U", "secondary_labels": [], "scores": {}, "matched": {}}


def test_every_builtin_keyword_matches_its_sentence() -> None:
    clf = KeywordClassifier.load("heritage")
    table = {w for words in clf.keywords.values() for w in (k.text for k in words)}
    assert table == set(SENTENCES)
    for kw, sentence in SENTENCES.items():
        _, matched, _ = clf.scores(sentence)
        assert any(kw in m for m in matched.values()), (kw, sentence)


def test_user_table_whole_words_exclude_ties_and_null_fallback(tmp_path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(yaml.safe_dump({
        "labels": ["X", "Y"], "fallback": None,
        "keywords": {"X": ["=kring", "huis"], "Y": ["kerk"]},
        "exclude": {"X": ["huisarts"]},
    }))  # fmt: skip
    clf = KeywordClassifier.load(str(path))
    assert clf.predict_one("Heemkundekring")["label"] is None  # =kring: whole token only
    assert clf.predict_one("De Kring bij het Huis")["scores"] == {"X": 2}
    assert clf.predict_one("de huisarts")["label"] is None  # excluded token
    assert clf.predict_one("kerk en huis")["label"] == "Y"  # tie: first match wins
    assert clf.predict_one("HUIS kerk")["label"] == "X"
    assert clf.classify("Kerkhuis") == {"primary_type": "X", "secondary_types": []}  # label order


def test_unknown_label_in_a_keyword_file_is_an_input_error(tmp_path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text("labels: [X]\nkeywords:\n  X: [a]\n  Z: [b]\n")
    with pytest.raises(InputError) as err:
        KeywordClassifier.load(str(path))
    assert str(err.value) == (
        f"{path}:4: keywords names label 'Z', which is not in labels (expected one of X)"
    )


def test_fuzzy_worked_example_matches_rapidfuzz(tmp_path) -> None:
    (tmp_path / "kb.tsv").write_text(KB)
    linker = FuzzyLinker(str(tmp_path / "kb.tsv"))
    recs = linker.link_all(
        [("a", "Rijksmuseum Amsterdam"), ("b", "Rijksmusem"), ("c", "Musée d'Orsay")]
    )
    assert [(c["kb_id"], round(c["score"], 4)) for c in recs[0]["candidates"]] == [
        ("Q190804", 1.0),
        ("ex:amsterdam-museum", 0.8649),
        ("ex:stedelijk", 0.6809),
    ]
    assert [(c["kb_id"], round(c["score"], 4)) for c in recs[1]["candidates"]] == [
        ("Q190804", 0.9524)
    ]
    assert recs[1]["nil"] is False and recs[2] == {"mention_id": "c", "candidates": [], "nil": True}
    # the scores are rapidfuzz's own, on the normalised strings
    best = process.extractOne(
        normalise("Rijksmusem"), [normalise("Rijksmuseum")], scorer=fuzz.token_sort_ratio
    )
    assert recs[1]["candidates"][0]["score"] == best[1] / 100
    assert (
        round(
            fuzz.token_sort_ratio(normalise("Musée d'Orsay"), normalise("Amsterdam Museum")) / 100,
            4,
        )
        == 0.4138
    )
    exact = ExactLinker(str(tmp_path / "kb.tsv")).link_all(
        [("b", "Rijksmusem"), ("a", "rijksmuseum  AMSTERDAM")]
    )
    assert exact[0]["nil"] is True
    assert exact[1]["candidates"] == [
        {"kb_id": "Q190804", "score": 1.0, "matched_name": "Rijksmuseum Amsterdam"}
    ]


def test_ids_canonicalised_rows_merged_prior_then_file_order(tmp_path) -> None:
    path = tmp_path / "kb.jsonl"
    rows = [
        {"kb_id": "http://www.wikidata.org/entity/Q1", "label": "Museum"},
        {"kb_id": "Q2", "label": "Museum", "prior": 5},
        {"kb_id": "wd:Q1", "label": "Het Museum"},
        {"kb_id": "Q3", "label": "Museum"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ents = read_labels(path)
    assert [(e.kb_id, e.names) for e in ents] == [
        ("Q1", ["Museum", "Het Museum"]),
        ("Q2", ["Museum"]),
        ("Q3", ["Museum"]),
    ]
    for linker in (ExactLinker(ents), FuzzyLinker(ents)):
        rec = linker.link("museum", context="")
        assert [c["kb_id"] for c in rec["candidates"]] == ["Q2", "Q1", "Q3"]


def test_workers_do_not_change_the_output(tmp_path) -> None:
    rng = np.random.default_rng(1)
    names = ["".join(rng.choice(list("abcdefgh "), 12)) for _ in range(300)]
    (tmp_path / "kb.tsv").write_text(
        "kb_id\tlabel\n" + "".join(f"Q{i}\t{n.strip() or 'x'}\n" for i, n in enumerate(names))
    )
    mentions = [(f"m{i}", names[i][:-1]) for i in range(0, 300, 3)]
    one = FuzzyLinker(str(tmp_path / "kb.tsv"), workers=1, min_score=0.3).link_all(mentions)
    two = FuzzyLinker(str(tmp_path / "kb.tsv"), workers=2, min_score=0.3).link_all(mentions)
    assert one == two and sum(len(r["candidates"]) for r in one) > 100


@pytest.mark.parametrize(("body", "message"), [
    ("kb_id\tlabel\nQ1\t \n", ":2: empty label (expected the entity's name)"),
    ("kb_id\tlabel\tprior\nQ1\tA\tabc\n", ":2: prior 'abc' is not a number (expected a number)"),
    ("kb_id\tname\nQ1\tA\n", ":1: header 'kb_id\\tname' lacks kb_id or label"),
    ("kb_id\tlabel\nQ1\tA\textra\n", ":2: 3 columns (expected 2, as in the header)"),
])  # fmt: skip
def test_bad_label_rows(tmp_path, body, message) -> None:
    (tmp_path / "kb.tsv").write_text(body)
    with pytest.raises(InputError) as err:
        read_labels(tmp_path / "kb.tsv")
    assert re.escape(message).replace("\\", "") in str(err.value).replace("\\", "")
    assert str(err.value).startswith(str(tmp_path / "kb.tsv") + ":")
