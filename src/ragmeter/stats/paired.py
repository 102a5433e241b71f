"""Paired inputs: per-query scores aligned by query id (docs/stats.md).

Every paired test takes a :class:`Paired`: two score vectors on one query set, in sorted id order,
with the rounded differences d = round(a - b, decimals). Alignment is explicit: a query missing on
either side raises unless the caller chose to fill or intersect, and the choice is reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.stats_choices import MISSING_POLICIES, MissingPolicy

__all__ = [
    "AlignmentReport",
    "MissingQueriesError",
    "Paired",
    "align",
    "align_positional",
    "as_paired",
]


class MissingQueriesError(InputError):
    """Queries present on one side only, under ``missing="error"``.

    ``missing_in_a`` and ``missing_in_b`` list the ids (sorted) that each side lacks. When N
    systems are aligned (:func:`ragmeter.stats.compare`), ``missing_by_system`` maps each
    system that lacks queries to their ids.
    """

    def __init__(
        self,
        missing_in_a: Sequence[str],
        missing_in_b: Sequence[str],
        *,
        names: tuple[str, str] = ("a", "b"),
        location: str | None = None,
        missing_by_system: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.missing_in_a = list(missing_in_a)
        self.missing_in_b = list(missing_in_b)
        self.missing_by_system = {k: list(v) for k, v in (missing_by_system or {}).items()}
        if self.missing_by_system:
            parts = [
                f"system {name!r} lacks {len(ids)} ({_preview(ids, 3)})"
                for name, ids in self.missing_by_system.items()
            ]
            head = "queries are not the same for every system: "
        else:
            parts = [
                f"{len(ids)} missing in {name} ({_preview(ids)})"
                for name, ids in zip(names, (self.missing_in_a, self.missing_in_b), strict=True)
                if ids
            ]
            head = "queries are not the same on both sides: "
        super().__init__(
            head
            + "; ".join(parts)
            + " (use missing='fill' with a fill_value, or missing='intersect')",
            location=location,
        )


def _preview(ids: Sequence[str], k: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:k])
    return shown + (f", ... {len(ids) - k} more" if len(ids) > k else "")


@dataclass(frozen=True)
class AlignmentReport:
    """How two score mappings were aligned (the ``alignment`` field of every test result)."""

    policy: str
    aligned_by: str = "id"
    missing_in_a: tuple[str, ...] = ()
    missing_in_b: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    fill_value: float | None = None

    @property
    def n_filled(self) -> int:
        return len(self.missing_in_a) + len(self.missing_in_b) if self.policy == "fill" else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "aligned_by": self.aligned_by,
            "n_filled": self.n_filled,
            "fill_value": self.fill_value,
            "missing_in_a": list(self.missing_in_a),
            "missing_in_b": list(self.missing_in_b),
            "dropped": list(self.dropped),
        }


@dataclass(frozen=True)
class Paired:
    """Two aligned score vectors and their rounded differences.

    ``ids`` are in sorted order (or input order for :func:`align_positional`); ``d`` is
    ``round(a - b, decimals)`` so that ties broken by binary floating point are restored.
    """

    ids: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    alignment_report: AlignmentReport = field(default_factory=lambda: AlignmentReport("error"))
    decimals: int | None = 12

    @property
    def n(self) -> int:
        return len(self.ids)

    def swap(self) -> Paired:
        """The same pairs with A and B exchanged (d negated)."""
        rep = self.alignment_report
        return Paired(
            self.ids,
            self.b,
            self.a,
            _round(self.b - self.a, self.decimals),
            AlignmentReport(
                rep.policy,
                rep.aligned_by,
                rep.missing_in_b,
                rep.missing_in_a,
                rep.dropped,
                rep.fill_value,
            ),
            self.decimals,
        )

    def noise(self) -> float:
        """The spread of d that is floating-point noise, not a difference between queries.

        Half a step of the rounding grid (``0.5·10^-decimals``), and at least 64 ulps of the
        largest score: a - b of values such as 0.3 − 0.19999999999999998 and 0.7 − 0.6 differ
        in the last bits, and dividing by a standard deviation made of those bits gave effect
        sizes of 10^15.
        """
        scale = max(
            float(np.max(np.abs(self.a), initial=0.0)), float(np.max(np.abs(self.b), initial=0.0))
        )
        tol = 64 * float(np.finfo(np.float64).eps) * scale
        if self.decimals is not None:
            tol = max(tol, 0.5 * 10.0 ** (-self.decimals))
        return tol

    def constant_d(self) -> bool:
        """True when every difference is the same value up to :meth:`noise` (sd(d) is 0)."""
        if self.n == 0:
            return True
        return float(np.max(self.d) - np.min(self.d)) <= self.noise()

    def zero_d(self) -> bool:
        """True when every difference is 0 up to :meth:`noise`."""
        return self.n == 0 or float(np.max(np.abs(self.d))) <= self.noise()

    def __repr__(self) -> str:
        return f"<Paired n={self.n} policy={self.alignment_report.policy!r}>"


def _round(x: np.ndarray, decimals: int | None) -> np.ndarray:
    out = x if decimals is None else np.round(x, decimals)
    return out + 0.0  # turns -0.0 into 0.0 so signs and zero tests agree


_FAST_TYPES = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def _check_finite(values: Mapping[str, float], side: str) -> dict[str, float]:
    """``{str(id): float(score)}``, raising InputError for a non-number or non-finite score."""
    keys = list(values)
    raw = list(values.values())
    if set(map(type, keys)) <= {str} and set(map(type, raw)) <= _FAST_TYPES:
        arr = np.array(raw, dtype=np.float64)
        if arr.size == 0 or bool(np.isfinite(arr).all()):
            return dict(zip(keys, arr.tolist(), strict=True))
    out: dict[str, float] = {}
    for key, value in zip(keys, raw, strict=True):
        qid = key if isinstance(key, str) else str(key)
        if qid in out:
            raise InputError(
                f"query id {key!r} appears twice once converted to text (expected unique ids)",
                location=f"{side}",
            )
        if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)
        ):
            raise InputError(
                f"score {value!r} is not a number (expected a finite float)",
                location=f"{side}[{key!r}]",
            )
        fv = float(value)
        if not math.isfinite(fv):
            raise InputError(
                f"score {value!r} is not finite (expected a finite float; drop the query or "
                "give it a score)",
                location=f"{side}[{key!r}]",
            )
        out[qid] = fv
    return out


# beyond this, sums of scores and squares of differences can overflow a double (the tests'
# statistics became NaN or infinite); no metric comes near it
MAX_SCORE = 1e150


def check_magnitude(arr: np.ndarray, ids: Sequence[str], where: str) -> None:
    """Refuse scores so large that the tests' sums and squares would overflow (one line)."""
    if arr.size and float(np.max(np.abs(arr))) > MAX_SCORE:
        i = int(np.argmax(np.abs(arr)))
        raise InputError(
            f"score {float(arr[i])!r} is too large to compare (expected |score| ≤ 1e150; sums "
            "and squared differences of larger scores overflow)",
            location=f"{where}, sample {ids[i]!r}",
        )


