"""Inter-annotator agreement (extraction.md §8).

Categorical labels: observed agreement p_o next to every chance-corrected coefficient — Cohen's
κ (weighted for ordinal labels), Scott's π, Fleiss' κ, Randolph's free-marginal κ,
Krippendorff's α (nominal, ordinal, interval, ratio; missing ratings allowed) and Gwet's AC1.
Span annotation (NER) has no defined set of negatives, so its agreement is pairwise span F1
(Hripcsak & Rothschild, 2005) with the matching of §3.3; token κ is a diagnostic only.

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

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ragmeter.errors import InputError
from ragmeter.extraction.report import ExtractionReport
from ragmeter.warnings import warn

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

Level = Literal["nominal", "ordinal", "interval", "ratio"]


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _categories(values: Sequence[Any], categories: Sequence[Any] | None) -> list[Any]:
    present = {v for v in values if not _is_missing(v)}
    if categories is not None:
        cats = list(categories)
        unknown = present - set(cats)
        if unknown:
            raise InputError(
                f"rating {sorted(map(str, unknown))[0]!r} is not one of the categories "
                f"{cats!r} (expected ratings from the given categories)"
            )
        return cats
    try:
        return sorted(present)
    except TypeError:
        raise InputError("ratings mix types that cannot be ordered (expected one type)") from None


def _two(r1: Sequence[Any], r2: Sequence[Any]) -> None:
    if len(r1) != len(r2):
        raise InputError(
            f"{len(r1)} ratings against {len(r2)} (expected both raters to rate the same items)"
        )
    if not len(r1):
        raise InputError("no ratings (expected at least one item)")
    if any(_is_missing(v) for v in (*r1, *r2)):
        raise InputError(
            "a missing rating (Cohen's κ, Scott's π and Gwet's AC1 need complete data; use "
            "Krippendorff's α)"
        )


def observed_agreement(r1: Sequence[Any], r2: Sequence[Any]) -> float:
    """p_o: the share of items both raters put in the same category."""
    _two(r1, r2)
    return sum(1 for a, b in zip(r1, r2, strict=True) if a == b) / len(r1)


def cohen_kappa(
    r1: Sequence[Any],
    r2: Sequence[Any],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[Any] | None = None,
) -> float | None:
    """Cohen's κ = 1 − Σ w·O / Σ w·E (scikit-learn's ``cohen_kappa_score``).

    O is the confusion matrix of the two raters and E the outer product of their marginals
    scaled to the same total; w is 1 − I (unweighted, equivalently κ = (p_o − p_e)/(1 − p_e)),
    |i − j| (linear) or (i − j)² (quadratic) over the category order (sorted values, or
    ``categories``). ``None`` when chance agreement is perfect.
    """
    _two(r1, r2)
    cats = _categories([*r1, *r2], categories)
    idx = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    o = np.zeros((k, k), dtype=np.float64)
    for a, b in zip(r1, r2, strict=True):
        o[idx[a], idx[b]] += 1
    e = np.outer(o.sum(axis=1), o.sum(axis=0)) / o.sum()
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights in ("linear", "quadratic"):
        d = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
        w = d if weights == "linear" else d**2
    else:
        raise ValueError(f"weights={weights!r} (expected None, 'linear' or 'quadratic')")
    den = float((w * e).sum())
    if den == 0:
        return None
    return 1.0 - float((w * o).sum()) / den


def _count_table(ratings: Sequence[Sequence[Any]], cats: list[Any]) -> np.ndarray:
    idx = {c: i for i, c in enumerate(cats)}
    table = np.zeros((len(ratings), len(cats)), dtype=np.float64)
    for i, row in enumerate(ratings):
        for v in row:
            if not _is_missing(v):
                table[i, idx[v]] += 1
    return table


def _units(ratings: Any) -> list[list[Any]]:
    """items × raters rows from a matrix or ``{rater: {item: label}}``."""
    if isinstance(ratings, Mapping):
        raters = list(ratings)
        items = sorted({i for r in raters for i in ratings[r]}, key=str)
        return [[ratings[r].get(i) for r in raters] for i in items]
    rows = [list(r) for r in ratings]
    if not rows:
        raise InputError("no items to rate (expected items × raters ratings)")
    n = len(rows[0])
    if any(len(r) != n for r in rows):
        raise InputError(
            "rows have different numbers of raters (expected an items × raters matrix; use None "
            "for a missing rating)"
        )
    return rows


def fleiss_kappa(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Fleiss' κ = (P̄ − p_e)/(1 − p_e) for an items × raters matrix with every item rated by
    the same number of raters: P_i = Σ_j n_ij(n_ij − 1)/(n(n − 1)), p_e = Σ_j p_j² with p_j the
    pooled category proportions (statsmodels ``fleiss_kappa(method="fleiss")``). With two
    raters it equals Scott's π."""
    rows = _units(ratings)
    if any(_is_missing(v) for r in rows for v in r):
        raise InputError("a missing rating (Fleiss' κ needs complete data; use Krippendorff's α)")
    n = len(rows[0])
    if n < 2:
        raise InputError("one rater (expected at least 2 raters per item)")
    cats = _categories([v for r in rows for v in r], categories)
    table = _count_table(rows, cats)
    p_i = ((table * (table - 1)).sum(axis=1)) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / table.sum()
    p_e = float((p_j**2).sum())
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1 - p_e)


