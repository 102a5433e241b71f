"""Property tests: agreement coefficients equal scikit-learn, statsmodels and krippendorff."""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from ragmeter.extraction import iaa
from tests.extraction.vectors import close

two_raters = st.integers(2, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 4), min_size=n, max_size=n),
        st.lists(st.integers(1, 4), min_size=n, max_size=n),
    )
)


@settings(max_examples=150)
@given(data=two_raters, weights=st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_equals_sklearn(data, weights):
    r1, r2 = data
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns when κ is undefined
        ref = cohen_kappa_score(r1, r2, weights=weights)
    mine = iaa.cohen_kappa(r1, r2, weights=weights)
    if mine is None:
        assert math.isnan(ref)
    else:
        assert close(mine, ref)


matrix = st.tuples(st.integers(2, 15), st.integers(2, 5)).flatmap(
    lambda shape: st.lists(
        st.lists(st.integers(0, 3), min_size=shape[1], max_size=shape[1]),
        min_size=shape[0],
        max_size=shape[0],
    )
)


@settings(max_examples=150)
@given(rows=matrix)
def test_fleiss_and_randolph_equal_statsmodels(rows):
    table, _ = aggregate_raters(np.array(rows))
    assume(table.shape[1] >= 2)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fleiss_kappa(table, method="fleiss")
        ref_r = fleiss_kappa(table, method="randolph")
    mine = iaa.fleiss_kappa(rows)
    if mine is None:
        assert math.isnan(ref) or math.isinf(ref)
    else:
        assert close(mine, ref)
    assert close(iaa.randolph_kappa(rows), ref_r)


reliability = st.tuples(st.integers(2, 4), st.integers(2, 12)).flatmap(
    lambda shape: st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=shape[1], max_size=shape[1]),
        min_size=shape[0],
        max_size=shape[0],
    )
)


@settings(max_examples=200)
@given(data=reliability, level=st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_krippendorff_alpha_equals_krippendorff(data, level):
    arr = np.array([[np.nan if v is None else float(v) for v in row] for row in data])
    # α needs pairable values with at least two distinct values
    pairable = [sorted(v for v in col if not np.isnan(v)) for col in arr.T]
    values = {v for col in pairable if len(col) >= 2 for v in col}
    assume(len(values) >= 2)
    ref = krippendorff.alpha(reliability_data=arr, level_of_measurement=level)
    mine = iaa.krippendorff_alpha(data, level=level)
    assert mine is not None and close(mine, ref, rel=1e-9, abs_=1e-9), (mine, ref)


@settings(max_examples=100)
@given(data=two_raters)
def test_gwet_ac1_two_raters_closed_form(data):
    r1, r2 = data
    cats = sorted(set(r1) | set(r2))
    assume(len(cats) >= 2)
    n = len(r1)
    p_o = sum(a == b for a, b in zip(r1, r2, strict=True)) / n
    pi = [(r1.count(c) / n + r2.count(c) / n) / 2 for c in cats]
    p_e = sum(x * (1 - x) for x in pi) / (len(cats) - 1)
    assert close(iaa.gwet_ac1(list(zip(r1, r2, strict=True))), (p_o - p_e) / (1 - p_e))
