"""Inter-annotator agreement (docs/extraction.md#inter-annotator-agreement).

Categorical labels: observed agreement p_o next to every chance-corrected coefficient — Cohen's
κ (weighted for ordinal labels), Scott's π, Fleiss' κ, Randolph's free-marginal κ,
Krippendorff's α (nominal, ordinal, interval, ratio; missing ratings allowed) and Gwet's AC1.
Span annotation (NER) has no defined set of negatives, so its agreement is pairwise span F1
(Hripcsak & Rothschild, 2005) with the matching of docs/extraction.md#ner; token κ is a diagnostic
only.

All coefficients are implemented natively; the tests compare them with scikit-learn,
statsmodels and krippendorff. A coefficient whose chance agreement is 1 (every rating the same
category) is undefined: ``None`` with a reason, never NaN.

>>> r1 = list("MMALMAGMLA")
>>> r2 = list("MAALMAMMLL")
>>> round(cohen_kappa(r1, r2), 4), round(scotts_pi(r1, r2), 4)
(0.5652, 0.562)
>>> round(krippendorff_alpha([r1, r2]), 4)
0.5839
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.coefficients import (
    Level,
    _categories,
    _count_table,
    _is_missing,
    _units,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    observed_agreement,
    randolph_kappa,
    scotts_pi,
)
from ragmeter.extraction.report import ExtractionReport
from ragmeter.extraction.span_iaa import (
    SpanAgreementReport,
    span_agreement,
    span_agreement_tags,
)

__all__ = [
    "AgreementReport",
    "SpanAgreementReport",
    "agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "observed_agreement",
    "randolph_kappa",
    "scotts_pi",
    "span_agreement",
    "span_agreement_tags",
]


@dataclass
class AgreementReport(ExtractionReport):
    """Agreement coefficients for categorical ratings; ``None`` values carry a reason in
    ``undefined``."""

    n_items: int
    n_raters: int
    level: str
    categories: list[Any]
    observed_agreement: float | None
    coefficients: dict[str, float | None]
    undefined: dict[str, str]
    item_agreement: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    item_ids: list[str] = field(default_factory=list, repr=False)
    warnings: list[str] = field(default_factory=list)

    _kind = "agreement"
    _trailer = ("undefined", "warnings")

    @property
    def metrics(self) -> dict[str, Any]:
        return {
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "level": self.level,
            "categories": self.categories,
            "observed_agreement": self.observed_agreement,
            **self.coefficients,
        }

    def to_result(self):
        """A Result (task ``agreement``): one row per item with its pairwise agreement P_i
        (status ``no_gold`` for items with fewer than two ratings); the coefficients as
        aggregates."""
        from ragmeter import status as st
        from ragmeter.extraction.results import Column, aggregate, build_result

        order = sorted(range(len(self.item_ids)), key=self.item_ids.__getitem__)
        ids = [self.item_ids[i] for i in order]
        vals = self.item_agreement[order]
        statuses = np.where(np.isfinite(vals), st.OK, st.NO_GOLD).astype(object)
        aggs = {"observed_agreement": aggregate(self.observed_agreement, n=self.n_items)}
        for name, value in self.coefficients.items():
            aggs[name] = aggregate(value, n=self.n_items, reason=self.undefined.get(name))
        return build_result(
            "agreement",
            ids,
            [Column("observed_agreement", np.nan_to_num(vals), statuses)],
            aggs,
            metadata={
                "level": self.level,
                "categories": [str(c) for c in self.categories],
                "undefined": self.undefined,
            },
            warnings=self.warnings,
        )


def agreement(
    ratings: Sequence[Sequence[Any]] | Mapping[str, Mapping[str, Any]],
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> AgreementReport:
    """Every applicable agreement coefficient for categorical ratings.

    ``ratings`` is an items × raters matrix (``None`` = missing) or ``{rater: {item: label}}``.
    Reported: observed agreement (mean pairwise agreement over items with ≥ 2 ratings, p_o for
    two raters), Krippendorff's α at ``level``, Gwet's AC1 and Randolph's κ always; with no
    missing ratings Fleiss' κ, and with exactly two raters Cohen's κ and Scott's π (plus
    linear and quadratic weighted κ for ordinal and interval data).

    >>> r = agreement([[0, 0, 0], [0, 0, 1], [1, 1, 1], [2, 2, 1], [0, 1, 2], [1, 1, 1],
    ...                [2, 2, 2], [0, 0, 0]])
    >>> round(r.coefficients["fleiss_kappa"], 4), round(r.coefficients["krippendorff_alpha"], 4)
    (0.5556, 0.5741)
    """
    if isinstance(ratings, Mapping):
        item_ids = sorted({str(i) for r in ratings.values() for i in r})
    else:
        item_ids = None
    rows = _units(ratings)
    if item_ids is None:
        width = len(str(len(rows) - 1))
        item_ids = [str(i).zfill(width) for i in range(len(rows))]
    n_raters = len(rows[0])
    if n_raters < 2:
        raise InputError("one rater (expected at least 2)")
    values = [v for r in rows for v in r if not _is_missing(v)]
    cats = _categories(values, categories)
    table = _count_table(rows, cats)
    r_i = table.sum(axis=1)
    use = r_i >= 2
    item_agree = np.full(len(rows), np.nan)
    item_agree[use] = (table[use] * (table[use] - 1)).sum(axis=1) / (r_i[use] * (r_i[use] - 1))
    p_o = float(item_agree[use].mean()) if use.any() else None
    complete = not any(_is_missing(v) for r in rows for v in r)
    coef: dict[str, float | None] = {}
    undefined: dict[str, str] = {}
    warnings: list[str] = []
    if n_raters == 2 and complete:
        r1 = [r[0] for r in rows]
        r2 = [r[1] for r in rows]
        coef["cohen_kappa"] = cohen_kappa(r1, r2, categories=cats)
        coef["scotts_pi"] = scotts_pi(r1, r2)
        if level in ("ordinal", "interval", "ratio"):
            coef["cohen_kappa_linear"] = cohen_kappa(r1, r2, weights="linear", categories=cats)
            coef["cohen_kappa_quadratic"] = cohen_kappa(
                r1, r2, weights="quadratic", categories=cats
            )
    elif n_raters == 2:
        undefined["cohen_kappa"] = "missing ratings (Cohen's κ needs complete data)"
    if complete:
        coef["fleiss_kappa"] = fleiss_kappa(rows, categories=cats)
        coef["randolph_kappa"] = randolph_kappa(rows, categories=cats)
    else:
        undefined["fleiss_kappa"] = (
            "missing ratings (Fleiss' κ needs every item rated by every rater)"
        )
    raters_x_items = [[r[j] for r in rows] for j in range(n_raters)]
    coef["krippendorff_alpha"] = krippendorff_alpha(raters_x_items, level=level, categories=cats)
    coef["gwet_ac1"] = gwet_ac1(rows, categories=cats)
    for name, value in coef.items():
        if value is None:
            undefined[name] = "chance agreement is perfect (every rating in one category)"
    if (
        p_o is not None
        and any(
            v is not None and v < 0.2
            for k, v in coef.items()
            if k in ("cohen_kappa", "fleiss_kappa")
        )
        and p_o >= 0.8
    ):
        warnings.append(
            "high observed agreement with low κ: skewed categories (the kappa paradox); "
            "see Gwet's AC1 and p_o"
        )
    return AgreementReport(
        n_items=len(rows),
        n_raters=n_raters,
        level=level,
        categories=cats,
        observed_agreement=p_o,
        coefficients=coef,
        undefined=undefined,
        item_agreement=item_agree,
        item_ids=item_ids,
        warnings=warnings,
    )
