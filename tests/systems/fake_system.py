"""A fake system under test with every protocol method, in sync, async, slow and failing
variants. Deterministic: each answer depends only on the arguments. ``CALLS`` counts calls per
method in this process; ``log=PATH`` also appends one line per finished call to a file (for
tests that run ragmeter in a subprocess)."""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

CALLS: Counter[str] = Counter()

_WORD = re.compile(r"\w+")
_CAPS = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _WORD.findall(text)}


class SyncSystem:
    """Lexical retrieval over a corpus, first-context answers, capitalised-word entities."""

    def __init__(self, corpus: str | None = None, log: str | None = None, delay: float = 0.0):
        self.docs: dict[str, set[str]] = {}
        if corpus:
            for line in Path(corpus).read_text(encoding="utf-8").splitlines():
                if line.strip():
                    doc = json.loads(line)
                    self.docs[doc["id"]] = _tokens(doc["text"])
        self.log = log
        self.delay = delay

    def _count(self, method: str, arg: str) -> None:
        CALLS[method] += 1
        if self.log:
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps([method, arg]) + "\n")

    def _retrieve(self, question: str, k: int) -> list[tuple[str, float]]:
        q = _tokens(question)
        scored = [(d, float(len(q & toks))) for d, toks in self.docs.items() if q & toks]
        scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:k]

    def retrieve(self, question: str, *, k: int) -> list[tuple[str, float]]:
        time.sleep(self.delay)
        out = self._retrieve(question, k)
        self._count("retrieve", question)
        return out

    def answer(self, question: str, *, contexts: list[dict[str, Any]]) -> dict[str, Any]:
        time.sleep(self.delay)
        self._count("answer", question)
        if not contexts:
            return {"answer": None}
        first = contexts[0]
        return {"answer": first.get("text", first["id"]), "citations": [first["id"]]}

    def extract_entities(self, text: str) -> list[dict[str, Any]]:
        time.sleep(self.delay)
        self._count("extract_entities", text)
        return [{"start": m.start(), "end": m.end(), "type": "TOP"} for m in _CAPS.finditer(text)]

    def classify(self, text: str) -> str:
        time.sleep(self.delay)
        self._count("classify", text)
        if "Museum" in text or "museum" in text:
            return "M"
        return "A" if "rchi" in text else "L"

    def link(self, mention: str, *, context: str) -> dict[str, Any]:
        time.sleep(self.delay)
        self._count("link", mention)
        return {"candidates": [{"kb_id": f"Q{sum(map(ord, mention))}", "score": 0.9}], "nil": False}


class AsyncSystem(SyncSystem):
    """The same answers from ``async def`` methods."""

    async def retrieve(self, question: str, *, k: int) -> list[tuple[str, float]]:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        out = self._retrieve(question, k)
        self._count("retrieve", question)
        return out

    async def answer(self, question: str, *, contexts: list[dict[str, Any]]) -> dict[str, Any]:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return SyncSystem.answer(self, question, contexts=contexts)

    async def extract_entities(self, text: str) -> list[dict[str, Any]]:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return SyncSystem.extract_entities(self, text)

    async def classify(self, text: str) -> str:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return SyncSystem.classify(self, text)

    async def link(self, mention: str, *, context: str) -> dict[str, Any]:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return SyncSystem.link(self, mention, context=context)


class FailingSystem(SyncSystem):
    """Raises for questions that contain ``fail_word``, returns a NaN score for those with
    ``nan_word``, and a span outside the text for texts that contain ``bad_span_word``."""

    def __init__(self, fail_word: str = "", nan_word: str = "", bad_span_word: str = "", **kw):
        super().__init__(**kw)
        self.fail_word, self.nan_word, self.bad_span_word = fail_word, nan_word, bad_span_word

    def retrieve(self, question: str, *, k: int) -> list[tuple[str, float]]:
        if self.fail_word and self.fail_word in question:
            self._count("retrieve", question)
            raise RuntimeError(f"index offline\nsecond line for {question}")
        out = super().retrieve(question, k=k)
        if self.nan_word and self.nan_word in question and out:
            return [(out[0][0], math.nan), *out[1:]]
        return out

    def extract_entities(self, text: str) -> list[dict[str, Any]]:
        out = super().extract_entities(text)
        if self.bad_span_word and self.bad_span_word in text:
            return [*out, {"start": len(text) - 1, "end": len(text) + 5, "type": "TOP"}]
        return out


class OnlyClassify:
    """A system with one method."""

    def classify(self, text: str) -> str:
        CALLS["classify"] += 1
        return "M"


class Hangs(SyncSystem):
    """A classify that never returns in time."""

    def classify(self, text: str) -> str:
        time.sleep(self.delay)
        return "M"


class AsyncHangs(SyncSystem):
    """An async classify that never returns in time, and an async link that raises."""

    async def classify(self, text: str) -> str:  # type: ignore[override]
        await asyncio.sleep(self.delay)
        return "M"

    async def link(self, mention: str, *, context: str) -> dict[str, Any]:  # type: ignore[override]
        raise KeyError(mention)


class EmptyRetriever:
    """Finds nothing, answers anyway."""

    def retrieve(self, question: str, *, k: int) -> list[tuple[str, float]]:
        return []

    def answer(self, question: str, *, contexts: list[dict[str, Any]]) -> str:
        CALLS["answer"] += 1
        assert contexts == []
        return "1888"


def make_system(**kwargs: Any) -> SyncSystem:
    """A factory function (call: tests.systems.fake_system:make_system)."""
    return SyncSystem(**kwargs)


INSTANCE = SyncSystem()

NOT_A_SYSTEM = 42
