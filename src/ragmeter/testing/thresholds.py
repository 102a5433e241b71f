"""Expectations such as ``">=0.42"``, ``"0.40..0.60"``, ``{"min": 0.42}`` or ``pytest.approx``.

One parser for every form the assertion helpers accept. The dict form is the gate-rule form of a
``ragmeter.yaml`` (inclusive ``min``/``max``), so a rule copied from the config means the same
thing in a test. A bare number is refused: whether ``0.42`` is a floor or a ceiling would be a
guess.

>>> t = parse_threshold("retrieval.nDCG@10", ">=0.42")
>>> t.check(0.42), t.check(0.41996)
(True, False)
>>> format_value(0.41996, t)
'0.41996'
>>> parse_threshold("answers.f1", "0.4..0.6").text
'0.4..0.6'
>>> parse_threshold("grounded.under_refusal", {"max": 0.05}).text
'<=0.05'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import UsageError

__all__ = ["Threshold", "format_value", "parse_threshold"]

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_OP = re.compile(rf"^\s*(>=|<=|==|>|<)\s*({_NUM})\s*$")
_RANGE = re.compile(rf"^\s*({_NUM})\s*\.\.\s*({_NUM})\s*$")

FORMS = "'>=X', '>X', '<=X', '<X', '==X', 'A..B', {'min': X, 'max': Y} or pytest.approx(X)"


@dataclass(frozen=True)
class Threshold:
    """A parsed expectation: ``op`` is one of >=, >, <=, <, ==, range, approx."""

    op: str
    low: float | None = None
    high: float | None = None
    approx: Any = None
    text: str = ""

    def check(self, value: float) -> bool:
        """Whether the unrounded ``value`` meets the expectation."""
        if self.op == "approx":
            return bool(self.approx == value)
        if self.op == "==":
            return value == self.low
        ok = True
        if self.low is not None:
            ok = ok and (value > self.low if self.op == ">" else value >= self.low)
        if self.high is not None:
            ok = ok and (value < self.high if self.op == "<" else value <= self.high)
        return ok

    @property
    def sides(self) -> tuple[bool, bool]:
        """(has a lower bound, has an upper bound): which CI bound makes a check conservative."""
        if self.op in ("approx", "=="):
            return (True, True)
        return (self.low is not None, self.high is not None)

    def check_interval(self, low: float, high: float) -> bool:
        """``use="ci"``: the lower bound must meet a floor and the upper bound a ceiling."""
        floor, ceiling = self.sides
        ok = True
        if floor and self.low is not None:
            ok = ok and (low > self.low if self.op == ">" else low >= self.low)
        if ceiling and self.high is not None:
            ok = ok and (high < self.high if self.op == "<" else high <= self.high)
        return ok


def _number(metric: str, raw: Any, spec: Any) -> float:
    if isinstance(raw, bool):
        raise UsageError(f"{metric}: cannot read threshold {spec!r} (expected {FORMS})")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{metric}: cannot read threshold {spec!r} (expected {FORMS})") from None
    if not math.isfinite(value):
        raise UsageError(f"{metric}: threshold {spec!r} is not a finite number")
    return value


def _g(x: float) -> str:
    return f"{x:g}"


def parse_threshold(metric: str, spec: Any) -> Threshold:
    """Parse one expectation of ``metric``.

    Raises :class:`TypeError` for a bare number (it has no direction) and
    :class:`~ragmeter.errors.UsageError` for anything else that is not one of the forms.
    """
    if type(spec).__name__.startswith("Approx") and hasattr(spec, "expected"):
        return Threshold("approx", approx=spec, text=f"approx {spec!r}")
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        raise TypeError(
            f"{metric}: threshold {spec!r} has no direction (write '>={spec!r}' or '<={spec!r}')"
        )
    if isinstance(spec, Mapping):
        unknown = [k for k in spec if k not in ("min", "max")]
        if unknown or not spec:
            raise UsageError(f"{metric}: cannot read threshold {dict(spec)!r} (expected {FORMS})")
        low = _number(metric, spec["min"], spec) if "min" in spec else None
        high = _number(metric, spec["max"], spec) if "max" in spec else None
        if low is not None and high is not None:
            if low > high:
                raise UsageError(f"{metric}: min {low:g} is above max {high:g}")
            return Threshold("range", low, high, text=f"{_g(low)}..{_g(high)}")
        if low is not None:
            return Threshold(">=", low, text=f">={_g(low)}")
        return Threshold("<=", None, high, text=f"<={_g(high)}")  # type: ignore[arg-type]
    if isinstance(spec, str):
        m = _OP.match(spec)
        if m:
            op, value = m[1], _number(metric, m[2], spec)
            text = f"{op}{m[2]}"
            if op in (">=", ">"):
                return Threshold(op, value, text=text)
            if op in ("<=", "<"):
                return Threshold(op, None, value, text=text)
            return Threshold("==", value, value, text=text)
        m = _RANGE.match(spec)
        if m:
            low, high = _number(metric, m[1], spec), _number(metric, m[2], spec)
            if low > high:
                raise UsageError(f"{metric}: range {spec!r} has its bounds reversed")
            return Threshold("range", low, high, text=f"{m[1]}..{m[2]}")
    raise UsageError(f"{metric}: cannot read threshold {spec!r} (expected {FORMS})")


def format_value(value: float | None, threshold: Threshold | None = None) -> str:
    """4 decimals, or as many as it takes for the printed value to get the same verdict.

    >>> t = parse_threshold("m.x", ">=0.42")
    >>> format_value(0.4213, t), format_value(0.41999999, t), format_value(None)
    ('0.4213', '0.41999999', '-')
    """
    if value is None:
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = f"{value:.4f}"
    if threshold is None or threshold.op == "approx":
        return text
    truth = threshold.check(value)
    bounds = {b for b in (threshold.low, threshold.high) if b is not None}
    for digits in range(4, 18):
        text = f"{value:.{digits}f}"
        shown = float(text)
        # same verdict as the unrounded value, and never equal to a bound it is not equal to
        if threshold.check(shown) == truth and (shown not in bounds or value in bounds):
            return text.rstrip("0") if digits > 4 else text
    return repr(value)
