"""Shared inputs of the ``ragmeter mcp`` tests: one work folder per session (the server's root)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from tests.helpers import CONFORMANCE, REPO

TREC = CONFORMANCE / "trec_eval"
STEPS = CONFORMANCE / "graphrag_eval" / "tests" / "test_data"
VECTORS = json.loads((CONFORMANCE / "answers" / "vectors.json").read_text(encoding="utf-8"))
HERITAGE = REPO / "examples" / "heritage"
FIXED_TIME = datetime(2026, 1, 2, 3, 4, 5)


def vector(group: str, vid: str) -> dict:
    return next(v for v in VECTORS[group] if v["id"] == vid)


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _reversed_run(src: Path, dst: Path) -> None:
    """results.test with every score negated: the same documents in reverse order."""
    lines = []
    for line in src.read_text(encoding="utf-8").splitlines():
        f = line.split()
        if len(f) >= 6:
            f[4] = repr(-float(f[4]))
            lines.append(" ".join(f))
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")


RUN_CONFIG = """\
project: mcp-test
dataset:
  path: heritage/data/gold.jsonl
systems:
  - name: bm25-v3
    outputs: {run: heritage/outputs/bm25.trec}
  - name: hybrid-v1
    outputs: {run: heritage/outputs/hybrid.trec}
tasks:
  retrieval: {measures: [nDCG@10, RR]}
compare: {baseline: bm25-v3}
gates:
  systems: [hybrid-v1]
  rules:
    - {metric: retrieval.nDCG@10, min: 0.99}
"""


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root with every input the tools read: trec_eval's test files, a reversed run,
    grounded-02, graphrag-eval's first reference and responses, and a tiny runner config."""
    root = tmp_path_factory.mktemp("mcp-root")
    for name in ("qrels.test", "results.test"):
        shutil.copy(TREC / name, root / name)
    _reversed_run(TREC / "results.test", root / "results.reversed")
    g = vector("grounded_vectors", "grounded-02")
    _jsonl(root / "gold.jsonl", g["gold"])
    _jsonl(root / "trace.jsonl", g["trace"])
    shutil.copy(STEPS / "reference_1.yaml", root / "reference_1.yaml")
    shutil.copy(STEPS / "actual_responses_1.jsonl", root / "responses_1.jsonl")
    (root / "bad.run").write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 1\n", encoding="utf-8")
    for sub in ("data", "outputs"):
        shutil.copytree(HERITAGE / sub, root / "heritage" / sub)
    (root / "ragmeter.yaml").write_text(RUN_CONFIG, encoding="utf-8")
    (root / "outside").mkdir()
    return root
