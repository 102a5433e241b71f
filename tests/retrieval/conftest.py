"""Shared helpers for the retrieval tests: write small TREC files, convert between input forms."""

from __future__ import annotations

from pathlib import Path

import pytest


def trec_run_text(rows, tag="r"):
    """rows: (qid, docno, score) → TREC run text with ranks in listed order."""
    out, rank = [], {}
    for q, d, s in rows:
        rank[q] = rank.get(q, 0) + 1
        out.append(f"{q} Q0 {d} {rank[q]} {s} {tag}\n")
    return "".join(out)


def trec_qrels_text(rows):
    return "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)


@pytest.fixture(params=["arrow", "small", "regular"])
def trec_parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per TREC parse path: Arrow's columnar parse, the plain parse of small
    files (ragmeter.io.trec.small) and the numpy parse of regular files (ragmeter.io.trec.regular,
    which leaves the others to Arrow): they must read and refuse inputs alike."""
    monkeypatch.setenv("RAGMETER_TREC_PARSER", request.param)
    return str(request.param)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) → path of a new file under tmp_path."""

    def _write(name: str, text: str | bytes) -> str:
        p = tmp_path / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8", newline="")
        return str(p)

    return _write


def pytest_collection_modifyitems(items):
    """Evaluations warn about skipped and ignored queries (RagmeterWarning, also recorded in
    Result.warnings); tests that check warnings use pytest.warns, the rest need not list them."""
    for item in items:
        item.add_marker(pytest.mark.filterwarnings("ignore::ragmeter.warnings.RagmeterWarning"))
