"""Fixtures of the report and dashboard tests: stores written through ``ragmeter.store``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragmeter.store import Store, open_store
from tests.dashboard.builders import THREE, Evaluation, write_evaluation, write_history


@dataclass
class Project:
    store: Store
    url: str
    evaluation: Evaluation
    history: list[Evaluation]


def _project(root: Path, *, evil: bool) -> Project:
    url = f"sqlite:///{root / 'store.db'}"
    store = open_store(url)
    history = write_history(store)
    evaluation = write_evaluation(store, systems=THREE, evil=evil)
    return Project(store, url, evaluation, history)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """Five weekly evaluations (retrieval, answers) and one of three systems on every task."""
    p = _project(tmp_path_factory.mktemp("project"), evil=False)
    yield p
    p.store.close()


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """The same with XSS payloads in sample ids, system names, versions, tags, answers, judge
    explanations and type labels."""
    p = _project(tmp_path_factory.mktemp("evil"), evil=True)
    yield p
    p.store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store on SQLite and on a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_url")
