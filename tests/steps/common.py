"""Shared helpers of the steps tests: fixture paths, loaders, comparison with diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import CONFORMANCE

GE = CONFORMANCE / "graphrag_eval"
MAIN = GE / "tests" / "test_data"
LLM = GE / "tests-with-llm" / "test_data"
V5 = GE / "v5.1.2" / "tests" / "test_data"
V5_LLM = GE / "v5.1.2" / "tests-with-openai" / "test_data"
DOCS = GE / "docs" / "examples"

DEFAULT_ONLY_KEYS = frozenset(
    {
        "retrieval_ids_recall_at_k",
        "retrieval_ids_average_precision",
        "sparql_row_precision",
        "sparql_row_recall",
    }
)


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def read_responses(path: Path) -> dict[str, dict]:
    """A JSONL responses file as upstream's tests read it: a mapping by question_id."""
    out: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[record["question_id"]] = record
    return out


def strip_keys(value: Any, keys: frozenset[str] = DEFAULT_ONLY_KEYS) -> Any:
    if isinstance(value, dict):
        return {k: strip_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [strip_keys(v, keys) for v in value]
    return value


def drop_step_timestamps(records: list[dict]) -> list[dict]:
    out = []
    for r in records:
        r = dict(r)
        if "actual_steps" in r:
            r["actual_steps"] = [
                {k: v for k, v in s.items() if k != "execution_timestamp"}
                for s in r["actual_steps"]
            ]
        out.append(r)
    return out


def differences(actual: Any, expected: Any, path: str = "", limit: int = 10) -> list[str]:
    """Human-readable differences (for assertion messages), at most ``limit``."""
    out: list[str] = []

    def walk(a: Any, b: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in list(dict.fromkeys([*a, *b])):
                if k not in a:
                    out.append(f"{p}.{k}: missing (expected {b[k]!r:.80})")
                elif k not in b:
                    out.append(f"{p}.{k}: unexpected {a[k]!r:.80}")
                else:
                    walk(a[k], b[k], f"{p}.{k}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{p}: {len(a)} items, expected {len(b)}")
                return
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                walk(x, y, f"{p}[{i}]")
        elif a != b:
            out.append(f"{p}: {a!r:.80} != expected {b!r:.80}")

    walk(actual, expected, path)
    return out


def assert_same(actual: Any, expected: Any) -> None:
    assert actual == expected, "\n".join(differences(actual, expected))