def randolph_kappa(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Randolph's free-marginal κ: Fleiss' P̄ against p_e = 1/q, q the number of categories
    (statsmodels ``fleiss_kappa(method="randolph")``)."""
    rows = _units(ratings)
    n = len(rows[0])
    cats = _categories([v for r in rows for v in r], categories)
    if len(cats) < 2:
        return None
    table = _count_table(rows, cats)
    p_bar = float((((table * (table - 1)).sum(axis=1)) / (n * (n - 1))).mean())
    p_e = 1.0 / len(cats)
    return (p_bar - p_e) / (1 - p_e)


def scotts_pi(r1: Sequence[Any], r2: Sequence[Any]) -> float | None:
    """Scott's π: (p_o − p_e)/(1 − p_e) with p_e from the pooled marginals of both raters."""
    _two(r1, r2)
    return fleiss_kappa([[a, b] for a, b in zip(r1, r2, strict=True)])


def gwet_ac1(
    ratings: Sequence[Sequence[Any]], *, categories: Sequence[Any] | None = None
) -> float | None:
    """Gwet's AC1 for items × raters data (missing ratings allowed).

    p_a = mean over items with at least two ratings of Σ_k r_ik(r_ik − 1)/(r_i(r_i − 1));
    π_k = mean over those items of r_ik/r_i; p_e = Σ_k π_k(1 − π_k)/(q − 1), q the number of
    categories. With two raters and no missing ratings, π_k is the mean of the two raters'
    proportions and p_a = p_o (extraction.md §8.1).
    """
    rows = _units(ratings)
    cats = _categories([v for r in rows for v in r], categories)
    q = len(cats)
    if q < 2:
        return None
    table = _count_table(rows, cats)
    r_i = table.sum(axis=1)
    use = r_i >= 2
    if not use.any():
        return None
    t, r = table[use], r_i[use]
    p_a = float(((t * (t - 1)).sum(axis=1) / (r * (r - 1))).mean())
    pi = (t / r[:, None]).mean(axis=0)
    p_e = float((pi * (1 - pi)).sum()) / (q - 1)
    if p_e == 1.0:
        return None
    return (p_a - p_e) / (1 - p_e)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]],
    *,
    level: Level = "nominal",
    categories: Sequence[Any] | None = None,
) -> float | None:
    """Krippendorff's α = 1 − (n − 1)·Σ o_ck δ_ck / Σ n_c n_k δ_ck from the coincidence matrix.

    ``reliability_data`` is raters × items (the ``krippendorff`` package's layout), ``None``
    marking a missing rating; items with fewer than two ratings are ignored. o_ck counts the
    ordered pairs of values (c, k) from different raters within an item, each weighted
    1/(m_u − 1); n_c are its marginals. δ: nominal 0/1; ordinal
    (Σ_{g=c}^{k} n_g − (n_c + n_k)/2)² over the ordered categories; interval (c − k)²; ratio
    ((c − k)/(c + k))².
    """
    data = [list(r) for r in reliability_data]
    if not data:
        raise InputError("no raters (expected raters × items reliability data)")
    n_items = len(data[0])
    if any(len(r) != n_items for r in data):
        raise InputError(
            "raters rated different numbers of items (expected raters × items, None for missing)"
        )
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level={level!r} (expected nominal, ordinal, interval or ratio)")
    values = [v for r in data for v in r if not _is_missing(v)]
    if level in ("interval", "ratio"):
        bad = [v for v in values if isinstance(v, bool) or not isinstance(v, numbers.Real)]
        if bad:
            raise InputError(f"rating {bad[0]!r} is not a number (the {level} level needs numbers)")
    cats = _categories(values, categories)
    idx = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    o = np.zeros((k, k), dtype=np.float64)
    for j in range(n_items):
        unit = [idx[r[j]] for r in data if not _is_missing(r[j])]
        m = len(unit)
        if m < 2:
            continue
        counts = np.bincount(unit, minlength=k).astype(np.float64)
        pairs = np.outer(counts, counts) - np.diag(counts)
        o += pairs / (m - 1)
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    if n == 0:
        return None
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        delta = (cum[hi + 1] - cum[lo] - (n_c[i] + n_c[j]) / 2.0) ** 2
    else:
        v = np.array([float(c) for c in cats])
        diff = v[:, None] - v[None, :]
        if level == "interval":
            delta = diff**2
        else:
            s = v[:, None] + v[None, :]
            delta = np.zeros_like(diff)
            np.divide(diff, s, out=delta, where=s != 0)
            delta = delta**2
    d_e = float((np.outer(n_c, n_c) * delta).sum())
    if d_e == 0:
        return None
    return 1.0 - (n - 1) * float((o * delta).sum()) / d_e


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


