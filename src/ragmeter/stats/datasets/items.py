"""Split items: id, group and stratification factor values, normalised (docs/stats.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError

__all__ = ["MISSING", "RARE", "Item", "factor_value", "prepare_items"]

MISSING = "__missing__"
"""The explicit value of a factor an item does not have."""
RARE = "__rare__"
"""The bucket that rare values are rewritten to (rare_policy="bucket")."""


@dataclass(frozen=True)
class Item:
    """One item to split: its id, its group (its own id when it has none) and factor values."""

    id: str
    group: str
    values: tuple[str, ...]  # one per factor, in factor order; MISSING when absent


def factor_value(value: Any, *, where: str) -> str:
    """The text of a factor value: strings as they are, other JSON scalars as JSON spells them.

    >>> factor_value(1, where="x"), factor_value(True, where="x"), factor_value("M", where="x")
    ('1', 'true', 'M')
    """
    if value is None:
        return MISSING
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if hasattr(value, "item") and not isinstance(value, (list, dict)):  # numpy scalars
        return factor_value(value.item(), where=where)
    raise InputError(
        f"value {value!r} is not a scalar (expected a string, number or boolean)", location=where
    )


def _lookup(record: Mapping[str, Any], key: str) -> Any:
    """``record[key]``, else ``record["strata"][key]`` (the gold format keeps factors there)."""
    if key in record:
        return record[key]
    strata = record.get("strata")
    if isinstance(strata, Mapping) and key in strata:
        return strata[key]
    return None


def prepare_items(
    items: Iterable[Mapping[str, Any] | Item],
    factors: Sequence[str],
    group_key: str | None,
) -> list[Item]:
    """Normalise records to :class:`Item`, sorted by id; ids must be unique."""
    out: list[Item] = []
    seen: set[str] = set()
    for pos, rec in enumerate(items):
        if isinstance(rec, Item):
            item = rec
        else:
            if not isinstance(rec, Mapping):
                raise InputError(
                    f"item is a {type(rec).__name__} (expected a mapping with an 'id')",
                    location=f"items[{pos}]",
                )
            if "id" not in rec or rec["id"] is None:
                raise InputError("item has no 'id'", location=f"items[{pos}]")
            raw_id = rec["id"]
            if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
                raise InputError(
                    f"id {raw_id!r} is not a string or integer", location=f"items[{pos}]"
                )
            iid = str(raw_id)
            group = None
            if group_key is not None:
                g = _lookup(rec, group_key)
                group = None if g is None else factor_value(g, where=f"item {iid!r}: {group_key}")
            values = tuple(
                factor_value(_lookup(rec, f), where=f"item {iid!r}: {f}") for f in factors
            )
            # an item without a group key forms its own group
            item = Item(iid, group if group is not None else f"\x00{iid}", values)
        if item.id in seen:
            raise InputError(f"id {item.id!r} appears twice (expected unique ids)")
        seen.add(item.id)
        out.append(item)
    out.sort(key=lambda it: it.id)
    return out
