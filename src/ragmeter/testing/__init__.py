"""Assertion helpers: evaluation results and release gates as ordinary test assertions.

.. code-block:: python

    from ragmeter.testing import assert_metrics, assert_gates, assert_no_regression

    def test_retrieval_floor(ragmeter_run):
        assert_metrics(ragmeter_run["hybrid-v1"], {"retrieval.nDCG@10": ">=0.42"})

Each helper checks every expectation, then fails once listing all the misses
(:class:`MetricAssertionError`, an ``AssertionError``), or skips when a value is missing (the
rule of ``ragmeter gate``'s SKIP; strict mode fails instead). Outside pytest a skip is raised as
:class:`MetricSkipped`. Usage mistakes (an unknown metric, a malformed threshold) raise
:class:`~ragmeter.errors.UsageError` with the closest valid names; a bare number as threshold
raises ``TypeError``. See docs/pytest.md.

Importing this package is cheap; the engines load when a helper is first called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import RagmeterError, UsageError

__all__ = [
    "MetricAssertionError",
    "MetricSkipped",
    "assert_gates",
    "assert_metrics",
    "assert_no_regression",
]


class MetricAssertionError(AssertionError):
    """A metric missed its expectation; the first line of the message stands alone."""


class MetricSkipped(Exception):
    """A checked metric has no value (raised instead of ``pytest.skip`` outside pytest)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _where(helper: str) -> str:
    from ragmeter.testing._context import current_item

    item = current_item()
    return f"{item.nodeid}: {helper}" if item is not None else helper


def _end(outcome: Any) -> None:
    __tracebackhide__ = True
    if outcome.failure is not None:
        raise MetricAssertionError(outcome.failure)
    if outcome.skip is not None:
        from ragmeter.testing._context import in_pytest

        if in_pytest():
            import pytest

            pytest.skip(outcome.skip)
        raise MetricSkipped(outcome.skip)


def assert_metrics(
    result: Any,
    expected: Mapping[str, Any],
    *,
    system: str | None = None,
    stratum: Mapping[str, Any] | None = None,
    use: str = "value",
    strict: bool | None = None,
) -> None:
    """Check aggregates: ``{"retrieval.nDCG@10": ">=0.42", "grounded.under_refusal": "<=0.05"}``.

    ``result`` is one system's result (``ragmeter_run["hybrid-v1"]``, ``ragmeter_result``), an
    evaluation with ``system=``, or a :class:`~ragmeter.Result`. Thresholds: ``">=X"``,
    ``">X"``, ``"<=X"``, ``"<X"``, ``"==X"``, ``"A..B"``, ``{"min": X, "max": Y}`` or
    ``pytest.approx(X)``. ``stratum={"custodian_type": "M"}`` reads one stratum's values;
    ``use="ci"`` compares the conservative bound of the 95% bootstrap CI.
    """
    __tracebackhide__ = True
    from ragmeter.testing.assertions import metrics_outcome

    try:
        outcome = metrics_outcome(
            result, expected, system=system, stratum=stratum, use=use, strict=strict
        )
    except RagmeterError as exc:
        raise UsageError(f"{_where('assert_metrics')}: {exc}") from None
    except TypeError as exc:
        if "has no direction" not in str(exc):
            raise
        raise TypeError(str(exc)) from None  # a bare number: the message says what to write
    except KeyError as exc:
        raise UsageError(f"{_where('assert_metrics')}: {exc.args[0]}") from None
    _end(outcome)


def assert_gates(run: Any, *, system: str | None = None, strict: bool | None = None) -> None:
    """Apply the config's gate rules (thresholds, profiles, no-regression) to every system or
    one; fail listing each FAIL, skip listing each SKIP (fail in strict mode)."""
    __tracebackhide__ = True
    from ragmeter.testing.assertions import gates_outcome

    try:
        outcome = gates_outcome(run, system=system, strict=strict)
    except RagmeterError as exc:
        raise UsageError(f"{_where('assert_gates')}: {exc}") from None
    _end(outcome)


def assert_no_regression(
    current: Any,
    baseline: Any,
    metrics: Sequence[str],
    *,
    test: str = "randomization",
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int = 42,
    missing: str = "error",
    n_resamples: int = 9999,
    ci: str | None = None,
    strict: bool | None = None,
) -> None:
    """Fail when a metric is significantly worse than the baseline's (paired test on per-sample
    values, ``correction`` over ``metrics``, worse in the metric's direction and corrected
    p <= ``alpha``).

    ``baseline`` is a result, a system name of the same config, ``"run:<id>"`` of a stored
    run, or a results folder (``results/<evaluation-id>/``). ``missing="error"`` refuses
    samples scored by only one run; ``"intersect"`` tests the samples both scored.
    """
    __tracebackhide__ = True
    from ragmeter.testing.regression import no_regression_outcome

    try:
        outcome = no_regression_outcome(
            current,
            baseline,
            metrics,
            test=test,
            correction=correction,
            alpha=alpha,
            seed=seed,
            missing=missing,
            n_resamples=n_resamples,
            ci=ci,
            strict=strict,
        )
    except RagmeterError as exc:
        raise UsageError(f"{_where('assert_no_regression')}: {exc}") from None
    except KeyError as exc:
        raise UsageError(f"{_where('assert_no_regression')}: {exc.args[0]}") from None
    _end(outcome)
