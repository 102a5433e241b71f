"""Exact and fuzzy (rapidfuzz) entity linking against a user-supplied label file.

Mentions and names go through one normalisation: NFKC, rapidfuzz's ``default_process``
(lowercase, non-alphanumerics to spaces, trimmed), spaces collapsed, and optionally accents
folded. ``exact`` returns every entity with a name equal to the mention (score 1.0); ``fuzzy``
scores every mention against every name with ``rapidfuzz.process.cdist`` and an entity scores
its best name. Candidates are always written, so Hits@K and MRR do not depend on the NIL rule.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.baselines.inputs import Entity
from ragmeter.errors import UsageError

__all__ = ["SCORERS", "ExactLinker", "FuzzyLinker", "link_exact", "link_fuzzy", "normalise"]

SCORERS = ("token_sort_ratio", "ratio", "WRatio", "token_set_ratio")
CHUNK = 512  # mentions per cdist call: bounds memory, the result does not depend on it
HINT = "pip install 'ragmeter[baselines]'"


def _rapidfuzz() -> Any:
    try:
        import rapidfuzz
        from rapidfuzz import fuzz, process, utils  # noqa: F401
    except ImportError:
        from ragmeter.baselines.analyzers import MissingBaselinesExtra

        raise MissingBaselinesExtra(
            f"ragmeter baseline link: needs the baselines extra ({HINT})"
        ) from None
    return rapidfuzz


def normalise(text: str, *, fold_accents: bool = False) -> str:
    """The form mentions and names are compared in.

    >>> normalise("  Musée d'Orsay ")
    'musée d orsay'
    >>> normalise("Musée d'Orsay", fold_accents=True)
    'musee d orsay'
    """
    from rapidfuzz.utils import default_process

    text = unicodedata.normalize("NFKC", text)
    if fold_accents:
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    return " ".join(default_process(text).split())


def _candidate(ent: Entity, score: float, name: str) -> dict[str, Any]:
    return {"kb_id": ent.kb_id, "score": score, "matched_name": name}


class ExactLinker:
    """Normalised label/alias lookup (``call: ragmeter.baselines:ExactLinker``)."""

    def __init__(self, labels: Any, *, k: int = 10, fold_accents: bool = False) -> None:
        self.entities = _as_entities(labels)
        self.k, self.fold_accents = k, fold_accents
        self._table: dict[str, list[tuple[Entity, str]]] = {}
        for ent in self.entities:
            for name in ent.names:
                key = normalise(name, fold_accents=fold_accents)
                hits = self._table.setdefault(key, [])
                if all(e is not ent for e, _ in hits):
                    hits.append((ent, name))
        for hits in self._table.values():  # prior descending, then label-file order
            hits.sort(key=lambda h: (-h[0].prior, h[0].order))

    def link_one(self, mention: str) -> dict[str, Any]:
        hits = self._table.get(normalise(mention, fold_accents=self.fold_accents), [])
        cands = [_candidate(e, 1.0, n) for e, n in hits[: self.k]]
        return {"candidates": cands, "nil": not cands}

    def link(self, mention: str, *, context: str = "") -> dict[str, Any]:
        out = self.link_one(mention)
        return {
            "candidates": [{"kb_id": c["kb_id"], "score": c["score"]} for c in out["candidates"]],
            "nil": out["nil"],
        }

    def link_all(self, mentions: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """``[(mention_id, mention)]`` → ``[{mention_id, candidates, nil}]``."""
        return [{"mention_id": mid, **self.link_one(text)} for mid, text in mentions]


class FuzzyLinker:
    """rapidfuzz scoring against every name (``call: ragmeter.baselines:FuzzyLinker``)."""

    def __init__(
        self,
        labels: Any,
        *,
        k: int = 10,
        scorer: str = "token_sort_ratio",
        min_score: float = 0.60,
        nil_threshold: float = 0.85,
        fold_accents: bool = False,
        workers: int = -1,
    ) -> None:
        rf = _rapidfuzz()
        if scorer not in SCORERS:
            raise UsageError(f"--scorer {scorer!r} (expected one of {', '.join(SCORERS)})")
        self.entities = _as_entities(labels)
        self.k, self.min_score, self.nil_threshold = k, min_score, nil_threshold
        self.fold_accents, self.workers = fold_accents, workers
        self.scorer = getattr(rf.fuzz, scorer)
        self.names: list[str] = []
        self.keys: list[str] = []
        owner: list[int] = []
        for i, ent in enumerate(self.entities):
            for name in ent.names:
                self.names.append(name)
                self.keys.append(normalise(name, fold_accents=fold_accents))
                owner.append(i)
        self._starts = np.flatnonzero(np.r_[True, np.diff(np.asarray(owner)) != 0])
        # equal scores: prior descending, then file order (entities are in file order)
        self._prior = np.asarray([-e.prior for e in self.entities], dtype=np.float64)
        self._order = np.arange(len(self.entities))

    def _records(self, texts: Sequence[str]) -> list[dict[str, Any]]:
        from rapidfuzz import process

        out = []
        keys = [normalise(t, fold_accents=self.fold_accents) for t in texts]
        for lo in range(0, len(keys), CHUNK):
            block = process.cdist(
                keys[lo : lo + CHUNK],
                self.keys,
                scorer=self.scorer,
                processor=None,
                dtype=np.float64,
                workers=self.workers,
            )
            best = np.maximum.reduceat(block, self._starts, axis=1) / 100.0
            arg = _best_name(block, self._starts)
            for row, names in zip(best, arg, strict=True):
                keep = np.flatnonzero(row >= self.min_score)
                order = keep[np.lexsort((self._order[keep], self._prior[keep], -row[keep]))]
                cands = [
                    _candidate(self.entities[i], float(row[i]), self.names[names[i]])
                    for i in order[: self.k].tolist()
                ]
                nil = not cands or cands[0]["score"] < self.nil_threshold
                out.append({"candidates": cands, "nil": bool(nil)})
        return out

    def link(self, mention: str, *, context: str = "") -> dict[str, Any]:
        rec = self._records([mention])[0]
        return {
            "candidates": [{"kb_id": c["kb_id"], "score": c["score"]} for c in rec["candidates"]],
            "nil": rec["nil"],
        }

    def link_all(self, mentions: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        recs = self._records([t for _, t in mentions])
        return [{"mention_id": mid, **r} for (mid, _), r in zip(mentions, recs, strict=True)]


def _best_name(block: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per mention and entity, the index of the entity's first best-scoring name."""
    out = np.empty((block.shape[0], starts.size), dtype=np.int64)
    ends = np.r_[starts[1:], block.shape[1]]
    for j, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        out[:, j] = lo + np.argmax(block[:, lo:hi], axis=1)
    return out


