"""Property tests: the optimal matching of docs/extraction.md#ner against brute force, with
competing overlaps."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.extraction.matching import candidate_pairs, match
from ragmeter.extraction.ner import evaluate_ner

LABELS = ("A", "B")
CREDIT = {
    "strict": lambda sb, sl: 2 if sb and sl else 0,
    "exact": lambda sb, sl: 2 if sb else 0,
    "partial": lambda sb, sl: 2 if sb else 1,
    "type": lambda sb, sl: 2 if sl else 0,
}


def spans(max_size: int):
    span = st.integers(0, 14).flatmap(
        lambda a: st.tuples(st.just(a), st.integers(a + 1, a + 8), st.sampled_from(LABELS))
    )
    return st.lists(span, max_size=max_size, unique=True)


def brute_force(gold, pred, schema):
    """Counts of a matching maximizing (credit, |M|, ΣIoU), by enumeration, exact arithmetic."""
    edges = {}
    for i, (gs, ge, gl) in enumerate(gold):
        for j, (ps, pe, pl) in enumerate(pred):
            inter = min(ge, pe) - max(gs, ps)
            if inter > 0:
                c = CREDIT[schema](gs == ps and ge == pe, gl == pl)
                iou = Fraction(inter, (ge - gs) + (pe - ps) - inter)
                edges[i, j] = (c, iou)
    best = None
    best_counts = None
    golds = list(range(len(gold)))
    for size in range(min(len(gold), len(pred)) + 1):
        for gsub in itertools.combinations(golds, size):
            for psub in itertools.permutations(range(len(pred)), size):
                pairs = list(zip(gsub, psub, strict=True))
                if not all(p in edges for p in pairs):
                    continue
                credit = sum(edges[p][0] for p in pairs)
                iou = sum((edges[p][1] for p in pairs), Fraction(0))
                key = (credit, len(pairs), iou)
                if best is None or key > best:
                    cor = sum(1 for p in pairs if edges[p][0] == 2)
                    par = sum(1 for p in pairs if edges[p][0] == 1)
                    best = key
                    best_counts = (cor, len(pairs) - cor - par, par)
    cor, inc, par = best_counts
    m = cor + inc + par
    return {"COR": cor, "INC": inc, "PAR": par, "MIS": len(gold) - m, "SPU": len(pred) - m}


@settings(max_examples=150)
@given(gold=spans(4), pred=spans(4))
def test_counts_equal_brute_force_optimum(gold, pred):
    r = evaluate_ner({"d": gold}, {"d": pred})
    for schema in CREDIT:
        want = brute_force(gold, pred, schema)
        got = {k: r.overall[schema][k] for k in want}
        assert got == want, (schema, gold, pred)


@settings(max_examples=80)
@given(gold=spans(5), pred=spans(5), seed=st.randoms(use_true_random=False))
def test_permuting_predictions_changes_nothing(gold, pred, seed):
    r1 = evaluate_ner({"d": gold}, {"d": pred})
    shuffled = list(pred)
    seed.shuffle(shuffled)
    r2 = evaluate_ner({"d": gold}, {"d": shuffled})
    assert r1.metrics == r2.metrics


@settings(max_examples=80)
@given(gold=spans(6), pred=spans(6))
def test_candidate_pairs_are_exactly_the_overlapping_pairs(gold, pred):
    g = sorted(gold)
    p = sorted(pred)
    z = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731 - one document
    arr = lambda xs, k: np.array([x[k] for x in xs], dtype=np.int64)  # noqa: E731
    pg, pp, inter = candidate_pairs(
        z(len(g)), arr(g, 0), arr(g, 1), z(len(p)), arr(p, 0), arr(p, 1)
    )
    got = {(int(a), int(b)): int(c) for a, b, c in zip(pg, pp, inter, strict=True)}
    want = {
        (i, j): min(ge, pe) - max(gs, ps)
        for i, (gs, ge, _) in enumerate(g)
        for j, (ps, pe, _) in enumerate(p)
        if ps < ge and gs < pe
    }
    assert got == want
    # a maximum-cardinality matching uses every candidate pair of a star at most once
    matched = match(len(g), len(p), pg, pp, np.full(len(pg), 2), np.zeros(len(pg)))
    used_g = pg[matched].tolist()
    used_p = pp[matched].tolist()
    assert len(set(used_g)) == len(used_g) and len(set(used_p)) == len(used_p)