@dataclass
class SpanAgreementReport(ExtractionReport):
    """Pairwise span F1 between annotators (symmetric matrix, mean over pairs, per label)."""

    annotators: list[str]
    schemas: tuple[str, ...]
    pairwise: dict[str, list[list[float]]]  # schema -> matrix
    mean_f1: dict[str, float | None]
    per_label: dict[str, dict[str, float | None]]  # schema -> label -> mean F1 over pairs
    pair_counts: dict[str, dict[str, dict[str, int]]]  # "a|b" -> schema -> counts
    token_kappa: float | None
    reports: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    _kind = "span agreement"
    _trailer = ("reports", "warnings")

    @property
    def metrics(self) -> dict[str, Any]:
        return {
            "annotators": self.annotators,
            "schemas": list(self.schemas),
            "pairwise_f1": self.pairwise,
            "mean_f1": self.mean_f1,
            "per_label": self.per_label,
            "pair_counts": self.pair_counts,
            "token_kappa": self.token_kappa,
        }

    def to_result(self):
        """A Result (task ``agreement``): one row per annotator pair with its F1 per schema."""
        from ragmeter.extraction.results import Column, aggregate, build_result

        pairs = sorted(self.pair_counts)
        columns = []
        aggs = {}
        for s in self.schemas:
            vals = []
            for key in pairs:
                a, b = key.split("|", 1)
                i, j = self.annotators.index(a), self.annotators.index(b)
                vals.append(self.pairwise[s][i][j])
            columns.append(Column(f"span_f1.{s}", np.array(vals, dtype=np.float64)))
            aggs[f"span_f1.{s}"] = aggregate(self.mean_f1[s], n=len(pairs))
        if self.token_kappa is not None:
            aggs["token_kappa"] = aggregate(self.token_kappa, n=len(pairs))
        return build_result("agreement", pairs, columns, aggs, warnings=self.warnings)


def _span_agreement(
    tables: Mapping[str, Any], schemas: Sequence[str], reports: dict[str, Any]
) -> tuple[list[str], dict, dict, dict, dict]:
    from ragmeter.extraction.ner import _schemas, evaluate_ner

    names = list(tables)
    if len(names) < 2:
        raise InputError("one annotator (expected at least 2 to compare)")
    schema_list = _schemas(schemas)
    k = len(names)
    matrix = {s: [[1.0] * k for _ in range(k)] for s in schema_list}
    per_label_vals: dict[str, dict[str, list[float]]] = {s: {} for s in schema_list}
    pair_counts: dict[str, dict[str, dict[str, int]]] = {}
    for i, j in itertools.combinations(range(k), 2):
        rep = evaluate_ner(
            tables[names[i]],
            tables[names[j]],
            schemas=schema_list,
            unknown_documents="as_empty_gold",
        )
        key = f"{names[i]}|{names[j]}"
        pair_counts[key] = {}
        for s in schema_list:
            o = rep.overall[s]
            # 2·credit/(|A|+|B|): symmetric, 1 when both annotators marked nothing
            denom = o["POS"] + o["ACT"]
            f1 = (2 * (o["COR"] + 0.5 * o["PAR"]) / denom) if denom else 1.0
            matrix[s][i][j] = matrix[s][j][i] = f1
            pair_counts[key][s] = {
                c: o[c] for c in ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")
            }
            for lab, block in rep.per_label.items():
                if lab.startswith("__"):
                    continue
                b = block[s]
                d = b["POS"] + b["ACT"]
                per_label_vals[s].setdefault(lab, []).append(
                    (2 * (b["COR"] + 0.5 * b["PAR"]) / d) if d else 1.0
                )
    mean_f1 = {
        s: float(np.mean([matrix[s][i][j] for i, j in itertools.combinations(range(k), 2)]))
        for s in schema_list
    }
    per_label = {
        s: {lab: sum(v) / len(v) for lab, v in sorted(d.items())} for s, d in per_label_vals.items()
    }
    return names, matrix, mean_f1, per_label, pair_counts


