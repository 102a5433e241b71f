"""The result schema shared by every two-sample test (docs/stats.md).

A :class:`TestResult` is JSON-serialisable and never holds NaN or infinity: a value that is not
finite is ``None`` and ``reason`` says why. ``significant`` is always computed from the reported
p-value (the adjusted one when a correction applied).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from ragmeter.io.jsonutil import dumps

__all__ = [
    "ALPHA_TOLERANCE",
    "ConfidenceInterval",
    "TestResult",
    "finite_or_none",
    "is_significant",
    "versions",
]

ALPHA_TOLERANCE = 1e-9
"""Relative slack of the decision rule p <= alpha (docs/stats.md): for the same BH value,
statsmodels returns 0.049999999999999996 and scipy 0.05."""


def is_significant(p_value: float | None, alpha: float) -> bool:
    """The decision rule of docs/stats.md: reject iff p <= alpha·(1 + 1e-9).

    >>> is_significant(0.05, 0.05), is_significant(0.050000001, 0.05), is_significant(None, 0.05)
    (True, False, False)
    """
    return p_value is not None and p_value <= alpha * (1 + ALPHA_TOLERANCE)


def finite_or_none(x: Any) -> float | None:
    """``float(x)`` when finite, else ``None``."""
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


_versions: dict[str, str] | None = None


def versions() -> dict[str, str]:
    """Versions of ragmeter, scipy and numpy, written into every result."""
    global _versions
    if _versions is None:
        import numpy
        import scipy

        from ragmeter._version import __version__

        _versions = {
            "ragmeter": __version__,
            "scipy": scipy.__version__,
            "numpy": numpy.__version__,
        }
    return dict(_versions)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A confidence interval of a statistic (the ``ci`` field of a result, docs/stats.md).

    ``degenerate`` is true when every resampled statistic was equal or the interval is undefined
    (then ``low == high ==`` the observed statistic). A one-sided interval has ``None`` on its
    open side, never infinity.
    """

    low: float | None
    high: float | None
    level: float
    method: str
    n_resamples: int | None = None
    seed: int | None = None
    standard_error: float | None = None
    estimate: float | None = None
    degenerate: bool = False

    def contains(self, value: float) -> bool:
        """True when ``value`` lies in the interval (an open side is unbounded)."""
        return (self.low is None or self.low <= value) and (self.high is None or value <= self.high)

    def negated(self) -> ConfidenceInterval:
        """The interval of the negated statistic (B − A instead of A − B)."""
        return replace(
            self,
            low=None if self.high is None else -self.high,
            high=None if self.low is None else -self.low,
            estimate=None if self.estimate is None else -self.estimate,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "standard_error": self.standard_error,
            "estimate": self.estimate,
            "degenerate": self.degenerate,
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return dumps(self.to_dict(), indent=indent)


@dataclass(frozen=True)
class TestResult:
    """The outcome of one two-sample test, in the schema of docs/stats.md.

    ``details`` holds test-specific settings (``df`` of the t-test; ``zero_method``,
    ``correction`` and ``approximate_exact`` of the Wilcoxon test; ``two_sided`` of the
    randomization test). ``p_adjusted`` and ``correction`` are set when the test is part of a
    corrected family (docs/stats.md); ``significant`` then uses ``p_adjusted``.
    """

    __test__ = False  # not a pytest test class

    test: str
    alternative: str
    n: int
    n_zero: int
    statistic: float | None
    statistic_name: str
    p_value: float
    method: str
    n_resamples: int | None
    seed: int | None
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci: ConfidenceInterval | None
    effect_size: dict[str, float | None] | None
    alpha: float
    significant: bool
    degenerate: bool = False
    reason: str | None = None
    alignment: dict[str, Any] | None = None
    versions: dict[str, str] = field(default_factory=versions)
    details: dict[str, Any] = field(default_factory=dict)
    p_adjusted: float | None = None
    correction: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("statistic", "p_value", "mean_a", "mean_b", "mean_diff", "p_adjusted"):
            v = getattr(self, name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"TestResult.{name} is {v!r}; undefined values are None")

    @property
    def reported_p(self) -> float:
        """The p-value the decision uses: adjusted when a correction applied, else raw."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    def with_adjustment(
        self, p_adjusted: float, *, method: str, family: str, m: int, alpha: float | None = None
    ) -> TestResult:
        """A copy carrying a corrected p-value; ``significant`` follows it."""
        a = self.alpha if alpha is None else alpha
        return replace(
            self,
            p_adjusted=float(p_adjusted),
            correction={"method": method, "family": family, "m": m},
            alpha=a,
            significant=is_significant(p_adjusted, a),
        )

    def swapped(self) -> TestResult:
        """The same test read as B versus A: means exchanged, differences, signed statistics,
        effect sizes and the CI negated, one-sided alternatives mirrored; p-values unchanged."""
        stat = self.statistic
        if stat is not None and self.statistic_name in ("mean_diff", "t"):
            stat = -stat
        elif stat is not None and self.statistic_name == "R_plus":
            stat = _rank_total(self) - stat
        elif stat is not None and self.statistic_name not in ("W",):
            stat = None  # a callable statistic: its value for the swap is unknown
        alignment = dict(self.alignment) if self.alignment is not None else None
        if alignment is not None:
            alignment["missing_in_a"], alignment["missing_in_b"] = (
                alignment.get("missing_in_b", []),
                alignment.get("missing_in_a", []),
            )
        mirror = {"greater": "less", "less": "greater"}
        return replace(
            self,
            alternative=mirror.get(self.alternative, self.alternative),
            statistic=stat,
            mean_a=self.mean_b,
            mean_b=self.mean_a,
            mean_diff=None if self.mean_diff is None else -self.mean_diff,
            ci=self.ci.negated() if self.ci is not None else None,
            effect_size=(
                {
                    k: -v if isinstance(v, float | int) and not isinstance(v, bool) else v
                    for k, v in self.effect_size.items()
                }
                if self.effect_size is not None
                else None
            ),
            alignment=alignment,
        )

    def to_dict(self) -> dict[str, Any]:
        """The result schema (docs/stats.md) as a plain dict (JSON-ready, no NaN)."""
        return {
            "test": self.test,
            "alternative": self.alternative,
            "n": self.n,
            "n_zero": self.n_zero,
            "statistic": self.statistic,
            "statistic_name": self.statistic_name,
            "p_value": self.p_value,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "mean_diff": self.mean_diff,
            "ci": self.ci.to_dict() if self.ci is not None else None,
            "effect_size": dict(self.effect_size) if self.effect_size is not None else None,
            "alpha": self.alpha,
            "significant": self.significant,
            "degenerate": self.degenerate,
            "reason": self.reason,
            "alignment": self.alignment,
            "versions": dict(self.versions),
            "details": dict(self.details),
            "p_adjusted": self.p_adjusted,
            "correction": self.correction,
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return dumps(self.to_dict(), indent=indent)

    def to_ultrarag(self, alias: str, *, alpha: float = 0.05) -> dict[str, dict[str, Any]]:
        """UltraRAG ``evaluate_trec_pvalue`` shape (docs/stats.md): ``{alias: {A_mean, B_mean,
        diff, p_value, significant}}``, ``significant`` being ``p_value < alpha`` on the raw p."""
        return {
            alias: {
                "A_mean": self.mean_a,
                "B_mean": self.mean_b,
                "diff": self.mean_diff,
                "p_value": self.p_value,
                "significant": bool(self.p_value < alpha),
            }
        }


def _rank_total(r: TestResult) -> float:
    """R⁺ + R⁻ of a Wilcoxon test, by its zero handling (zeros hold the lowest ranks)."""
    n, z = r.n, r.n_zero
    zero_method = r.details.get("zero_method", "wilcox")
    if zero_method == "wilcox":
        return (n - z) * (n - z + 1) / 2
    if zero_method == "pratt":
        return n * (n + 1) / 2 - z * (z + 1) / 2
    return n * (n + 1) / 2
