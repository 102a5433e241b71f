"""The rows of an UltraRAG-style answers JSONL file, checked and converted one at a time.

``ragmeter answers`` reads the whole file with :class:`RowReader` in-process; under
``--executor dask`` each worker reads its own byte range with the same class, and the driver
merges what the workers saw with :func:`key_notes` and :func:`check_empty_golds` (the checks
that need the whole file), so both paths refuse the same input with the same line.
"""

from __future__ import annotations

from typing import Any

from ragmeter.answers.inputs import (
    Golds,
    answer_groups,
    coerce_golds,
    coerce_id,
    coerce_prediction,
    compile_gold_regex,
)
from ragmeter.answers.normalizers import normalize
from ragmeter.errors import InputError


class RowReader:
    """Checks and converts rows in file order; ``first_row`` is the index of the first row
    given (ids default to the row index in the whole file).

    A row that passes its id and duplicate checks leaves ``last_id`` set to ``(id, line)``
    even when a later check of the same row fails: the driver of a sharded read needs it to
    find an id repeated across shards on the very line of another error.
    """

    def __init__(
        self,
        name: str,
        options: Any,
        keys: dict[str, str | None],
        need_question: bool,
        first_row: int = 0,
    ) -> None:
        self.name = name
        self.o = options
        self.keys = keys
        self.need_question = need_question
        self.index = first_row
        self.ids: list[Any] = []
        self.preds: list[Any] = []
        self.golds: list[Golds] = []
        self.questions: list[str | None] = []
        self.lines: list[int] = []
        self.seen: dict[str, int] = {}
        self.empty_lines: list[tuple[int, str]] = []
        self.seen_keys: dict[str, None] = {}
        self.no_gold_key: list[int] = []
        self.no_pred_key: list[int] = []
        self.last_id: tuple[Any, int] | None = None

    def add(self, line: int, row: dict[str, Any]) -> None:
        """Check and convert one row (raises :class:`InputError` with its line)."""
        o, keys = self.o, self.keys
        where = {"path": self.name, "line": line}
        index = self.index
        self.index += 1
        self.seen_keys.update(dict.fromkeys(row))
        if keys["pred"] not in row:
            self.no_pred_key.append(line)
        if not keys["groups"] and o.gold_metrics and keys["gold"] not in row:
            self.no_gold_key.append(line)
        id_key = keys["id"]
        sid = coerce_id(row[id_key], **where) if id_key in row else index
        if str(sid) in self.seen:
            raise InputError(
                f"id {sid!r} appears again (first on line {self.seen[str(sid)]}; "
                "expected unique ids)",
                **where,
            )
        self.seen[str(sid)] = line
        self.last_id = (sid, line)
        pred, missing = coerce_prediction(row.get(keys["pred"]), **where)
        groups_key = keys["groups"]
        if groups_key:
            if groups_key not in row:
                raise InputError(
                    f"no '{groups_key}' (expected answer groups for str-em-alce)", **where
                )
            gold = coerce_golds(
                answer_groups(row[groups_key], groups_key, where), key=groups_key, **where
            )
        else:
            gold = coerce_golds(
                row.get(keys["gold"]), choices=row.get("choices"), key=keys["gold"], **where
            )
        if o.empty_gold == "error" and o.gold_metrics:
            self.empty_lines += [
                (line, g) for g in gold.flat if not normalize(g, profile=o.profile)
            ]
        if o.gold_regex:
            for g in gold.flat:
                compile_gold_regex(g, **where)
        q = row.get(keys["question"]) if keys["question"] else None
        if self.need_question and keys["question"] not in row:
            raise InputError(
                f"no '{keys['question']}' (expected the question for qa-similarity)", **where
            )
        question = None if q is None else coerce_prediction(q, **where)[0]
        self.preds.append(None if missing else pred)
        self.golds.append(gold)
        self.questions.append(question)
        self.ids.append(sid)
        self.lines.append(line)


def key_notes(
    name: str,
    keys: dict[str, str | None],
    file_keys: list[str],
    n_rows: int,
    no_gold_key: list[int],
    no_pred_key: list[int],
) -> list[str]:
    """A key that no row has is a misnamed key: refuse, naming the file's keys.

    Returns the warnings for keys that some rows lack.
    """
    absent = []
    if n_rows and len(no_gold_key) == n_rows:
        absent.append(("gold", keys["gold"]))
    if n_rows and len(no_pred_key) == n_rows:
        absent.append(("pred", keys["pred"]))
    if absent:
        shown = ", ".join(f"'{k}'" for k in file_keys[:12])
        more = f" and {len(file_keys) - 12} more" if len(file_keys) > 12 else ""
        what = " or ".join(f"'{key}'" for _, key in absent)
        flags = " and ".join(f"--{role}-key" for role, _ in absent)
        raise InputError(
            f"no row has {what} (the rows have {shown or 'no keys'}{more}; name the "
            f"{'keys' if len(absent) > 1 else 'key'} with {flags})",
            path=name,
        )
    notes = []
    for what, key, missing in (
        ("gold answers", keys["gold"], no_gold_key),
        ("prediction", keys["pred"], no_pred_key),
    ):
        if missing:
            n = len(missing)
            fate = "not scored (no_gold)" if what == "gold answers" else "scored as ''"
            notes.append(
                f"ragmeter answers: warning: {n} row{'s' if n > 1 else ''} of {name} "
                f"{'have' if n > 1 else 'has'} no '{key}' ({what}; first on line "
                f"{missing[0]}), {fate}"
            )
    return notes


def check_empty_golds(name: str, profile: str, empty_lines: list[tuple[int, str]]) -> None:
    """``--empty-gold error``: refuse the first gold answer that normalises to ''."""
    if not empty_lines:
        return
    first, gold = empty_lines[0]
    others = sorted({ln for ln, _ in empty_lines[1:]} - {first})
    also = f"; also on line {', '.join(map(str, others))}" if others else ""
    raise InputError(
        f"gold answer {gold!r} normalises to '' under the {profile} profile (expected "
        f"non-empty gold answers with --empty-gold error{also})",
        path=name,
        line=first,
    )


def finish(reader: RowReader) -> list[str]:
    """The whole-file checks after the last row of an in-process read; the key warnings."""
    notes = key_notes(
        reader.name,
        reader.keys,
        list(reader.seen_keys),
        len(reader.lines),
        reader.no_gold_key,
        reader.no_pred_key,
    )
    check_empty_golds(reader.name, reader.o.profile, reader.empty_lines)
    return notes
