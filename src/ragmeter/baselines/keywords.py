"""Keyword type classifier: a keyword table per label, multilingual and compound-aware.

Texts and keywords are folded (NFKD, combining marks removed, ``casefold``) and split into word
tokens. A keyword matches a token that *contains* it (``rijksmuseum`` contains ``museum``), a
``=word`` keyword only an equal token, and a keyword of several words the same consecutive
tokens. A label scores the number of distinct keywords that matched; the highest score wins,
ties go to the label matched first in the text, then to the table's label order.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ragmeter.errors import InputError

__all__ = ["KeywordClassifier", "fold"]

_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """NFKD, combining marks removed, case-folded: ``Musée`` → ``musee``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@dataclass(frozen=True)
class _Keyword:
    text: str  # as written in the table (evidence)
    words: tuple[str, ...]  # folded
    whole: bool  # "=word": whole tokens only


def _parse_keyword(raw: str) -> _Keyword:
    whole = raw.startswith("=")
    words = tuple(_WORD.findall(fold(raw[1:] if whole else raw)))
    return _Keyword(raw, words, whole or len(words) > 1)


class KeywordClassifier:
    """A keyword table; ``predict`` gives ``{id, label, scores, matched}`` records and
    ``classify`` makes it a live system (``call: ragmeter.baselines:KeywordClassifier``)."""

    def __init__(
        self,
        table: str | os.PathLike[str] | Mapping[str, Any] = "heritage",
        *,
        multi_label: bool = False,
    ) -> None:
        if isinstance(table, Mapping):
            self._setup(table, None, None)
        else:
            self._load(table)
        self.multi_label = multi_label

    @classmethod
    def load(cls, table: str | os.PathLike[str] = "heritage", **kw: Any) -> KeywordClassifier:
        """The built-in ``heritage`` table or a YAML file."""
        return cls(table, **kw)

    def _load(self, table: str | os.PathLike[str]) -> None:
        from ragmeter.io.yamlmap import load_yaml

        if os.fspath(table) == "heritage":
            ref = resources.files("ragmeter.baselines") / "data" / "heritage_keywords.yaml"
            with resources.as_file(ref) as path:
                data, lines = load_yaml(path)
            self._setup(data, "heritage", lines)
        else:
            data, lines = load_yaml(table)
            self._setup(data, os.fspath(table), lines)

    def _setup(self, data: Any, path: str | None, lines: Any) -> None:
        def err(msg: str, *key: str | int) -> InputError:
            line = lines.line(key) if lines is not None else None
            return InputError(msg, path=path or "keywords", line=line)

        if not isinstance(data, Mapping):
            raise err("the keyword table is not a mapping (expected labels, keywords)")
        unknown = sorted(set(data) - {"name", "labels", "fallback", "keywords", "exclude"})
        if unknown:
            raise err(
                f"unknown key {unknown[0]!r} (expected name, labels, fallback, keywords, exclude)",
                unknown[0],
            )
        labels = data.get("labels")
        if (
            not isinstance(labels, list)
            or not labels
            or not all(isinstance(x, str) and x for x in labels)
        ):
            raise err("labels is not a list of label strings (expected e.g. [M, A, L])", "labels")
        self.name = str(data.get("name") or path or "keywords")
        self.labels: list[str] = list(labels)
        fallback = data.get("fallback")
        if fallback is not None and not isinstance(fallback, str):
            raise err("fallback is not a label (expected a label or null)", "fallback")
        self.fallback: str | None = fallback
        self.keywords: dict[str, list[_Keyword]] = {lab: [] for lab in self.labels}
        self.exclude: dict[str, set[str]] = {lab: set() for lab in self.labels}
        for section in ("keywords", "exclude"):
            block = data.get(section) or {}
            if not isinstance(block, Mapping):
                raise err(f"{section} is not a mapping (expected label: [words])", section)
            for label, words in block.items():
                if label not in self.keywords:
                    raise err(
                        f"{section} names label {label!r}, which is not in labels "
                        f"(expected one of {', '.join(self.labels)})",
                        section,
                        label,
                    )
                if not isinstance(words, list) or not all(
                    isinstance(w, str) and _WORD.search(w) for w in words
                ):
                    raise err(
                        f"{section}.{label} is not a list of words (expected [word, ...])",
                        section,
                        label,
                    )
                if section == "keywords":
                    self.keywords[label] = [_parse_keyword(w) for w in words]
                else:
                    self.exclude[label] = {fold(w.lstrip("=")) for w in words}

    def scores(self, text: str) -> tuple[dict[str, int], dict[str, list[str]], dict[str, int]]:
        """Per label: distinct keywords matched, the keywords, and the first match position."""
        tokens = _WORD.findall(fold(text))
        counts: dict[str, int] = {}
        matched: dict[str, list[str]] = {}
        first: dict[str, int] = {}
        for label in self.labels:
            skip = self.exclude[label]
            hits: list[str] = []
            pos = len(tokens)
            for kw in self.keywords[label]:
                at = _find(tokens, kw, skip)
                if at is not None:
                    hits.append(kw.text)
                    pos = min(pos, at)
            if hits:
                counts[label], matched[label], first[label] = len(hits), hits, pos
        return counts, matched, first

    def predict_one(self, text: str) -> dict[str, Any]:
        counts, matched, first = self.scores(text)
        ranked = sorted(counts, key=lambda lab: (-counts[lab], first[lab], self.labels.index(lab)))
        rec: dict[str, Any] = {"label": ranked[0] if ranked else self.fallback}
        if self.multi_label:
            rec["secondary_labels"] = ranked[1:]
        rec["scores"] = {lab: counts[lab] for lab in ranked}
        rec["matched"] = {lab: matched[lab] for lab in ranked}
        return rec

    def predict(self, items: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
        """``[(id, text)]`` → ``[{id, label, secondary_labels?, scores, matched}]``."""
        return [{"id": sid, **self.predict_one(text)} for sid, text in items]

    def classify(self, text: str) -> dict[str, Any]:
        """The live-system method: ``{primary_type, secondary_types}``."""
        rec = self.predict_one(text)
        return {"primary_type": rec["label"], "secondary_types": rec.get("secondary_labels", [])}


def _find(tokens: Sequence[str], kw: _Keyword, skip: set[str]) -> int | None:
    """Token index of the first match of ``kw``, or None."""
    n = len(kw.words)
    for i in range(len(tokens) - n + 1):
        if tokens[i] in skip:
            continue
        if n == 1 and not kw.whole:
            if kw.words[0] in tokens[i]:
                return i
        elif tuple(tokens[i : i + n]) == kw.words:
            return i
    return None
