"""Shared inputs of the baseline tests: a seeded synthetic corpus and the example's files."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.helpers import REPO

EXAMPLE = REPO / "examples" / "heritage"
WORDS = [f"w{i}" for i in range(300)] + ["museum", "archive", "library", "the", "and", "of"]


def synthetic(seed: int, n_docs: int = 400, n_queries: int = 40):
    """Zipf-ish documents and queries drawn from them (ids zero-padded, some tied texts)."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    docs = []
    for i in range(n_docs):
        text = " ".join(rng.choices(WORDS, weights, k=rng.randint(3, 40)))
        docs.append({"id": f"d{i:04d}", "text": text})
    for i in range(0, n_docs, 50):  # duplicate texts: exact score ties
        docs[i + 1]["text"] = docs[i]["text"]
    queries = []
    for i in range(n_queries):
        words = rng.choice(docs)["text"].split()
        queries.append((f"q{i:03d}", " ".join(rng.sample(words, min(len(words), 4)))))
    return docs, queries


@pytest.fixture(scope="session")
def synth():
    return synthetic(7)


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