def _as_entities(labels: Any) -> list[Entity]:
    from ragmeter.baselines.inputs import read_labels

    if isinstance(labels, (str, bytes)) or hasattr(labels, "__fspath__"):
        return read_labels(labels)
    ents = list(labels)
    if not all(isinstance(e, Entity) for e in ents):
        raise UsageError("labels must be a label file path or a list of Entity records")
    return ents


def link_exact(
    mentions: Sequence[tuple[str, str]], labels: Any, *, k: int = 10, fold_accents: bool = False
) -> list[dict[str, Any]]:
    """Exact links for ``[(mention_id, mention)]``."""
    return ExactLinker(labels, k=k, fold_accents=fold_accents).link_all(mentions)


def link_fuzzy(
    mentions: Sequence[tuple[str, str]],
    labels: Any,
    *,
    k: int = 10,
    scorer: str = "token_sort_ratio",
    min_score: float = 0.60,
    nil_threshold: float = 0.85,
    fold_accents: bool = False,
    workers: int = -1,
) -> list[dict[str, Any]]:
    """Fuzzy links for ``[(mention_id, mention)]``."""
    return FuzzyLinker(
        labels,
        k=k,
        scorer=scorer,
        min_score=min_score,
        nil_threshold=nil_threshold,
        fold_accents=fold_accents,
        workers=workers,
    ).link_all(mentions)
