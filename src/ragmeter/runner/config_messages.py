"""Pydantic validation errors as one line: ``FILE:LINE: key.path: what is wrong (expected)``.

The first problem in file order wins, so the message points at the line a reader fixes first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ragmeter.errors import InputError
from ragmeter.io.yamlmap import LineMap, format_path
from ragmeter.registry import suggest
from ragmeter.runner.config_models import (
    TOP_KEYS,
    Config,
    GatesConfig,
    NoRegressionRule,
    ThresholdRule,
)

# -- pydantic errors as one line ----------------------------------------------------------------

_TYPE_WORDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _clean_loc(loc: Sequence[Any]) -> tuple[str | int, ...]:
    out: list[str | int] = []
    for i, part in enumerate(loc):
        # the rule union adds its tag to the location: rules[0].threshold.metric -> rules[0].metric
        if (
            part in ("threshold", "no_regression")
            and i > 0
            and isinstance(loc[i - 1], int)
            and len(out) >= 2
            and out[-2] == "rules"
        ):
            continue
        out.append(part)
    return tuple(out)


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str] | None:
    """The keys allowed at the mapping that holds ``loc[-1]``."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            if part in ("threshold",):
                current = ThresholdRule
                continue
            if part == "no_regression" and current is GatesConfig:
                current = NoRegressionRule
                continue
            return None
        annotation = fields[part].annotation
        current = _model_of(annotation)
        if current is None:
            return None
    fields = getattr(current, "model_fields", None)
    return list(fields) if fields else None


def _model_of(annotation: Any) -> Any:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _message(err: Mapping[str, Any], model: type[BaseModel], source: str | None = None) -> str:
    """The one-line message of a pydantic error; ``source`` is the value's text as written in
    the YAML file, when known (a hint quotes it: ``3.10``, not the number 3.1 YAML made of it)."""
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, err["loc"]) or []
        did = suggest(str(err["loc"][-1]), allowed, n=1)
        tail = f"; did you mean '{did[0]}'?" if did else ""
        return f"unknown key (expected one of {', '.join(allowed)}){tail}"
    if kind == "missing":
        return "missing (a required key)"
    if kind == "literal_error":
        return f"{value!r} is not allowed (expected {ctx.get('expected')})"
    if kind in _TYPE_WORDS:
        expected = _TYPE_WORDS[kind]
        hint = ""
        if (
            kind == "string_type"
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            hint = f'; quote it: "{source}"' if source else "; quote it"
        return f"is {_kind(value)} (expected {expected}{hint})"
    if kind == "string_pattern_mismatch":
        return (
            f"{value!r} is not a valid name (expected letters, digits, '.', '_' or '-', "
            "starting with a letter or digit)"
        )
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return f"{value!r} is out of range ({err['msg'].lower()})"
    if kind in ("too_short",):
        return f"is empty (expected at least {ctx.get('min_length', 1)} item)"
    if kind == "union_tag_invalid":
        return "is not a rule (expected {metric, min|max} or {no_regression: {metrics}})"
    return err["msg"]


def _validate_model(data: Any, lines: LineMap, path: str | None) -> Config:
    if not isinstance(data, dict):
        raise InputError(
            f"is {_kind(data)} (expected a mapping with keys {', '.join(TOP_KEYS)})",
            path=path or "config",
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = _clean_loc(err["loc"])
            errors.append((lines.line(loc) or 0, loc, err))
        # the first problem in file order
        line, loc, err = min(errors, key=lambda e: (e[0], len(e[1])))
        raise InputError(
            _message(err, Config, lines.text(loc)),
            path=path,
            line=line if path else None,
            location=format_path(loc) if loc else None,
        ) from None
