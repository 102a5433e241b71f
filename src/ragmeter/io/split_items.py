"""Reading the items of a split from a gold JSONL file.

The file is the gold standard of docs/runner.md#the-gold-standard-format: only the id, the group
key and the stratification factors are read; everything else on the line is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, display_name
from ragmeter.io.jsonl import iter_jsonl

__all__ = ["read_split_items"]


def _scalar(value: Any, *, path: str, line: int, key: str) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise InputError(
        f"{key} is a JSON {'object' if isinstance(value, dict) else 'array'} (expected a "
        "string, number or boolean)",
        path=path,
        line=line,
    )


def read_split_items(
    path: PathLike,
    *,
    factors: Sequence[str],
    group_key: str | None = None,
    id_key: str = "id",
) -> list[dict[str, Any]]:
    """One record per line: ``{"id", <factor>: value, ..., <group_key>: value}``.

    Factor and group values are looked up in the line's ``strata`` object, then at the top
    level; absent values are ``None`` (the split treats them as ``__missing__``). Errors are
    ``gold.jsonl:LINE: ...``: no id, an id twice, ``strata`` not an object, a non-scalar value;
    a factor or group key that no line has is ``gold.jsonl: ...`` (a typo, not a factor whose
    every value is missing).
    """
    name = display_name(path)
    keys = [*factors, *([group_key] if group_key else [])]
    out: list[dict[str, Any]] = []
    first: dict[str, int] = {}
    available: set[str] = set()
    for line, obj in iter_jsonl(path):
        if id_key not in obj or obj[id_key] is None:
            raise InputError(f"no {id_key!r} (expected one id per sample)", path=name, line=line)
        raw = obj[id_key]
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            raise InputError(f"{id_key} {raw!r} is not a string or integer", path=name, line=line)
        sid = str(raw)
        if sid in first:
            raise InputError(
                f"id {sid!r} appears twice (first at line {first[sid]})", path=name, line=line
            )
        first[sid] = line
        strata = obj.get("strata")
        if strata is not None and not isinstance(strata, dict):
            raise InputError(
                'strata is not an object (expected {"factor": value, ...})', path=name, line=line
            )
        available.update(obj)
        if strata:
            available.update(strata)
        rec: dict[str, Any] = {"id": sid}
        for key in keys:
            if strata is not None and key in strata:
                value = strata[key]
                where = f"strata.{key}"
            else:
                value = obj.get(key)
                where = key
            rec[key] = _scalar(value, path=name, line=line, key=where)
        out.append(rec)
    for key in keys:
        if out and key not in available:
            known = sorted(available - {id_key, "strata"})
            raise InputError(_unknown_key(key, key == group_key, known), path=name)
    return out


def _unknown_key(key: str, is_group: bool, known: list[str]) -> str:
    from ragmeter.registry import suggest

    what = "group key" if is_group else "factor"
    did = suggest(key, known, n=1)
    hint = f"; did you mean '{did[0]}'?" if did else ""
    return f"no sample has the {what} '{key}' (expected one of {', '.join(known)}){hint}"