def span_agreement(
    annotations: Mapping[str, Any],
    *,
    schemas: Sequence[str] = ("strict", "type"),
) -> SpanAgreementReport:
    """Pairwise span F1 between annotators, each a :class:`Corpus`, a mapping
    ``doc_id -> spans`` or a :class:`SpanTable`.

    For a pair (A, B): F1 = 2·|A∩B|/(|A| + |B|) under ``strict`` (symmetric; with B as
    predictions it is the strict F1 with A as reference, and vice versa), and the overlap-
    tolerant value under ``type``, using the optimal matching of §3.3. A document one annotator
    did not annotate counts as empty for that annotator.
    """
    from ragmeter.extraction.columns import to_span_table

    tables = {str(a): to_span_table(c, side=f"annotator '{a}'") for a, c in annotations.items()}
    all_docs = sorted({d for t in tables.values() for d in t.doc_ids})
    reports: dict[str, Any] = {}
    for a, t in tables.items():
        missing = sorted(set(all_docs) - set(t.doc_ids))
        if missing:
            reports.setdefault("documents_not_annotated", {})[a] = missing
    names, matrix, mean_f1, per_label, counts = _span_agreement(tables, schemas, reports)
    return SpanAgreementReport(
        annotators=names,
        schemas=tuple(matrix),
        pairwise=matrix,
        mean_f1=mean_f1,
        per_label=per_label,
        pair_counts=counts,
        token_kappa=None,
        reports=reports,
    )


def span_agreement_tags(
    annotations: Mapping[str, Sequence[Sequence[str]]],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
    schemas: Sequence[str] = ("strict", "type"),
    token_kappa: bool = True,
) -> SpanAgreementReport:
    """:func:`span_agreement` on tag sequences (one list per sentence, same tokens for every
    annotator), plus token-level Cohen's κ on the flattened tags including ``O`` as a
    diagnostic (two annotators only; it is inflated by the many ``O`` tokens and carries a
    warning).

    >>> a1 = [["B-MUS", "I-MUS", "O", "B-LOC", "O", "B-TMP", "O"]]
    >>> a2 = [["B-MUS", "I-MUS", "O", "B-LOC", "I-LOC", "B-TMP", "O"]]
    >>> import warnings
    >>> with warnings.catch_warnings():  # token κ comes with a RagmeterWarning
    ...     warnings.simplefilter("ignore")
    ...     r = span_agreement_tags({"a1": a1, "a2": a2})
    >>> round(r.mean_f1["strict"], 4), r.mean_f1["type"], round(r.token_kappa, 4)
    (0.6667, 1.0, 0.8205)
    """
    from ragmeter.extraction.columns import SpanTable
    from ragmeter.extraction.ner import tag_spans
    from ragmeter.records.errors import TokenMismatchError

    names = [str(a) for a in annotations]
    seqs = [annotations[a] for a in annotations]
    ref = seqs[0]
    for name, s in zip(names[1:], seqs[1:], strict=True):
        if len(s) != len(ref) or any(len(x) != len(y) for x, y in zip(s, ref, strict=True)):
            raise TokenMismatchError(
                f"annotator '{name}' has a different number of sentences or tokens than "
                f"'{names[0]}' (expected the same tokens for every annotator)"
            )
    width = len(str(max(len(ref) - 1, 0)))
    doc_of = [str(i).zfill(width) for i in range(len(ref))]
    tables = {}
    for name, s in zip(names, seqs, strict=True):
        d, a, b, lab = tag_spans(s, doc_of, scheme=scheme, mode=mode, side=f"annotator '{name}'")
        tables[name] = SpanTable.from_arrays(
            d, np.array(a, np.int64), np.array(b, np.int64), lab, documents=doc_of
        )
    reports: dict[str, Any] = {}
    names, matrix, mean_f1, per_label, counts = _span_agreement(tables, schemas, reports)
    kappa = None
    warnings = []
    if token_kappa and len(names) == 2:
        flat1 = [t for sent in seqs[0] for t in sent]
        flat2 = [t for sent in seqs[1] for t in sent]
        if flat1:
            kappa = cohen_kappa(flat1, flat2)
            warnings.append(
                "token κ is a diagnostic: it counts O tokens as agreement and is inflated; "
                "use span F1 for NER agreement (extraction.md §8.2)"
            )
            warn(warnings[-1])
    return SpanAgreementReport(
        annotators=names,
        schemas=tuple(matrix),
        pairwise=matrix,
        mean_f1=mean_f1,
        per_label=per_label,
        pair_counts=counts,
        token_kappa=kappa,
        reports=reports,
        warnings=warnings,
    )
