"""Property tests: formulas against independent oracles, parsing and redaction on random input."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from ragmeter.judge.cache import cache_key
from ragmeter.judge.metrics import (
    average_precision,
    claims_scores,
    entity_recall,
    f1_score,
    faithfulness_scores,
    normalize_entity,
)
from ragmeter.judge.parsing import parse_reply
from ragmeter.judge.schemas import claims_spec, statements_spec, verdicts_spec
from ragmeter.judge.secrets import Redactor

FAST = settings(max_examples=150)


@FAST
@given(st.lists(st.booleans(), min_size=1, max_size=40).filter(any))
def test_context_precision_is_sklearn_average_precision_over_ranks(useful):
    # rank k gets score n - k: sklearn's AP over that ranking is Σ v_k·P@k / Σ v_k
    scores = np.arange(len(useful), 0, -1, dtype=float)
    expected = average_precision_score(np.array(useful, dtype=int), scores)
    assert average_precision(useful=useful) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@FAST
@given(st.lists(st.booleans(), max_size=30))
def test_context_precision_bounds(useful):
    if not useful:
        return
    ap = average_precision(useful=useful)
    assert 0.0 <= ap <= 1.0
    assert (ap == 0.0) == (not any(useful))
    assert (ap == 1.0) == (any(useful) and all(useful[: sum(useful)]))


@FAST
@given(st.integers(1, 200), st.integers(1, 200), st.data())
def test_claims_scores_against_harmonic_mean(ref, act, data):
    match = data.draw(st.integers(0, min(ref, act)))
    r, p, f = claims_scores(reference=ref, actual=act, matching=match)
    assert (r, p) == (match / ref, match / act)
    expected = statistics.harmonic_mean([r, p]) if match else 0.0
    assert f == pytest.approx(expected, rel=1e-12)
    assert f == f1_score(r, p)


@FAST
@given(
    st.lists(st.sampled_from(["supported", "contradicted", "not_found"]), min_size=1, max_size=60)
)
def test_faithfulness_counts(verdicts):
    faith, contra = faithfulness_scores(verdicts=verdicts)
    assert faith == verdicts.count("supported") / len(verdicts)
    assert contra == verdicts.count("contradicted") / len(verdicts)
    assert faith + contra <= 1.0 + 1e-12


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)


@FAST
@given(st.lists(names, min_size=1, max_size=10), st.lists(names, max_size=10))
def test_entity_recall_is_a_set_ratio(ref, ctx):
    ref_n = {normalize_entity(e) for e in ref} - {""}
    if not ref_n:
        return
    expected = len(ref_n & {normalize_entity(e) for e in ctx}) / len(ref_n)
    assert entity_recall(reference=ref, contexts=ctx) == expected
    # exact matching never finds more than normalised matching on the same strings
    assert entity_recall(reference=ref, contexts=ref) == 1.0


@FAST
@given(names)
def test_normalize_entity_is_idempotent(text):
    once = normalize_entity(text)
    assert normalize_entity(once) == once


@FAST
@given(st.text(max_size=300))
def test_parsing_never_raises_on_arbitrary_replies(text):
    for spec in (statements_spec(), claims_spec(), verdicts_spec("faithfulness", 2, n_contexts=3)):
        obj, errors = parse_reply(text, spec)
        assert (obj is None) == bool(errors)


@FAST
@given(st.lists(st.text(max_size=40), max_size=8))
def test_valid_statement_lists_round_trip(statements):
    statements = [s for s in statements if s.strip()]
    obj, errors = parse_reply(json.dumps({"statements": statements}), statements_spec())
    assert errors == [] and obj.statements == statements


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@FAST
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.randoms())
def test_cache_key_ignores_key_order(params, rnd):
    items = list(params.items())
    rnd.shuffle(items)
    msgs = [{"role": "user", "content": "x"}]
    a = cache_key(
        endpoint="e", model="m", messages=msgs, params=params, schema=None, prompt_version="p@1"
    )
    b = cache_key(
        endpoint="e",
        model="m",
        messages=msgs,
        params=dict(items),
        schema=None,
        prompt_version="p@1",
    )
    assert a == b


@FAST
@given(st.text(max_size=50), st.text(max_size=50))
def test_redactor_removes_the_key(before, after):
    key = "sk-test-SENTINEL-7f3a"
    r = Redactor([key])
    out = r(f"{before}{key}{after} Authorization: Bearer {key}")
    assert key not in out
