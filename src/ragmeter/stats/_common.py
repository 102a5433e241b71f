"""Validation and the fields every paired test shares (n, means, effect sizes, alignment)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragmeter.result import ordered_mean
from ragmeter.stats.effect import effect_sizes
from ragmeter.stats.paired import Paired
from ragmeter.stats_choices import ALTERNATIVES

__all__ = [
    "ALTERNATIVES",
    "base_fields",
    "check_alpha",
    "check_alternative",
    "check_confidence",
    "check_n_resamples",
    "check_seed",
    "effect_fields",
]


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative={alternative!r} (expected one of {', '.join(ALTERNATIVES)})")
    return alternative


def check_alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha={alpha!r} (expected a number between 0 and 1, e.g. 0.05)")
    return float(alpha)


def check_confidence(confidence: float) -> float:
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence={confidence!r} (expected a number between 0 and 1)")
    return float(confidence)


def check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        if isinstance(n_resamples, float) and n_resamples.is_integer():
            n_resamples = int(n_resamples)
        else:
            raise ValueError(f"n_resamples={n_resamples!r} (expected a positive integer)")
    if n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples!r} (expected a positive integer)")
    return int(n_resamples)


def check_seed(seed: int) -> int:
    """A seed is a non-negative integer: every random procedure is reproducible."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed={seed!r} (expected a non-negative integer, e.g. 42)")
    return int(seed)


def check_n(paired: Paired) -> None:
    if paired.n < 2:
        raise ValueError(
            f"a paired test needs at least 2 paired queries, got {paired.n}"
            + (
                f" (alignment policy {paired.alignment_report.policy!r} dropped "
                f"{len(paired.alignment_report.dropped)})"
                if paired.alignment_report.dropped
                else ""
            )
        )


def base_fields(paired: Paired) -> dict[str, Any]:
    """n, n_zero, the two means, the mean difference and the alignment report."""
    check_n(paired)
    # the reported difference uses the unrounded a − b, so that it agrees with mean_a − mean_b
    # to the last digits; rounding only serves the tests' zero and tie detection
    mean_diff = float(np.mean(paired.a - paired.b))
    return {
        "n": paired.n,
        "n_zero": int(np.count_nonzero(paired.d == 0)),
        "mean_a": ordered_mean(paired.a),
        "mean_b": ordered_mean(paired.b),
        "mean_diff": mean_diff if math.isfinite(mean_diff) else None,
        "alignment": paired.alignment_report.to_dict(),
    }


def effect_fields(paired: Paired) -> dict[str, Any]:
    """The ``effect_size`` field: Cohen's d_z, Hedges' g_z and d_av (docs/stats.md)."""
    es = effect_sizes(paired)
    return {
        "effect_size": {
            "cohens_dz": es.cohens_dz,
            "hedges_gz": es.hedges_gz,
            "cohens_d_av": es.cohens_d_av,
            # why d_z is null: zero_variance also when the spread of d is floating-point noise
            "degenerate": es.degenerate,
            "reason": es.reason,
        }
    }