def align(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
    names: tuple[str, str] = ("a", "b"),
) -> Paired:
    """Align two mappings ``query_id -> score`` on their query ids.

    The query set is the union of ids, processed in sorted order so that the pairing of queries
    with random draws never depends on input order. ``missing`` decides what happens to an id
    present on one side only: ``"error"`` raises :class:`MissingQueriesError`, ``"fill"`` gives
    the absent side ``fill_value`` (required; ranx ``make_comparable`` and UltraRAG use 0.0),
    ``"intersect"`` drops the id. Every choice is listed in ``alignment_report``.

    Differences are ``d = round(a - b, decimals)`` (``decimals=None`` keeps them raw).

    >>> p = align({"q1": .8, "q2": .6, "q3": .7, "q4": .9}, {"q1": .7, "q2": .6, "q4": .5,
    ...           "q5": .4}, missing="fill", fill_value=0.0)
    >>> p.ids, p.d.tolist()
    (('q1', 'q2', 'q3', 'q4', 'q5'), [0.1, 0.0, 0.7, 0.4, -0.4])
    >>> align({"q1": .8}, {"q2": .7})
    Traceback (most recent call last):
    ragmeter.stats.paired.MissingQueriesError: queries are not the same on both sides: 1 missing
    in a ('q2'); 1 missing in b ('q1') (use missing='fill' with a fill_value, or ...)
    """
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} (expected one of {', '.join(MISSING_POLICIES)})")
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        raise TypeError(
            "align() takes two mappings query_id -> score; use align_positional() for sequences"
        )
    va = _check_finite(a, names[0])
    vb = _check_finite(b, names[1])
    missing_in_a = sorted(set(vb) - set(va))
    missing_in_b = sorted(set(va) - set(vb))
    dropped: list[str] = []
    if missing == "error":
        if missing_in_a or missing_in_b:
            raise MissingQueriesError(missing_in_a, missing_in_b, names=names)
        ids = sorted(va)
    elif missing == "fill":
        if fill_value is None:
            raise ValueError("missing='fill' needs a fill_value (e.g. 0.0)")
        fv = float(fill_value)
        if not math.isfinite(fv):
            raise ValueError(f"fill_value must be finite, not {fill_value!r}")
        ids = sorted(set(va) | set(vb))
        for qid in missing_in_a:
            va[qid] = fv
        for qid in missing_in_b:
            vb[qid] = fv
    else:
        dropped = sorted(set(missing_in_a) | set(missing_in_b))
        ids = sorted(set(va) & set(vb))
    av = np.fromiter((va[i] for i in ids), dtype=np.float64, count=len(ids))
    bv = np.fromiter((vb[i] for i in ids), dtype=np.float64, count=len(ids))
    report = AlignmentReport(
        missing,
        "id",
        tuple(missing_in_a),
        tuple(missing_in_b),
        tuple(dropped),
        float(fill_value) if missing == "fill" and fill_value is not None else None,
    )
    check_magnitude(av, ids, names[0])
    check_magnitude(bv, ids, names[1])
    return Paired(tuple(ids), av, bv, _round(av - bv, decimals), report, decimals)


