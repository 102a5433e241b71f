"""The report's pure helpers against their reference implementations (scipy, statsmodels,
scikit-learn, numpy)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.report import analysis


@settings(max_examples=30)
@given(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=1, max_size=20))
def test_holm_matches_statsmodels(pvalues):
    from statsmodels.stats.multitest import multipletests

    got = analysis.holm(pvalues)
    present = [p for p in pvalues if p is not None]
    assert [g is None for g in got] == [p is None for p in pvalues]
    if present:
        expected = iter(multipletests(present, method="holm")[1])
        for g, p in zip(got, pvalues, strict=True):
            if p is not None:
                assert g == pytest.approx(next(expected), abs=1e-12)


@settings(max_examples=60)
@given(
    st.lists(st.floats(-1.0, 1.0, allow_subnormal=False), min_size=2, max_size=60),
    st.floats(-0.5, 0.5),
)
def test_paired_t_matches_scipy(a, shift):
    from scipy import stats

    a = np.array(a)
    rng = np.random.default_rng(len(a))
    b = np.clip(a + shift + rng.normal(0, 0.2, len(a)), -2, 2)
    d = b - a
    got = analysis.paired_t(len(d), float(d.sum()), float((d * d).sum()))
    if got["statistic"] is None:
        # degenerate: no variance (scipy gives nan or inf there)
        assert got["reason"] == "the differences have no variance"
        assert np.allclose(d, d[0], atol=1e-6)
        return
    ref = stats.ttest_rel(b, a)
    assert got["statistic"] == pytest.approx(ref.statistic, rel=1e-6, abs=1e-9)
    assert got["p_value"] == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-12)
    ci = ref.confidence_interval(0.95)
    assert got["ci_low"] == pytest.approx(ci.low, rel=1e-6, abs=1e-9)
    assert got["ci_high"] == pytest.approx(ci.high, rel=1e-6, abs=1e-9)
    assert got["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-6, abs=1e-9)
    assert got["mean_diff"] == pytest.approx(d.mean(), abs=1e-12)


def test_paired_t_degenerate_cases():
    one = analysis.paired_t(1, 0.3, 0.09)
    assert one["statistic"] is None and one["reason"] == "fewer than 2 paired samples"
    assert one["mean_diff"] == pytest.approx(0.3)
    same = analysis.paired_t(5, 0.5, 0.05)  # every difference is 0.1
    assert same["p_value"] is None and same["reason"] == "the differences have no variance"
    assert analysis.paired_t(0, 0.0, 0.0)["mean_diff"] is None


@settings(max_examples=40)
@given(st.lists(st.tuples(st.sampled_from("ABCM"), st.sampled_from("ABCMX")), min_size=1))
def test_confusion_matrix_matches_sklearn(pairs):
    from sklearn.metrics import confusion_matrix

    gold = [g for g, _ in pairs]
    pred = [p if p != "X" else analysis.INVALID_LABEL for _, p in pairs]
    counts: dict[tuple[str, str], int] = {}
    for g, p in zip(gold, pred, strict=True):
        counts[(g, p)] = counts.get((g, p), 0) + 1
    labels, matrix = analysis.confusion_from_pairs(
        [(g, p, n) for (g, p), n in counts.items()], ["M", "A"]
    )
    assert labels[:2] == ["M", "A"]
    assert analysis.INVALID_LABEL not in labels[:-1]  # the sentinel only ever comes last
    expected = confusion_matrix(gold, pred, labels=labels)
    assert matrix == expected.tolist()
    top = analysis.top_confusions(labels, matrix, k=100)
    off = [
        (labels[i], labels[j], int(expected[i, j]))
        for i in range(len(labels))
        for j in range(len(labels))
        if i != j and expected[i, j]
    ]
    assert [(t["gold"], t["pred"], t["count"]) for t in top] == sorted(
        off, key=lambda x: (-x[2], x[0], x[1])
    )
    for t in top:
        row = labels.index(t["gold"])
        assert t["share"] == pytest.approx(t["count"] / expected[row].sum())


def _spans_to_counts(doc):
    """SemEval counts of one document whose gold and predicted spans are paired by hand."""
    out = {
        s: dict.fromkeys(("COR", "INC", "PAR", "MIS", "SPU"), 0)
        for s in ("strict", "exact", "type")
    }
    for kind in doc:
        if kind == "missed":
            for s in out:
                out[s]["MIS"] += 1
        elif kind == "spurious":
            for s in out:
                out[s]["SPU"] += 1
        else:
            bounds_ok = kind in ("correct", "wrong_type")
            type_ok = kind in ("correct", "wrong_boundary")
            out["strict"]["COR" if bounds_ok and type_ok else "INC"] += 1
            out["exact"]["COR" if bounds_ok else "INC"] += 1
            out["type"]["COR" if type_ok else "INC"] += 1
    return out


KINDS = ["correct", "missed", "spurious", "wrong_type", "wrong_boundary", "wrong_both"]


@settings(max_examples=60)
@given(st.lists(st.lists(st.sampled_from(KINDS), max_size=8), min_size=1, max_size=6))
def test_ner_error_kinds_recovers_the_outcomes(docs):
    totals = {
        s: dict.fromkeys(("COR", "INC", "PAR", "MIS", "SPU"), 0)
        for s in ("strict", "exact", "type")
    }
    for doc in docs:
        for s, counts in _spans_to_counts(doc).items():
            for k, v in counts.items():
                totals[s][k] += v
    got = analysis.ner_error_kinds(totals)
    flat = [k for doc in docs for k in doc]
    assert got == {k: flat.count(k) for k in KINDS}
    # with strict and exact only, boundary errors are not split by type
    coarse = analysis.ner_error_kinds({"strict": totals["strict"], "exact": totals["exact"]})
    assert coarse["wrong_type"] == flat.count("wrong_type")
    assert coarse["wrong_boundary_any"] == flat.count("wrong_boundary") + flat.count("wrong_both")
    assert analysis.ner_error_kinds({"exact": totals["exact"]}) is None


def test_best_flags_and_iprec_and_bins():
    assert analysis.best_flags([0.1, None, 0.3, 0.3], "higher") == [False, False, True, True]
    assert analysis.best_flags([0.1, 0.3], "none") == [False, False]
    assert analysis.best_flags([1, 2], "lower") == [True, False]
    assert analysis.iprec_point("iprec_at_recall.0.5") == 0.5
    assert analysis.iprec_point("IPrec@1.5") is None
    assert analysis.iprec_point("IPrec@r") is None
    edges = analysis.bin_edges(0.0, 1.0, 20)
    assert len(edges) == 21 and edges[0] == 0.0 and edges[-1] == 1.0
    assert all(math.isclose(b - a, 0.05) for a, b in itertools.pairwise(edges))
    with pytest.raises(ValueError):
        analysis.bin_edges(0, 1, 0)


def test_iprec_point_reads_the_retrieval_grammar():
    """Every single-point IPrec name the retrieval engine resolves, and nothing else."""
    from ragmeter import registry
    from ragmeter.retrieval.names import NICKNAMES, parse_measures

    official = [m.canonical for m in parse_measures(list(NICKNAMES["official"]))]
    points = [n for n in official if analysis.iprec_point(n) is not None]
    assert points == [f"IPrec@{r / 10:.1f}" for r in range(11)]
    assert [analysis.iprec_point(n) for n in points] == [r / 10 for r in range(11)]
    assert analysis.iprec_point("iprec_at_recall_0.20") == 0.2
    # a name that is not one IPrec point, in any task, is None (the family names 11 values)
    assert analysis.iprec_point("iprec_at_recall") is None
    others = [m.name for t in registry.all_tasks() if t.name != "retrieval" for m in t.metrics]
    assert others and all(analysis.iprec_point(n) is None for n in others)
