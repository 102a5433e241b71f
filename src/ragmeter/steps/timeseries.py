"""Time-series and data-point steps (docs/steps.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime, time, timezone
from typing import Any

from dateutil import parser as _dateparser

__all__ = [
    "MissingAnchor",
    "normalize_granularity",
    "normalize_values",
    "relative_offset",
    "score_data_points",
    "score_time_series",
    "times_equal",
]

_GRANULARITY = re.compile(r"(\d+)([a-zA-Z]+)")
_RELATIVE = re.compile(r"^(\d+)([smhdw])-(ago|ahead)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_UNITS = {
    "s": "seconds",
    "second": "seconds",
    "m": "minutes",
    "minute": "minutes",
    "h": "hours",
    "hour": "hours",
    "d": "days",
    "day": "days",
    "w": "weeks",
    "week": "weeks",
    "mo": "months",
    "month": "months",
    "q": "quarters",
    "quarter": "quarters",
    "y": "years",
    "year": "years",
}
TOLERANCE_SECONDS = 60


class MissingAnchor(Exception):
    """A relative reference time met an absolute actual time without a usable anchor."""


def normalize_values(value: Any) -> Any:
    """Falsy values unchanged, a string as a one-element list, a list sorted.

    >>> normalize_values("m"), normalize_values(["b", "a"]), normalize_values(None)
    (['m'], ['a', 'b'], None)
    """
    if not value:
        return value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        try:
            return sorted(value)
        except TypeError:
            return sorted(value, key=repr)
    return value


def normalize_granularity(value: Any) -> Any:
    """``1s``/``1second`` → ``1seconds``, ``1w``/``1week`` → ``1weeks``; unknown units lower-cased.

    >>> [normalize_granularity(g) for g in ("5SECONDS", "1w", "month1")]
    ['5seconds', '1weeks', 'month1']
    """
    if not value or not isinstance(value, str):
        return value
    match = _GRANULARITY.match(value)
    if not match:
        return value
    number, unit = match.groups()
    unit = unit.lower()
    return f"{number}{_UNITS.get(unit, unit)}"


def relative_offset(value: Any) -> int | None:
    """Signed seconds of a relative time (``now``, ``5m-ago``, ``1w-ahead``), else ``None``.

    >>> relative_offset("now"), relative_offset("100m-ago"), relative_offset("1w-ahead")
    (0, -6000, 604800)
    >>> relative_offset("1mo-ago") is None
    True
    """
    if not isinstance(value, str):
        return None
    if value == "now":
        return 0
    match = _RELATIVE.match(value)
    if not match:
        return None
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return seconds if match.group(3) == "ahead" else -seconds


def _to_datetime(value: Any) -> datetime | None:
    """An absolute time as an aware UTC datetime, or ``None`` if it does not parse."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime.combine(value, time())
    elif isinstance(value, str):
        try:
            dt = _dateparser.isoparse(value)
        except (ValueError, OverflowError):
            return None
    else:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def times_equal(reference: Any, actual: Any, anchor: Any = None) -> bool:
    """Whether an actual start/end time satisfies the reference one.

    Relative reference times are resolved against ``anchor`` (the actual step's
    ``execution_timestamp``) with a tolerance of 60 s; two relative times compare by offset; two
    absolute times by instant (raw equality when either does not parse). Raises
    :class:`MissingAnchor` when a relative reference meets an absolute actual time and the
    anchor is missing or unparsable.

    >>> times_equal("1w-ago", "7d-ago"), times_equal("2025-01-01T00:00:00Z", "2025-01-01T00:00:00")
    (True, True)
    >>> times_equal("60s-ago", "2025-01-01T00:00:00Z", anchor="2025-01-01T00:01:01Z")
    True
    """
    if reference is None and actual is None:
        return True
    if reference is None or actual is None:
        return False
    ref_offset = relative_offset(reference)
    act_offset = relative_offset(actual)
    if ref_offset is None and act_offset is not None:
        return False
    if ref_offset is not None and act_offset is not None:
        return ref_offset == act_offset
    if ref_offset is not None:
        anchor_dt = _to_datetime(anchor)
        if anchor_dt is None:
            raise MissingAnchor(repr(anchor))
        act_dt = _to_datetime(actual)
        if act_dt is None:
            return False
        target = anchor_dt.timestamp() + ref_offset
        return abs(act_dt.timestamp() - target) <= TOLERANCE_SECONDS
    ref_dt = _to_datetime(reference)
    act_dt = _to_datetime(actual)
    if ref_dt is not None and act_dt is not None:
        return ref_dt == act_dt
    return bool(reference == actual)


def _args(step: Mapping[str, Any]) -> Mapping[str, Any]:
    args = step.get("args")
    return args if isinstance(args, Mapping) else {}


def score_time_series(reference_step: Mapping[str, Any], actual_step: Mapping[str, Any]) -> float:
    """1.0 if a ``retrieve_time_series`` call asked for the reference series.

    >>> score_time_series({"args": {"mrid": "m"}}, {"args": {"mrid": ["m"], "limit": 5}})
    1.0
    """
    ref, act = _args(reference_step), _args(actual_step)
    ref_mrid, ref_limit = ref.get("mrid"), ref.get("limit")
    act_mrid, act_limit = act.get("mrid"), act.get("limit")
    if ref_mrid:
        if normalize_values(ref_mrid) != normalize_values(act_mrid):
            return 0.0
        return float(not ref_limit or ref_limit == act_limit)
    return float(act_mrid is None and ref_limit == act_limit)


def score_data_points(
    reference_step: Mapping[str, Any],
    actual_step: Mapping[str, Any],
    warn: Callable[[str], None] | None = None,
) -> float:
    """1.0 if a ``retrieve_data_points`` call matches the reference arguments.

    >>> ref = {"args": {"external_id": "x", "aggregates": "average", "granularity": "1w"}}
    >>> score_data_points(ref, {"args": {"external_id": ["x"], "aggregates": ["average"],
    ...                                  "granularity": "1week"}})
    1.0
    """
    ref, act = _args(reference_step), _args(actual_step)
    if "external_id" not in act:
        return 0.0
    if (
        normalize_values(ref.get("external_id")) != normalize_values(act.get("external_id"))
        or normalize_granularity(ref.get("granularity"))
        != normalize_granularity(act.get("granularity"))
        or normalize_values(ref.get("aggregates")) != normalize_values(act.get("aggregates"))
        or ref.get("limit") != act.get("limit")
    ):
        return 0.0
    anchor = actual_step.get("execution_timestamp")
    try:
        return float(
            times_equal(ref.get("start"), act.get("start"), anchor)
            and times_equal(ref.get("end"), act.get("end"), anchor)
        )
    except MissingAnchor:
        if warn is not None:
            warn(
                f"actual step {actual_step.get('id')!r}: relative reference time needs the "
                f"step's execution_timestamp, which is missing or not ISO-8601 ({anchor!r}); "
                "scored 0"
            )
        return 0.0
