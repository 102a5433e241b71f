"""Reading linking gold and predictions into per-mention records, keyed by mention id.

Gold maps a mention id to its KB ids (or NIL); a prediction is a ranked candidate list. Ids, not
surface strings or list positions, join the two sides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError
from ragmeter.records.errors import DuplicateMentionError
from ragmeter.records.kbids import NIL_ID, canonical_kb_id, is_nil_id
from ragmeter.records.model import Corpus, Span

__all__ = ["gold_mentions", "prediction_records"]


# -- inputs ------------------------------------------------------------------------------------
def _kb_set(value: Any, *, nil_id: str, where: str) -> tuple[frozenset[str], bool]:
    """(canonical id set, explicit NIL) of a gold value: an id, a list of ids, None or NIL."""
    if value is None or (isinstance(value, str) and is_nil_id(value, nil_id=nil_id)):
        return frozenset(), True
    if isinstance(value, str):
        return frozenset({canonical_kb_id(value, nil_id=nil_id)}), False
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        ids = set()
        for v in value:
            if not isinstance(v, str):
                raise InputError(f"KB id {v!r} is not a string", location=where)
            c = canonical_kb_id(v, nil_id=nil_id)
            if c is not None:
                ids.add(c)
        return frozenset(ids), not ids
    raise InputError(f"gold KB id {value!r} is not a string or a list of strings", location=where)


def _gold_record(rec: Mapping[str, Any], nil_id: str, where: str) -> tuple[str, frozenset[str]]:
    mid = rec.get("mention_id", rec.get("id"))
    if not isinstance(mid, str) or not mid:
        raise InputError("gold mention has no 'mention_id' (expected a string)", location=where)
    for key in ("kb_ids", "kb_id", "wikidata_id", "gold_wikidata", "gold_kb_id", "kb"):
        if key in rec:
            ids, _ = _kb_set(rec[key], nil_id=nil_id, where=f"{where}: mention '{mid}'")
            break
    else:
        ids = frozenset()
    if rec.get("nil") is True and ids:
        raise InputError(
            f"mention '{mid}' is marked NIL and has KB ids (expected one or the other)",
            location=where,
        )
    return mid, ids


def gold_mentions(gold: Any, *, nil_id: str = NIL_ID) -> dict[str, frozenset[str]]:
    """``mention_id -> acceptable canonical KB ids`` (empty = NIL) from a :class:`Corpus`, a
    sequence of :class:`Span` or records, or a mapping ``mention_id -> id | [ids] | None``."""
    out: dict[str, frozenset[str]] = {}

    def put(mid: str, ids: frozenset[str], where: str) -> None:
        if mid in out:
            raise DuplicateMentionError(
                f"gold mention id '{mid}' appears twice (expected one entry per mention id)",
                location=where,
            )
        out[mid] = ids

    if isinstance(gold, Corpus):
        for s in gold.iter_spans():
            put(s.mention_id, s.kb_ids, f"document '{s.doc_id}'")
        return out
    if isinstance(gold, Mapping):
        for mid, value in gold.items():
            if isinstance(value, Span):
                put(str(mid), value.kb_ids, f"mention '{mid}'")
            elif isinstance(value, Mapping):
                m, ids = _gold_record({"mention_id": str(mid), **value}, nil_id, f"mention '{mid}'")
                put(m, ids, f"mention '{mid}'")
            else:
                put(str(mid), _kb_set(value, nil_id=nil_id, where=f"mention '{mid}'")[0], "")
        return out
    for i, item in enumerate(gold):
        where = f"gold mention {i + 1}"
        if isinstance(item, Span):
            put(item.mention_id, item.kb_ids, where)
        elif isinstance(item, Mapping):
            mid, ids = _gold_record(item, nil_id, where)
            put(mid, ids, where)
        else:
            raise InputError(f"{item!r} is not a Span or a record", location=where)
    return out


@dataclass
class _Pred:
    candidates: list[str]  # canonical ids in rank order; nil_id marks a NIL candidate
    nil: bool | None
    duplicates_removed: int = 0


def _candidates(raw: Any, *, nil_id: str, where: str) -> tuple[list[str], int]:
    if raw is None:
        return [], 0
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, Iterable):
        raise InputError(
            f"candidates {raw!r} are not a list (expected [{{kb_id, score?}}, ...] or [ids])",
            location=where,
        )
    items = list(raw)
    ids: list[str] = []
    scores: list[float | None] = []
    for j, c in enumerate(items):
        if isinstance(c, str) or c is None:
            kb, score = c, None
        elif isinstance(c, Mapping):
            kb, score = c.get("kb_id", c.get("id")), c.get("score")
        else:
            raise InputError(
                f"candidate {j + 1} is {c!r} (expected {{kb_id, score?}})", location=where
            )
        if kb is not None and not isinstance(kb, str):
            raise InputError(
                f"candidate {j + 1} has kb_id {kb!r} (expected a string)", location=where
            )
        if score is not None:
            if (
                isinstance(score, bool)
                or not isinstance(score, (int, float))
                or not math.isfinite(score)
            ):
                raise InputError(
                    f"candidate {j + 1} has score {score!r} (expected a finite number)",
                    location=where,
                )
            score = float(score)
        canon = canonical_kb_id(kb, nil_id=nil_id)
        ids.append(nil_id if canon is None else canon)
        scores.append(score)
    has = [s is not None for s in scores]
    if any(has) and not all(has):
        raise InputError(
            "some candidates have a score and some do not (expected scores on all or none)",
            location=where,
        )
    if all(has) and ids:
        order = sorted(range(len(ids)), key=lambda j: -scores[j])  # stable: ties keep input order
        ids = [ids[j] for j in order]
    seen: set[str] = set()
    out: list[str] = []
    for kb in ids:
        if kb not in seen:
            seen.add(kb)
            out.append(kb)
    return out, len(ids) - len(out)


def prediction_records(pred: Any, *, nil_id: str = NIL_ID) -> dict[str, _Pred]:
    """``mention_id -> candidates and NIL flag`` from a mapping ``mention_id -> candidates`` (or
    ``-> {candidates, nil}``) or a sequence of records ``{mention_id, candidates, nil?}``.
    A second record for one mention id raises :class:`DuplicateMentionError`."""
    out: dict[str, _Pred] = {}

    def put(mid: Any, rec: Any, where: str) -> None:
        if not isinstance(mid, str) or not mid:
            raise InputError("prediction has no 'mention_id' (expected a string)", location=where)
        if mid in out:
            raise DuplicateMentionError(
                f"second prediction for mention '{mid}' (expected one candidate list per "
                "mention id; the heritage framework counted both, giving Hits@1 = 2.0)",
                location=where,
            )
        nil = None
        raw = rec
        if isinstance(rec, Mapping):
            raw = rec.get("candidates", [])
            nil = rec.get("nil", rec.get("is_nil", rec.get("is_nil_pred")))
            if nil is not None and not isinstance(nil, bool):
                raise InputError(f"'nil' is {nil!r} (expected true or false)", location=where)
        cands, dups = _candidates(raw, nil_id=nil_id, where=f"{where}: mention '{mid}'")
        out[mid] = _Pred(cands, nil, dups)

    if isinstance(pred, Mapping):
        for mid, rec in pred.items():
            put(str(mid), rec, f"prediction '{mid}'")
        return out
    for i, rec in enumerate(pred):
        where = f"prediction {i + 1}"
        if not isinstance(rec, Mapping):
            raise InputError(f"{rec!r} is not a record {{mention_id, candidates}}", location=where)
        put(rec.get("mention_id", rec.get("mention")), rec, where)
    return out
