"""Property tests: classification, multi-label and token-level scores equal scikit-learn."""

from __future__ import annotations

import math
import warnings

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_recall_fscore_support,
)
from sklearn.preprocessing import MultiLabelBinarizer

from ragmeter.extraction.classification import evaluate_types, evaluate_types_multilabel
from ragmeter.extraction.token_level import token_level_metrics
from tests.extraction.vectors import close

ALPHABET = "MALGOR"


def _same(mine, ref) -> bool:
    if mine is None:
        return ref is None or (isinstance(ref, float) and math.isnan(ref))
    return close(mine, float(ref))


labelled = st.integers(1, 25).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(ALPHABET), min_size=n, max_size=n),
        st.lists(st.sampled_from(ALPHABET), min_size=n, max_size=n),
    )
)


@settings(max_examples=150)
@given(
    data=labelled,
    zd=st.sampled_from([0, 1, "nan"]),
    label_set=st.one_of(
        st.just("present"),
        st.lists(st.sampled_from(ALPHABET + "XZ"), min_size=1, max_size=5, unique=True),
    ),
)
def test_single_label_equals_sklearn(data, zd, label_set):
    y_true, y_pred = data
    r = evaluate_types(
        dict(enumerate(y_true)), dict(enumerate(y_pred)), labels=label_set, zero_division=zd
    )
    labels = r.labels_used
    if label_set == "present":
        assert labels == sorted(set(y_true) | set(y_pred))
    sk_zd = np.nan if zd == "nan" else zd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert close(r.accuracy, accuracy_score(y_true, y_pred))
        assert close(r.balanced_accuracy, balanced_accuracy_score(y_true, y_pred))
        p, rc, f, s = precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=None, zero_division=sk_zd
        )
        for k, lab in enumerate(labels):
            mine = r.per_class[lab]
            assert _same(mine["precision"], p[k]) and _same(mine["recall"], rc[k]), lab
            assert _same(mine["f1"], f[k]) and mine["support"] == s[k], lab
        for avg in ("micro", "macro", "weighted"):
            ref = precision_recall_fscore_support(
                y_true, y_pred, labels=labels, average=avg, zero_division=sk_zd
            )
            block = getattr(r, avg)
            for key, value in zip(("precision", "recall", "f1"), ref[:3], strict=True):
                assert _same(block[key], value), (avg, key, block[key], value)
        if set(labels) & set(y_true):  # scikit-learn raises otherwise (heritage defect 13)
            want = confusion_matrix(y_true, y_pred, labels=labels).tolist()
            assert r.confusion_matrix == want
        else:
            assert r.confusion_matrix == [[0] * len(labels) for _ in labels]


label_sets = st.frozensets(st.sampled_from("MALR"), max_size=3)


@settings(max_examples=120)
@given(
    rows=st.lists(st.tuples(label_sets, label_sets), min_size=1, max_size=12),
    zd=st.sampled_from([0, 1]),
)
def test_multilabel_equals_sklearn(rows, zd):
    gold = {i: set(g) for i, (g, _) in enumerate(rows)}
    pred = {i: set(p) for i, (_, p) in enumerate(rows)}
    classes = sorted(set().union(*gold.values(), *pred.values()))
    assume(len(classes) >= 2)  # scikit-learn treats one column as binary, not multi-label
    r = evaluate_types_multilabel(gold, pred, zero_division=zd)
    mlb = MultiLabelBinarizer(classes=classes)
    yt = mlb.fit_transform([gold[i] for i in range(len(rows))])
    yp = mlb.transform([pred[i] for i in range(len(rows))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for avg in ("micro", "macro", "weighted", "samples"):
            ref = precision_recall_fscore_support(yt, yp, average=avg, zero_division=zd)
            block = getattr(r, avg)
            for key, value in zip(("precision", "recall", "f1"), ref[:3], strict=True):
                assert _same(block[key], value), (avg, key)
        assert close(r.subset_accuracy, accuracy_score(yt, yp))


@st.composite
def token_docs(draw):
    n = draw(st.integers(1, 12))
    words = draw(
        st.lists(
            st.sampled_from(["Het", "museum", "(Rijks)", "1885.", "NL-AmRM"]),
            min_size=n,
            max_size=n,
        )
    )
    text = " ".join(words)
    starts, pos = [], 0
    for w in words:
        starts.append(pos)
        pos += len(w) + 1

    def side():
        spans, k = [], 0
        while k < n:
            if draw(st.booleans()):
                length = draw(st.integers(1, 3))
                end = min(n, k + length)
                a = starts[k] + (1 if words[k].startswith("(") else 0)
                last = words[end - 1]
                b = starts[end - 1] + len(last) - (1 if last.endswith((")", ".")) else 0)
                spans.append((a, b, draw(st.sampled_from(["MUS", "LOC", "TMP"]))))
                k = end
            else:
                k += 1
        return spans

    return text, side(), side()


@settings(max_examples=100)
@given(doc=token_docs())
def test_token_level_equals_sklearn(doc):
    text, gold, pred = doc
    r = token_level_metrics({"d": gold}, {"d": pred}, {"d": text}, return_tags=True)
    g, p = r.tags["d"]["gold"], r.tags["d"]["pred"]
    labels = sorted((set(g) | set(p)) - {"O"})
    assert close(r.token_accuracy, accuracy_score(g, p))
    assume(labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr, _, f, s = precision_recall_fscore_support(g, p, labels=labels, zero_division=0)
        for k, lab in enumerate(labels):
            assert close(r.per_label[lab]["f1"], f[k]) and r.per_label[lab]["support"] == s[k]
            assert close(r.per_label[lab]["precision"], pr[k])
        for avg in ("micro", "macro"):
            ref = precision_recall_fscore_support(g, p, labels=labels, average=avg, zero_division=0)
            assert close(getattr(r, avg)["f1"], ref[2]), avg
        if sum(s):
            ref = precision_recall_fscore_support(
                g, p, labels=labels, average="weighted", zero_division=0
            )
            assert close(r.weighted["f1"], ref[2])
