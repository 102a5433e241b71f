"""Conformance: TV-IAA-01 … 06 (iaa.json)."""

from __future__ import annotations

import warnings

from ragmeter.extraction import iaa as ag
from tests.extraction.vectors import close, vectors

V = vectors("iaa.json")


def test_tv_iaa_01_two_raters_nominal():
    v = V["TV-IAA-01"]
    r1, r2 = v["input"]["rater1"], v["input"]["rater2"]
    exp = v["expected"]
    assert close(ag.observed_agreement(r1, r2), exp["observed_agreement"])
    assert close(ag.cohen_kappa(r1, r2), exp["sklearn_cohen_kappa"])
    assert close(ag.cohen_kappa(r1, r2), exp["statsmodels_cohens_kappa"])
    assert close(ag.scotts_pi(r1, r2), exp["nltk_pi(Scott)"])
    assert close(
        ag.fleiss_kappa(list(zip(r1, r2, strict=True))),
        exp["fleiss_kappa_with_2_raters(=Scott's pi)"],
    )
    assert close(ag.krippendorff_alpha([r1, r2]), exp["krippendorff_alpha_nominal"])
    rep = ag.agreement(list(zip(r1, r2, strict=True)))
    assert close(rep.observed_agreement, exp["observed_agreement"])
    assert close(rep.coefficients["cohen_kappa"], exp["sklearn_cohen_kappa"])
    assert close(rep.coefficients["scotts_pi"], exp["nltk_pi(Scott)"])
    assert close(rep.coefficients["krippendorff_alpha"], exp["nltk_alpha"])


def test_tv_iaa_02_ordinal():
    v = V["TV-IAA-02"]
    r1, r2 = v["input"]["rater1"], v["input"]["rater2"]
    exp = v["expected"]
    assert close(ag.cohen_kappa(r1, r2), exp["unweighted"])
    assert close(ag.cohen_kappa(r1, r2, weights="linear"), exp["linear"])
    assert close(ag.cohen_kappa(r1, r2, weights="quadratic"), exp["quadratic"])
    assert close(ag.krippendorff_alpha([r1, r2], level="ordinal"), exp["krippendorff_ordinal"])
    assert close(ag.krippendorff_alpha([r1, r2], level="interval"), exp["krippendorff_interval"])
    rep = ag.agreement(list(zip(r1, r2, strict=True)), level="ordinal")
    assert close(rep.coefficients["cohen_kappa_quadratic"], exp["quadratic"])
    assert close(rep.coefficients["krippendorff_alpha"], exp["krippendorff_ordinal"])


def test_tv_iaa_03_three_raters():
    v = V["TV-IAA-03"]
    rows = v["input"]["ratings_items_x_raters"]
    exp = v["expected"]
    table = ag._count_table(rows, [0, 1, 2]).astype(int).tolist()
    assert table == exp["count_table_items_x_categories"]
    assert close(ag.fleiss_kappa(rows), exp["statsmodels_fleiss_kappa"])
    assert close(ag.randolph_kappa(rows), exp["statsmodels_randolph_kappa"])
    raters = [list(col) for col in zip(*rows, strict=True)]
    assert close(ag.krippendorff_alpha(raters), exp["krippendorff_alpha_nominal"])
    assert close(ag.krippendorff_alpha(raters), exp["nltk_alpha"])


def test_tv_iaa_04_missing_ratings():
    v = V["TV-IAA-04"]
    data = v["input"]["reliability_data_raters_x_items"]
    assert close(ag.krippendorff_alpha(data), v["expected"]["krippendorff_alpha_nominal"])
    rep = ag.agreement([list(col) for col in zip(*data, strict=True)])
    assert close(
        rep.coefficients["krippendorff_alpha"], v["expected"]["krippendorff_alpha_nominal"]
    )
    assert "fleiss_kappa" not in rep.coefficients and "fleiss_kappa" in rep.undefined


def test_tv_iaa_05_span_f1_versus_token_kappa():
    v = V["TV-IAA-05"]
    exp = v["expected"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = ag.span_agreement_tags(
            {"a1": v["input"]["annotator1"], "a2": v["input"]["annotator2"]}
        )
    assert any("token κ is a diagnostic" in str(w.message) for w in caught)
    assert close(rep.mean_f1["strict"], exp["span_f1_strict_a1_as_reference"])
    assert close(rep.pairwise["strict"][1][0], exp["span_f1_strict_a2_as_reference"])
    assert close(rep.mean_f1["type"], exp["span_f1_overlap_type"])
    assert close(rep.token_kappa, exp["token_kappa_including_O"])
    # the inflation docs/extraction.md#inter-annotator-agreement warns about
    assert rep.token_kappa > rep.mean_f1["strict"]


def test_tv_iaa_06_kappa_paradox():
    v = V["TV-IAA-06"]
    r1, r2 = v["input"]["rater1"], v["input"]["rater2"]
    exp = v["expected"]
    rep = ag.agreement(list(zip(r1, r2, strict=True)))
    assert close(rep.observed_agreement, exp["observed_agreement"])
    assert close(rep.coefficients["cohen_kappa"], exp["cohen_kappa"])
    assert close(rep.coefficients["gwet_ac1"], exp["gwet_ac1"], abs_=1e-4)
    # the closed form of the vector's note
    assert close(rep.coefficients["gwet_ac1"], (0.9 - 0.095) / (1 - 0.095))
    assert any("kappa paradox" in w for w in rep.warnings)
