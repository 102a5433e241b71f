"""Property tests: entity scores on random tag sequences equal seqeval 1.2.2."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from seqeval.metrics import accuracy_score, classification_report
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import BILOU, IOB2, IOBES, IOE2, Entities

from ragmeter.extraction.ner import evaluate_ner_tags
from ragmeter.extraction.tags import decode
from tests.extraction.vectors import close

TYPES = ("LOC", "MUS", "GRP.HER.MUS", "NL-ISIL")


def tags(prefixes: str):
    tag = st.one_of(
        st.just("O"),
        st.builds(
            lambda p, t: f"{p}-{t}",
            st.sampled_from(prefixes.replace("O", "")),
            st.sampled_from(TYPES),
        ),
    )
    return st.lists(tag, min_size=0, max_size=9)


def pairs(prefixes: str):
    """Gold and predicted sentences with the same lengths."""
    return st.lists(st.tuples(tags(prefixes), tags(prefixes)), min_size=1, max_size=5).map(
        lambda rows: (
            [g for g, _ in rows],
            [p[: len(g)] + ["O"] * (len(g) - len(p[: len(g)])) for g, p in rows],
        )
    )


def _compare(report, ref) -> None:
    for label, row in ref.items():
        if label.endswith(" avg"):
            mine = report.entity[label.split()[0]]
        else:
            mine = report.entity["per_label"][label]
            assert mine["support"] == row["support"], label
        for key, ref_key in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert close(mine[key], float(row[ref_key])), (label, key, mine[key], row[ref_key])
    per = {k for k in ref if not k.endswith(" avg")}
    assert per == set(report.entity["per_label"])


@settings(max_examples=150)
@given(data=pairs("BIESO"), zd=st.sampled_from([0, 1]))
def test_lenient_mode_equals_seqeval_default(data, zd):
    y_true, y_pred = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        has_entities = bool(get_entities(y_true) or get_entities(y_pred))
        assume(has_entities)  # seqeval's report fails on no entities at all
        ref = classification_report(y_true, y_pred, output_dict=True, zero_division=zd)
        acc = accuracy_score(y_true, y_pred) if any(y_true) else None
    r = evaluate_ner_tags(y_true, y_pred, zero_division=zd)
    _compare(r, ref)
    if acc is not None:
        assert close(r.get("token_accuracy"), acc)
    # the chunks themselves, in seqeval's inclusive form, per sentence
    for seq in y_true:
        assert [(t, s, e - 1) for t, s, e in decode(seq)] == get_entities(seq)


SCHEMES = {"IOB2": (IOB2, "BIO"), "IOBES": (IOBES, "BIESO"), "IOE2": (IOE2, "IEO")}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@settings(max_examples=60)
@given(data=st.data())
def test_strict_mode_equals_seqeval_strict(scheme, data):
    cls, prefixes = SCHEMES[scheme]
    y_true, y_pred = data.draw(pairs(prefixes))
    ents = Entities(y_true, cls).entities + Entities(y_pred, cls).entities
    assume(any(ents))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = classification_report(
            y_true, y_pred, output_dict=True, mode="strict", scheme=cls, zero_division=0
        )
    r = evaluate_ner_tags(y_true, y_pred, scheme=scheme, mode="strict")
    _compare(r, ref)
    for seq in y_pred:
        want = [(e.tag, e.start, e.end) for e in Entities([seq], cls).entities[0]]
        assert decode(seq, scheme=scheme, mode="strict") == want


@settings(max_examples=40)
@given(data=pairs("BILUO"))
def test_bilou_normalized_to_iobes_equals_seqeval_bilou(data):
    y_true, _ = data
    for seq in y_true:
        want = [(e.tag, e.start, e.end) for e in Entities([seq], BILOU).entities[0]]
        assert decode(seq, scheme="BILOU", mode="strict") == want
