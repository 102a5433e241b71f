"""Checking and converting one sample's raw values (docs/answers.md, "Empty and missing data").

Pure functions shared by the Python API and the command line; the caller passes where the value
came from (``path``/``line`` or a ``location``) so that every error is one line saying what was
wrong and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.jsonutil import json_type

__all__ = [
    "Golds",
    "answer_groups",
    "coerce_golds",
    "coerce_id",
    "coerce_prediction",
    "compile_gold_regex",
]


def _scalar_text(value: Any) -> str | None:
    """str for strings, numbers (``str()``) and booleans (``"True"``/``"False"``); else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value != value:  # NaN never reaches here from JSON
            return None
        return str(value)
    return None


def coerce_prediction(value: Any, **where: Any) -> tuple[str, bool]:
    """``(text, missing)``: ``None`` becomes ``""`` with ``missing=True``; numbers ``str()``.

    >>> coerce_prediction(None), coerce_prediction(1972), coerce_prediction(True)
    (('', True), ('1972', False), ('True', False))
    """
    if value is None:
        return "", True
    text = _scalar_text(value)
    if text is None:
        raise InputError(
            f"prediction is {json_type(value)} (expected a string, a number or null)", **where
        )
    return text, False


class Golds:
    """The golds of one sample: a flat list for most metrics, answer groups for str-em-alce."""

    __slots__ = ("flat", "given", "groups")

    def __init__(self, flat: list[str], groups: list[list[str]], given: bool = True) -> None:
        self.flat = flat
        self.groups = groups
        # False when there was no gold value at all (a missing key or null), as opposed to an
        # explicit empty list, which the squad profile reads as an unanswerable question
        self.given = given

    def __repr__(self) -> str:
        return f"Golds(flat={self.flat!r}, groups={self.groups!r})"


def coerce_golds(
    value: Any,
    *,
    choices: Any = None,
    key: str = "golden_answers",
    **where: Any,
) -> Golds:
    """Golds from a string, a list of strings/numbers/booleans, or a list of alias lists.

    A list of lists is read as answer groups (``str-em-alce``); the other metrics score every
    alias. With a non-empty ``choices`` list, integer golds are indices into it (FlashRAG's
    multiple-choice rows). ``None`` is no gold at all (``given`` is False); ``[]`` is an empty
    gold list.

    >>> coerce_golds("Paris").flat, coerce_golds([1972, True]).flat
    (['Paris'], ['1972', 'True'])
    >>> g = coerce_golds([["Barack Obama", "Obama"], "Biden"])
    >>> g.flat, g.groups
    (['Barack Obama', 'Obama', 'Biden'], [['Barack Obama', 'Obama'], ['Biden']])
    >>> coerce_golds([1], choices=["red", "blue"]).flat
    ['blue']
    """
    if value is None:
        return Golds([], [], given=False)
    items = value if isinstance(value, (list, tuple)) else [value]
    use_choices = isinstance(choices, (list, tuple)) and len(choices) > 0
    if choices is not None and not isinstance(choices, (list, tuple)):
        raise InputError(f"choices is {json_type(choices)} (expected a list)", **where)
    flat: list[str] = []
    groups: list[list[str]] = []
    for i, item in enumerate(items):
        if isinstance(item, (list, tuple)):
            group = []
            for j, alias in enumerate(item):
                text = _scalar_text(alias)
                if text is None:
                    raise InputError(
                        f"{key}[{i}][{j}] is {json_type(alias)} (expected a string)", **where
                    )
                group.append(text)
            flat.extend(group)
            groups.append(group)
            continue
        if use_choices and isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < len(choices):
                raise InputError(
                    f"{key}[{i}] is choice index {item} but there are {len(choices)} choices "
                    f"(expected 0 … {len(choices) - 1})",
                    **where,
                )
            text = _scalar_text(choices[item])
            if text is None:
                raise InputError(
                    f"choices[{item}] is {json_type(choices[item])} (expected a string)", **where
                )
        else:
            text = _scalar_text(item)
        if text is None:
            label = f"{key}[{i}]" if isinstance(value, (list, tuple)) else key
            raise InputError(
                f"{label} is {json_type(item)} (expected a string, a number or a list of them)",
                **where,
            )
        flat.append(text)
        groups.append([text])
    return Golds(flat, groups)


def coerce_id(value: Any, **where: Any) -> str | int:
    """A sample id must be a string or an integer."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise InputError(f"id is {json_type(value)} (expected a string or an integer)", **where)


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def compile_gold_regex(pattern: str, **where: Any) -> re.Pattern[str]:
    """A ``--gold-regex`` gold, compiled case-insensitively as FlashRAG does."""
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        try:
            compiled = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise InputError(
                f"gold regex {pattern!r} does not compile: {exc} (expected a Python regex)",
                **where,
            ) from None
        _REGEX_CACHE[pattern] = compiled
    return compiled


def check_golds_list(golds: Sequence[Any], n: int, what: str = "golds") -> None:
    if len(golds) != n:
        raise InputError(f"{len(golds)} {what} for {n} predictions (expected one per prediction)")


def answer_groups(value: Any, key: str, where: dict[str, Any]) -> list[Any]:
    """``qa_pairs``-style groups: items with ``short_answers``, alias lists or strings."""
    if not isinstance(value, list):
        raise InputError(f"{key} is not a list (expected answer groups)", **where)
    out = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            aliases = item.get("short_answers")
            if not isinstance(aliases, list):
                raise InputError(
                    f"{key}[{i}] has no 'short_answers' list (expected aliases)", **where
                )
            out.append(aliases)
        elif isinstance(item, (list, str)):
            out.append(item if isinstance(item, list) else [item])
        else:
            raise InputError(
                f"{key}[{i}] is not a list of aliases (expected answer groups)", **where
            )
    return out
