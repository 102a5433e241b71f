"""One-line errors and warnings of dataset validation, and the type names they use."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import Located


def field_path(parts: Sequence[Any]) -> str:
    """``("reference_steps", 0, 1, "output")`` → ``reference_steps[0][1].output``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    # finite only: JSON's 1e309 parses as infinity, which no token count or time can be
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "infinity"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class _Reporter:
    """Builds the one-line errors and warnings of one source."""

    def __init__(self, source: Located, strict: bool, warnings: list[str]) -> None:
        self.source = source
        self.strict = strict
        self.warnings = warnings

    def error(
        self,
        path: tuple,
        fields: Sequence[Any],
        problem: str,
        expected: str | None = None,
        *,
        who: str | None = None,
        line: int | None = None,
    ) -> InputError:
        text = field_path(fields)
        message = f"{text}: {problem}" if text else problem
        if expected:
            message += f" (expected {expected})"
        return InputError(
            message,
            path=self.source.name,
            line=line if line is not None else self.source.line(path),
            location=who,
        )

    def warn(self, *args: Any, **kwargs: Any) -> None:
        err = self.error(*args, **kwargs)
        if self.strict:
            raise err
        self.warnings.append(str(err))


def _who(qid: Any) -> str:
    return f"question {qid}"
