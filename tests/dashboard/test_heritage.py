"""The report and the dashboard over a real run of ``examples/heritage`` (the runner writes the
store, not the test builders): what a user of the example sees."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from ragmeter.report.render import url_id
from ragmeter.report.view import build_report
from ragmeter.store import open_store
from ragmeter.web import create_app
from tests.helpers import REPO, invoke

EXAMPLE = REPO / "examples" / "heritage"
RECALL = [r / 10 for r in range(11)]


class Heritage:
    """The example run once into a SQLite store, plus retrieval-only variants of its config."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"sqlite:///{root / 'runs.db'}"
        self.ids = self.run(EXAMPLE / "ragmeter.yaml", "--report")
        self.report = next((root / "results").glob("*/report.html"))

    def run(self, config: Path, *extra: str) -> list[str]:
        res = invoke(
            "run",
            str(config),
            "--store",
            self.url,
            "--results-dir",
            str(self.root / "results"),
            "--no-cache",
            "--quiet",
            *extra,
        )
        assert res.code == 0, res.stderr
        with open_store(self.url) as store:
            return store.resolve("latest")

    def variant(self, name: str, retrieval: dict[str, Any], **top: Any) -> list[str]:
        """A retrieval-only copy of the example with these task options (absolute paths)."""
        cfg = yaml.safe_load((EXAMPLE / "ragmeter.yaml").read_text(encoding="utf-8"))
        cfg["dataset"]["path"] = str(EXAMPLE / cfg["dataset"]["path"])
        for s in cfg["systems"]:
            s["outputs"] = {"run": str(EXAMPLE / s["outputs"]["run"])}
        cfg["tasks"] = {"retrieval": retrieval}
        cfg.pop("gates")
        cfg.update(top)
        path = self.root / f"{name}.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        return self.run(path)


@pytest.fixture(scope="module")
def heritage(tmp_path_factory: pytest.TempPathFactory) -> Heritage:
    return Heritage(tmp_path_factory.mktemp("heritage"))


@pytest.fixture(scope="module")
def client(heritage: Heritage):
    with open_store(heritage.url) as store:
        yield TestClient(create_app(store), base_url="http://127.0.0.1:8150")


def _stored_curve(url: str, run_id: str) -> list[float]:
    with open_store(url) as store:
        task = next(t for t in store.tasks(run_id) if t["task"] == "retrieval")
    curve = task["metadata"]["pr_curve"]
    assert curve["recall"] == RECALL
    return curve["precision"]


def test_the_runner_stores_the_curve_as_task_metadata_not_as_metrics(heritage):
    with open_store(heritage.url) as store:
        for rid in heritage.ids:
            names = {m["metric"] for m in store.metrics(rid) if m["task"] == "retrieval"}
            assert names == {"nDCG@10", "RR", "R@10", "P@5"}  # no IPrec@r in table or gates
            assert not [x for x in store.sample_values(rid, "retrieval", "IPrec@0.5").values() if x]
    for rid in heritage.ids:
        precision = _stored_curve(heritage.url, rid)
        assert all(0 <= p <= 1 for p in precision)
        assert precision == sorted(precision, reverse=True)  # interpolated: non-increasing
        assert precision[0] > precision[-1]


def test_explicit_iprec_measures_equal_the_stored_curve(heritage):
    ids = heritage.variant("iprec", {"measures": ["nDCG@10", *(f"IPrec@{r:.1f}" for r in RECALL)]})
    with open_store(heritage.url) as store:
        for rid in ids:
            values = {
                m["metric"]: m["value"] for m in store.metrics(rid) if m["task"] == "retrieval"
            }
            asked = [values[f"IPrec@{r:.1f}"] for r in RECALL]
            assert asked == pytest.approx(_stored_curve(heritage.url, rid), abs=1e-12)
        view = build_report(store, ids)
    # the curve of the example's own run (IPrec not asked) has the same points
    for rid, base in zip(ids, heritage.ids, strict=True):
        assert _stored_curve(heritage.url, base) == pytest.approx(
            _stored_curve(heritage.url, rid), abs=1e-12
        )
    curve = view["retrieval"]["pr_curve"]
    assert curve["recall"] == RECALL and len(curve["runs"]) == 2


