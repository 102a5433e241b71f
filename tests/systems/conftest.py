"""Fixtures of the live-system tests: a small gold set and corpus (the first samples of the
example project), a config that calls the fake system, and a clean call counter."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO
from tests.systems import fake_system

EXAMPLE = REPO / "examples" / "heritage" / "data"
TASKS = {
    "retrieval": {"measures": ["nDCG@10", "RR"]},
    "answers": {"metrics": ["em", "f1"]},
    "grounded": {"k": 5},
    "ner": {},
    "classification": {"profile": "heritage"},
    "linking": {"k": [1, 5]},
}


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    fake_system.CALLS.clear()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with data/gold.jsonl (12 samples), data/corpus.jsonl; the working directory."""
    data = tmp_path / "data"
    data.mkdir()
    lines = (EXAMPLE / "gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "gold.jsonl").write_text("".join(lines[:12]), encoding="utf-8")
    shutil.copy(EXAMPLE / "corpus.jsonl", data / "corpus.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_config(
    folder: Path,
    systems: list[dict[str, Any]],
    *,
    tasks: dict[str, Any] | None = None,
    name: str = "ragmeter.yaml",
    **extra: Any,
) -> Path:
    """A ragmeter.yaml in ``folder`` for these systems (corpus given)."""
    data = {
        "project": "live",
        "dataset": {"path": "data/gold.jsonl", "corpus": "data/corpus.jsonl"},
        "systems": systems,
        "tasks": tasks if tasks is not None else TASKS,
        **extra,
    }
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def fake(kind: str = "SyncSystem", **extra: Any) -> dict[str, Any]:
    """A systems entry calling the fake module."""
    entry: dict[str, Any] = {
        "name": extra.pop("name", "fake"),
        "version": extra.pop("version", "1"),
        "call": f"tests.systems.fake_system:{kind}",
        "init": {"corpus": "data/corpus.jsonl", **extra.pop("init", {})},
    }
    entry.update(extra)
    return entry
