"""Property tests: SemEval counts on random spans equal nervaluate 1.2.1 where it is defined.

nervaluate matches greedily in prediction order, so it is the reference only when no span
competes for two others (docs/extraction.md#ner): the generator places gold and predicted spans in
separate slots, at most one of each per slot, so every span overlaps at most one other. Ends
are converted to nervaluate's inclusive convention (end − 1).
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nervaluate import Evaluator

from ragmeter.extraction.ner import evaluate_ner
from tests.extraction.vectors import close

LABELS = ("LOC", "MUS", "TMP")
SLOT = 12  # a slot holds at most one gold and one predicted span; slots never overlap


@st.composite
def slot(draw):
    """(gold or None, pred or None) inside one slot of width SLOT, offsets relative."""
    gold = None
    if draw(st.booleans()):
        a = draw(st.integers(0, 6))
        gold = (a, draw(st.integers(a + 1, SLOT)), draw(st.sampled_from(LABELS)))
    pred = None
    kind = draw(st.sampled_from(["none", "same", "same_label_other", "shifted", "random"]))
    if kind != "none":
        if gold is not None and kind in ("same", "same_label_other"):
            label = gold[2] if kind == "same" else draw(st.sampled_from(LABELS))
            pred = (gold[0], gold[1], label)
        else:
            a = draw(st.integers(0, SLOT - 1))
            pred = (a, draw(st.integers(a + 1, SLOT)), draw(st.sampled_from(LABELS)))
    return gold, pred


@st.composite
def documents(draw):
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        gold, pred = [], []
        for k in range(draw(st.integers(0, 6))):
            g, p = draw(slot())
            base = k * (SLOT + 1)
            if g:
                gold.append((base + g[0], base + g[1], g[2]))
            if p:
                pred.append((base + p[0], base + p[1], p[2]))
        docs.append((gold, draw(st.permutations(pred))))
    return docs


def _nervaluate(docs, pct):
    true = [[{"label": lab, "start": s, "end": e - 1} for s, e, lab in g] for g, _ in docs]
    pred = [[{"label": lab, "start": s, "end": e - 1} for s, e, lab in p] for _, p in docs]
    return Evaluator(
        true, pred, tags=list(LABELS), loader="dict", min_overlap_percentage=pct
    ).evaluate()


def _threshold_agrees(docs, pct) -> bool:
    """nervaluate compares (overlap/len)·100 >= pct in floating point; ragmeter exactly."""
    for g, p in docs:
        for gs, ge, _ in g:
            for ps, pe, _ in p:
                inter = min(ge, pe) - max(gs, ps)
                if inter <= 0:
                    continue
                exact = Fraction(inter, ge - gs) >= Fraction(pct) / 100
                floating = (inter / (ge - gs)) * 100.0 >= pct
                if exact != floating:
                    return False
    return True


def _check(block, ref, where):
    mapping = {
        "COR": "correct",
        "INC": "incorrect",
        "PAR": "partial",
        "MIS": "missed",
        "SPU": "spurious",
        "POS": "possible",
        "ACT": "actual",
    }
    for key, attr in mapping.items():
        assert block[key] == getattr(ref, attr), (where, key, block[key], getattr(ref, attr))
    for key in ("precision", "recall", "f1"):
        assert close(block[key], float(getattr(ref, key))), (where, key)


@settings(max_examples=120)
@given(docs=documents(), pct=st.sampled_from([1.0, 30.0, 50.0, 75.0, 100.0]))
def test_counts_equal_nervaluate_without_competing_overlaps(docs, pct):
    assume(_threshold_agrees(docs, pct))
    gold = {f"d{i}": g for i, (g, _) in enumerate(docs)}
    pred = {f"d{i}": p for i, (_, p) in enumerate(docs)}
    # nervaluate's default 1% threshold is "any overlap" for spans shorter than 100
    r = evaluate_ner(gold, pred, min_overlap=0.0 if pct == 1.0 else pct / 100)
    ref = _nervaluate(docs, pct)
    for schema, ner_name in (
        ("strict", "strict"),
        ("exact", "exact"),
        ("partial", "partial"),
        ("type", "ent_type"),
    ):
        _check(r.overall[schema], ref["overall"][ner_name], schema)
        for label, blocks in ref["entities"].items():
            _check(r.per_label[label][schema], blocks[ner_name], f"{label}/{schema}")
    assert set(ref["entities"]) == set(r.per_label)


@settings(max_examples=60)
@given(docs=documents(), seed=st.randoms(use_true_random=False))
def test_results_do_not_depend_on_input_order(docs, seed):
    gold = {f"d{i}": list(g) for i, (g, _) in enumerate(docs)}
    pred = {f"d{i}": list(p) for i, (_, p) in enumerate(docs)}
    r1 = evaluate_ner(gold, pred)
    for spans in (*gold.values(), *pred.values()):
        seed.shuffle(spans)
    keys = list(gold)
    seed.shuffle(keys)
    r2 = evaluate_ner({k: gold[k] for k in keys}, {k: pred[k] for k in keys})
    assert r1.metrics == r2.metrics