def test_a_partial_iprec_request_still_draws_all_eleven_points(heritage):
    ids = heritage.variant("one-point", {"measures": ["IPrec@0.5"]})
    with open_store(heritage.url) as store:
        assert {m["metric"] for m in store.metrics(ids[0])} == {"IPrec@0.5"}
        view = build_report(store, ids)
    curve = view["retrieval"]["pr_curve"]
    assert curve["recall"] == RECALL
    assert [s["values"] for s in curve["runs"]] == [_stored_curve(heritage.url, r) for r in ids]


def test_the_report_of_the_example_draws_the_pr_curve(heritage):
    with open_store(heritage.url) as store:
        view = build_report(store, heritage.ids)
    curve = view["retrieval"]["pr_curve"]
    assert curve is not None
    assert curve["recall"] == RECALL
    assert [s["label"] for s in curve["runs"]] == ["bm25-v3", "hybrid-v1"]
    assert [s["values"] for s in curve["runs"]] == [
        _stored_curve(heritage.url, r) for r in heritage.ids
    ]
    chart = view["charts"][curve["chart"]]
    assert chart["kind"] == "lines" and chart["x"] == RECALL
    html = heritage.report.read_text(encoding="utf-8")
    assert "Interpolated precision-recall curve" in html
    assert f'data-chart="{curve["chart"]}"' in html


def test_the_run_page_of_the_example_draws_the_pr_curve(heritage, client):
    for rid in heritage.ids:
        data = client.get(f"/runs/{url_id(rid)}.json").json()
        curve = data["retrieval"]["pr_curve"]
        assert curve["runs"][0]["values"] == _stored_curve(heritage.url, rid)
        assert data["charts"][curve["chart"]]["kind"] == "lines"
        page = client.get(f"/runs/{url_id(rid)}").text
        assert "Interpolated precision-recall curve" in page
        assert f'data-chart="{curve["chart"]}"' in page


NO_CI = "no CI (set compare.ci: bca)"


def test_comparisons_without_compare_ci_say_why_they_have_no_ci(heritage, client):
    with open_store(heritage.url) as store:
        view = build_report(store, heritage.ids)
    (block,) = view["comparisons"]
    assert block["rows"] and all(c["ci_low"] is None for c in block["rows"])
    assert {c["ci_reason"] for c in block["rows"]} == {NO_CI}
    html = heritage.report.read_text(encoding="utf-8")
    cells = re.findall(r'<td class="num ci">(.*?)</td>', html)
    assert len(cells) == len(block["rows"])
    assert all(NO_CI in cell for cell in cells)
    bm25, hybrid = heritage.ids
    data = client.get(f"/compare.json?runs={bm25},{hybrid}").json()
    stored = [r["deltas"][0] for r in data["rows"] if r["deltas"][0]["source"] == "stored"]
    assert stored and {d["ci_reason"] for d in stored} == {NO_CI}
    page = client.get(f"/compare?runs={bm25},{hybrid}").text
    assert page.count(NO_CI) == len(stored)


def test_comparisons_with_compare_ci_show_the_bootstrap_ci(heritage, client):
    cfg = yaml.safe_load((EXAMPLE / "ragmeter.yaml").read_text(encoding="utf-8"))
    ids = heritage.variant(
        "ci", {"measures": ["nDCG@10", "RR"]}, compare={**cfg["compare"], "ci": "bca"}
    )
    with open_store(heritage.url) as store:
        view = build_report(store, ids)
    (block,) = view["comparisons"]
    assert {c["metric"] for c in block["rows"]} == {"nDCG@10", "RR"}
    for c in block["rows"]:
        assert c["ci_reason"] is None
        assert c["ci_low"] < c["mean_diff"] < c["ci_high"]
    page = client.get(f"/compare?runs={ids[0]},{ids[1]}").text
    assert NO_CI not in page
    deltas = client.get(f"/compare.json?runs={ids[0]},{ids[1]}").json()["rows"]
    assert all(r["deltas"][0]["ci_reason"] is None for r in deltas)
