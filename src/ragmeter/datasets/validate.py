"""Every problem of a gold file at once (``ragmeter dataset validate``).

Loading (``ragmeter run``) stops at the first problem; validation goes on: every bad key, item,
span and QA pair of every sample, the duplicate sample ids and qids across samples (also of
samples that have other problems), and the type labels outside the label profile, each on its
own line ``FILE:LINE: sample 'ID': KEY.PATH: what is wrong (what was expected)``, so a gold set
can be fixed in one pass.
"""

from __future__ import annotations

import os
from typing import Any

from ragmeter.datasets.gold import (
    GoldSample,
    duplicate_errors,
    label_errors,
    load_gold,
    parse_sample,
)
from ragmeter.errors import InputError
from ragmeter.io.files import display_name
from ragmeter.io.jsonl import iter_jsonl

__all__ = ["validate_file"]


def validate_file(
    path: str | os.PathLike[str], *, fmt: str = "ragmeter", profile: Any = None
) -> tuple[list[str], int]:
    """``(problems, number of samples read)``; each problem is one line.

    ``profile`` (a :class:`~ragmeter.extraction.profiles.HierarchyProfile` or ``None``) is the
    label set gold type labels must come from.
    """
    name = display_name(path)
    if fmt != "ragmeter":
        try:
            gold = load_gold(path, fmt=fmt)
        except InputError as exc:
            return [str(exc)], 0
        samples = list(gold)
        return [str(e) for e in _label_errors(samples, profile, name)], len(gold)
    found: list[tuple[int, str]] = []  # (line, problem), sorted by line at the end
    samples: list[GoldSample] = []
    n = 0
    try:
        for line, obj in iter_jsonl(path):
            n += 1
            mine: list[str] = []
            try:
                samples.append(parse_sample(obj, path=name, line=line, problems=mine))
            except InputError as exc:  # no usable id: nothing else can be said of the sample
                mine.append(str(exc))
            found += [(line, m) for m in mine]
    except InputError as exc:  # a line that is not JSON stops the reader
        found.append((exc.line or 0, str(exc)))
    later = duplicate_errors(samples, name) + _label_errors(samples, profile, name)
    found += [(e.line or 0, str(e)) for e in later]
    found.sort(key=lambda item: item[0])  # stable: a sample's problems keep their order
    return [text for _, text in found], n


def _label_errors(samples: list[GoldSample], profile: Any, name: str) -> list[InputError]:
    return [] if profile is None else label_errors(samples, profile, name)
