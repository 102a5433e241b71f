"""One entry point for every paired test, by name (docs/stats.md: unknown names raise)."""

from __future__ import annotations

from typing import Any

from ragmeter.stats.result import TestResult
from ragmeter.stats_choices import (
    ALTERNATIVES,
    CI_METHODS,
    CORRECTION_FAMILIES,
    CORRECTIONS,
    MISSING_POLICIES,
    TESTS,
    TWO_SIDED,
)
from ragmeter.warnings import renamed_attributes

# the option choices are declared in ragmeter.stats_choices (light enough for the command line)
# and exposed here beside the tests they configure
__all__ = [
    "ALTERNATIVES",
    "CI_METHODS",
    "CORRECTIONS",
    "CORRECTION_FAMILIES",
    "MISSING_POLICIES",
    "TESTS",
    "TWO_SIDED",
    "canonical_test",
    "paired_test",
]
_ALIASES = {
    "permutation": "randomization",
    "fisher": "randomization",
    "ttest": "t",
    "t-test": "t",
    "student": "t",
}


def canonical_test(name: str) -> str:
    """The canonical test name, or ``ValueError`` listing the supported tests.

    >>> canonical_test("student")
    't'
    >>> canonical_test("mcnemar")
    Traceback (most recent call last):
    ValueError: unknown test 'mcnemar' (supported: randomization, t, wilcoxon, bootstrap)
    """
    key = _ALIASES.get(name, name)
    if key not in TESTS:
        raise ValueError(f"unknown test {name!r} (supported: {', '.join(TESTS)})")
    return key


def paired_test(
    a: Any, b: Any = None, *, test: str = "randomization", **options: Any
) -> TestResult:
    """Run the paired test called ``test`` (``randomization``, ``t``, ``wilcoxon`` or
    ``bootstrap``) with ``options`` passed through; see each test for its options.

    >>> paired_test([0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], test="t").reason
    'all_differences_zero'
    """
    key = canonical_test(test)
    if key == "randomization":
        from ragmeter.stats.randomization import randomization_test as fn
    elif key == "t":
        from ragmeter.stats.ttest import ttest as fn
    elif key == "wilcoxon":
        from ragmeter.stats.wilcoxon import wilcoxon as fn
    else:
        from ragmeter.stats.bootstrap import bootstrap_test as fn
    return fn(a, b, **options)


# the old name of CORRECTION_FAMILIES warns (it also names the retrieval measure families)
__getattr__ = renamed_attributes(__name__, {"FAMILIES": "CORRECTION_FAMILIES"}, globals())