def align_positional(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    ids: Sequence[str] | None = None,
    *,
    decimals: int | None = 12,
) -> Paired:
    """Pair two plain sequences by position (equal lengths required).

    ``ids`` names the positions (default ``"0"``, ``"1"``, ...); the pairs keep the input order
    and the report records ``aligned_by="position"``.

    >>> align_positional([0.71, 0.66], [0.65, 0.60]).d.tolist()
    [0.06, 0.06]
    """
    av = np.asarray(a, dtype=np.float64).ravel()
    bv = np.asarray(b, dtype=np.float64).ravel()
    if len(av) != len(bv):
        raise InputError(
            f"the two score sequences have different lengths ({len(av)} and {len(bv)}); "
            "expected one score per query on both sides (align by id with align())"
        )
    for side, arr in (("a", av), ("b", bv)):
        bad = np.flatnonzero(~np.isfinite(arr))
        if len(bad):
            raise InputError(
                f"score {arr[bad[0]]!r} is not finite (expected a finite float)",
                location=f"{side}[{int(bad[0])}]",
            )
    names = [str(i) for i in (ids if ids is not None else range(len(av)))]
    if len(names) != len(av):
        raise InputError(f"{len(names)} ids for {len(av)} scores (expected one id per score)")
    if len(set(names)) != len(names):
        raise InputError("ids are not unique (expected one id per position)")
    report = AlignmentReport("error", "position")
    check_magnitude(av, names, "a")
    check_magnitude(bv, names, "b")
    return Paired(tuple(names), av, bv, _round(av - bv, decimals), report, decimals)


def as_paired(
    a: Any,
    b: Any = None,
    *,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    decimals: int | None = 12,
) -> Paired:
    """A :class:`Paired` from a Paired, two mappings (by id) or two sequences (by position)."""
    if isinstance(a, Paired):
        if b is not None:
            raise TypeError("pass either a Paired or two score collections, not both")
        return a
    if b is None:
        raise TypeError("a paired test needs a Paired or two score collections (a, b)")
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return align(a, b, missing=missing, fill_value=fill_value, decimals=decimals)
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        raise TypeError("both sides must be mappings (by id) or both sequences (by position)")
    return align_positional(a, b, decimals=decimals)
