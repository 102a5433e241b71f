"""Every problem of a gold file at once (``ragmeter dataset validate``).

Loading stops at the first problem; validation goes on, reporting the first problem of every
sample and the duplicate ids across samples, so a gold set can be fixed in one pass.
"""

from __future__ import annotations

import os

from ragmeter.datasets.gold import GoldSample, load_gold, parse_sample
from ragmeter.errors import InputError
from ragmeter.io.files import display_name
from ragmeter.io.jsonl import iter_jsonl

__all__ = ["validate_file"]


def validate_file(path: str | os.PathLike[str], *, fmt: str = "ragmeter") -> tuple[list[str], int]:
    """``(problems, number of samples read)``; each problem is one line."""
    name = display_name(path)
    if fmt != "ragmeter":
        try:
            gold = load_gold(path, fmt=fmt)
        except InputError as exc:
            return [str(exc)], 0
        return [], len(gold)
    problems: list[str] = []
    samples: list[GoldSample] = []
    n = 0
    try:
        for line, obj in iter_jsonl(path):
            n += 1
            try:
                samples.append(parse_sample(obj, path=name, line=line))
            except InputError as exc:
                problems.append(str(exc))
    except InputError as exc:  # a line that is not JSON stops the reader
        problems.append(str(exc))
    seen: dict[str, int | None] = {}
    qids: dict[str, int | None] = {}
    for s in samples:
        if s.id in seen:
            problems.append(
                str(
                    InputError(
                        f"sample id {s.id!r} appears twice (first at line {seen[s.id]})",
                        path=name,
                        line=s.line,
                    )
                )
            )
        seen.setdefault(s.id, s.line)
        for qa in s.qa_pairs:
            if qa.qid in qids:
                problems.append(
                    str(
                        InputError(
                            f"qid {qa.qid!r} appears twice (first at line {qids[qa.qid]})",
                            path=name,
                            line=s.line,
                        )
                    )
                )
            qids.setdefault(qa.qid, s.line)
    return problems, n
