"""The report of runs that were not stored (``ragmeter run --no-store --report``) is rendered from
their run records in memory: no database is opened, and the page is the one the same runs give
when read back from a store, apart from its footer (where the runs were read from, and when)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from markupsafe import escape

from ragmeter.report import build_report, write_evaluation_report
from ragmeter.report.render import render_report_html
from ragmeter.store import RunRecord, Store, open_store
from ragmeter.store.memory import NOT_STORED, MemoryReader
from tests.dashboard.builders import THREE, write_evaluation


class _Recording:
    """A store that also keeps the run records it was asked to write."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.runs: list[RunRecord] = []

    def write(self, runs: Sequence[RunRecord]) -> list[str]:
        self.runs.extend(runs)
        return self.store.write(runs)


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "evil"])
def both(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One evaluation of three systems on every task, written to a store and kept in memory."""
    root = tmp_path_factory.mktemp("memory")
    with open_store(f"sqlite:///{root / 'store.db'}") as store:
        rec = _Recording(store)
        ev = write_evaluation(rec, systems=THREE, evil=request.param)  # type: ignore[arg-type]
        stored = build_report(store, [ev.evaluation_id])
    memory = build_report(MemoryReader(rec.runs), [ev.evaluation_id])
    return SimpleNamespace(ev=ev, runs=rec.runs, stored=stored, memory=memory, url=store.url)


def test_the_view_from_memory_is_the_view_from_the_store(both):
    assert both.memory["store"] == NOT_STORED and both.stored["store"] == both.url
    mine = {k: v for k, v in both.memory.items() if k not in ("store", "generated_at")}
    theirs = {k: v for k, v in both.stored.items() if k not in ("store", "generated_at")}
    assert mine == theirs
    # what the comparison covers: every section, with real content
    assert [r["id"] for r in mine["runs"]] == both.ev.run_ids
    assert mine["errors"]["worst"] and mine["retrieval"]["distributions"]
    assert mine["comparisons"] and mine["strata"] and mine["gates"][0]["outcomes"]
    assert mine["retrieval"]["pr_curve"]["runs"]
    # the confusion matrix and NER errors counted from per-sample details, not stored totals
    assert {c["source"] for c in mine["errors"]["confusion"]} == {"per-item details"}
    assert {r["source"] for r in mine["errors"]["ner"]["runs"]} == {"per-document details"}


def test_the_html_differs_only_in_the_footer(both):
    same_footer = {**both.memory, "store": both.url, "generated_at": both.stored["generated_at"]}
    assert render_report_html(same_footer) == render_report_html(both.stored)
    html = render_report_html(both.memory)
    assert f"from {escape(NOT_STORED)}." in html and both.url not in html


def test_no_store_report_opens_no_database(both, tmp_path, monkeypatch):
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a report of runs that were not stored opened a database")

    monkeypatch.setattr(Store, "__init__", refuse)
    result = SimpleNamespace(
        saved={"results_dir": str(tmp_path)},
        run_ids={r.system: r.id for r in both.runs},
        run_records=lambda: both.runs,
    )
    path = write_evaluation_report(result)
    assert path == Path(tmp_path) / "report.html"
    text = path.read_text("utf-8")
    assert f"from {escape(NOT_STORED)}." in text
    assert "bm25-v3" in text and both.ev.sample_ids[5] in text
    assert list(tmp_path.iterdir()) == [path]  # nothing else written beside it


def test_unknown_runs_are_named(both):
    reader = MemoryReader(both.runs)
    assert reader.resolve("latest") == both.ev.run_ids
    assert reader.resolve(both.ev.run_ids[1]) == [both.ev.run_ids[1]]
    with pytest.raises(Exception, match="no run 'nope' in the evaluation's own results"):
        reader.resolve("nope")
