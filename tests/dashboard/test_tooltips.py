"""Metric names in the report and the dashboard carry the registry's summary, formula and
citation as their hover text (the pages keep no text of their own about a metric)."""

from __future__ import annotations

import pytest
from markupsafe import escape
from starlette.testclient import TestClient

from ragmeter import registry
from ragmeter.report import build_report, render_report
from ragmeter.report.common import metric_info, tooltip
from ragmeter.report.render import url_id
from ragmeter.web import create_app

NDCG = registry.resolve("retrieval.nDCG@10").definition


def _title(text: str) -> str:  # escaped as the templates escape
    return f'title="{escape(text)}"'


def test_metric_info_reads_formula_and_citation_from_the_registry():
    info = metric_info("answers", "em")
    d = registry.resolve("answers.em").definition
    assert (info["formula"], info["citation"]) == (d.formula, d.citation)
    assert info["tooltip"] == f"{d.summary}\n= {d.formula}\n{d.citation}"
    # a key path the registry does not know has no hover text rather than a wrong one
    assert metric_info("answers", "no_such_metric")["tooltip"] == ""
    assert tooltip("s", "", "") == "s"


@pytest.fixture(scope="module")
def expected():
    info = metric_info("retrieval", "nDCG@10")
    assert NDCG.summary in info["tooltip"]
    return _title(info["tooltip"])


def test_report_metric_tables_show_the_formula(project, expected):
    view = build_report(project.store, [project.evaluation.evaluation_id])
    retrieval = next(t for t in view["tasks"] if t["task"] == "retrieval")
    row = next(m for m in retrieval["metrics"] if m["metric"] == "nDCG@10")
    assert row["tooltip"] == metric_info("retrieval", "nDCG@10")["tooltip"]
    page = render_report(project.store, [project.evaluation.evaluation_id])
    assert f'<span class="mono" {expected}>nDCG@10</span>' in page


def test_dashboard_compare_and_sample_pages_show_the_formula(project, expected):
    client = TestClient(create_app(project.store), base_url="http://127.0.0.1:8150")
    ev = project.evaluation
    page = client.get(f"/compare?runs={ev.run_ids[0]},{ev.run_ids[1]}").text
    assert f'<td class="mono" {expected}>retrieval.nDCG@10</td>' in page
    sample = client.get(
        "/".join(["/runs", url_id(ev.run_ids[1]), "samples", url_id(ev.qids[2])])
    ).text
    assert f'<td class="mono" {expected}>retrieval.nDCG@10</td>' in sample
