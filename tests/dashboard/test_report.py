"""The report's content (numbers checked against the values written) and its HTML: one
self-contained file, escaped, with a CSP that allows only its own inline script and style."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re

import numpy as np
import pytest
from markupsafe import escape

from ragmeter.report import build_report, render_report, write_report
from ragmeter.report.render import json_script, report_assets
from tests.dashboard.builders import IPREC, PAYLOADS, XSS_SCRIPT
from tests.helpers import invoke


@pytest.fixture(scope="module")
def view(project):
    return build_report(project.store, [project.evaluation.evaluation_id])


def _cells(view, task, metric):
    t = next(t for t in view["tasks"] if t["task"] == task)
    row = next(m for m in [*t["metrics"], *t["more_metrics"]] if m["metric"] == metric)
    return row


def test_header_runs_and_verdict(view, project):
    ev = project.evaluation
    assert [r["id"] for r in view["runs"]] == ev.run_ids
    assert [r["system"] for r in view["runs"]] == ["bm25-v3", "hybrid-v1", "dense-e5"]
    assert view["header"]["projects"] == ["heritage-rag"]
    assert view["header"]["datasets"] == [
        {"path": "data/gold.jsonl", "sha256": "d1" * 32, "split": None, "n_samples": 40}
    ]
    statuses = [r["gate_status"] for r in view["runs"]]
    assert view["header"]["verdict"] == ("fail" if "fail" in statuses else "pass")
    assert view["header"]["stratify_by"] == ["custodian_type", "country", "data_tier"]


def test_metric_tables_hold_the_stored_aggregates_and_mark_the_best(view, project):
    ev = project.evaluation
    row = _cells(view, "retrieval", "nDCG@10")
    for cell, rid in zip(row["cells"], ev.run_ids, strict=True):
        agg = ev.results[rid]["retrieval"].aggregates["nDCG@10"]
        assert (cell["value"], cell["n"], cell["ci_low"], cell["ci_high"]) == (
            agg.value,
            agg.n,
            agg.ci_low,
            agg.ci_high,
        )
    values = [c["value"] for c in row["cells"]]
    assert [c["best"] for c in row["cells"]] == [v == max(values) for v in values]
    retrieval = next(t for t in view["tasks"] if t["task"] == "retrieval")
    # the 11 IPrec points are left to the curve and the "more values" block
    assert [m["metric"] for m in retrieval["metrics"]] == ["nDCG@10", "RR", "P@5", "R@100"]
    assert [m["metric"] for m in retrieval["more_metrics"]] == IPREC
    judge = _cells(view, "judge", "faithfulness")
    dense = judge["cells"][2]
    assert dense["value"] is None and dense["reason"] == "no scored samples"
    steps = next(t for t in view["tasks"] if t["task"] == "steps")
    assert steps["runs"][0]["status"] == "skipped"
    assert "traces" in steps["runs"][0]["reason"]


def test_comparisons_are_the_stored_ones(view, project):
    ev = project.evaluation
    blocks = view["comparisons"]
    assert [(b["system"], b["baseline_system"]) for b in blocks] == [
        ("hybrid-v1", "bm25-v3"),
        ("dense-e5", "bm25-v3"),
    ]
    stored = {(c["task"], c["metric"]): c for c in ev.comparisons[ev.run_ids[1]]}
    for row in blocks[0]["rows"]:
        want = stored[(row["task"], row["metric"])]
        for k in ("mean_diff", "p_value", "p_adjusted", "effect_size", "ci_low", "ci_high"):
            assert row[k] == pytest.approx(want[k])
        expected = None
        if want["significant"]:
            expected = "better" if want["mean_diff"] > 0 else "worse"
        assert row["verdict"] == expected


def test_strata_tables_and_chart(view, project):
    ev = project.evaluation
    block = next(s for s in view["strata"] if s["task"] == "retrieval" and s["factor"] == "country")
    assert block["metrics"] == ["nDCG@10", "RR"]
    assert [lv["level"] for lv in block["levels"]] == ["BE", "DE", "NL"]
    strata = ev.results[ev.run_ids[1]]["retrieval"].strata["country"]
    de = block["levels"][1]["cells"]
    # cells: metric-major, then run
    assert de[1]["value"] == pytest.approx(strata["DE"]["nDCG@10"].value)
    assert de[1]["n"] == strata["DE"]["nDCG@10"].n
    chart = view["charts"][block["chart"]]
    assert chart["kind"] == "bars" and chart["categories"] == ["BE", "DE", "NL"]
    assert chart["series"][1]["values"][1] == pytest.approx(strata["DE"]["nDCG@10"].value)


def test_error_analysis_numbers(view, project):
    ev = project.evaluation
    errors = view["errors"]
    # status counts: judge parse_error / timeout rows, the skipped system's needs_llm
    rows = {(r["task"], r["metric"], r["system"]): r for r in errors["status_counts"]["rows"]}
    faith = rows[("judge", "faithfulness", "hybrid-v1")]["counts"]
    statuses = ev.results[ev.run_ids[1]]["judge"].statuses("faithfulness")
    assert faith == {s: list(statuses.values()).count(s) for s in set(statuses.values())}
    assert rows[("judge", "faithfulness", "dense-e5")]["counts"] == {"needs_llm": 40}
    assert "parse_error" in errors["status_counts"]["statuses"]
    # confusion matrix from the per-item details equals scikit-learn's
    from sklearn.metrics import confusion_matrix

    block = errors["confusion"][0]
    details = ev.results[ev.run_ids[0]]["classification"].samples.column("detail").to_pylist()
    gold = [json.loads(d)["gold"] for d in details]
    pred = [json.loads(d)["pred"] for d in details]
    assert block["matrix"] == confusion_matrix(gold, pred, labels=block["labels"]).tolist()
    assert block["labels"][-1] == "__INVALID__"
    assert [r["label"] for r in block["rows"]] == block["labels"][:-1]  # sentinel: column only
    assert block["errors"] == sum(g != p for g, p in zip(gold, pred, strict=True))
    assert block["top"][0]["count"] == max(t["count"] for t in block["top"])
    # NER kinds: the builder's per-document construction summed
    ner = errors["ner"]
    assert [k for k, _ in ner["kinds"]] == [
        "correct",
        "missed",
        "spurious",
        "wrong_type",
        "wrong_boundary",
        "wrong_both",
    ]
    totals = ev.records[ev.run_ids[0]]["ner_totals"]
    kinds = ner["runs"][0]["kinds"]
    assert kinds["correct"] == totals["strict"]["COR"]
    assert kinds["missed"] == totals["strict"]["MIS"]
    assert kinds["spurious"] == totals["strict"]["SPU"]
    assert kinds["wrong_type"] == totals["exact"]["COR"] - totals["strict"]["COR"]
    assert kinds["wrong_boundary"] == totals["type"]["COR"] - totals["strict"]["COR"]
    assert (
        sum(kinds[k] for k in ("wrong_type", "wrong_boundary", "wrong_both"))
        == totals["strict"]["INC"]
    )
    assert ner["runs"][0]["source"] == "per-document details"


def test_worst_samples_carry_inputs_gold_outputs_and_reasons(view, project):
    ev = project.evaluation
    block = next(w for w in view["errors"]["worst"] if w["name"] == "answers.f1")
    run = block["runs"][0]
    values = ev.results[ev.run_ids[0]]["answers"].values("f1")
    expected = sorted(values.items(), key=lambda kv: (kv[1], kv[0]))[:5]
    assert [(s["sample_id"], s["value"]) for s in run["samples"]] == expected
    first = run["samples"][0]
    assert first["input"].startswith("Wanneer is het")
    assert first["output"].startswith("Het werd opgericht in")
    judge = next(w for w in view["errors"]["worst"] if w["name"] == "judge.faithfulness")
    sample = judge["runs"][0]["samples"][0]
    assert sample["explanation"].endswith("statements are supported by the contexts.")
    assert sample["fields"]["statements"] == 4


def test_retrieval_distributions_and_pr_curve(view, project):
    ev = project.evaluation
    retrieval = view["retrieval"]
    dist = next(d for d in retrieval["distributions"] if d["metric"] == "nDCG@10")
    for series, rid in zip(dist["runs"], ev.run_ids, strict=True):
        scored = list(ev.results[rid]["retrieval"].values("nDCG@10").values())
        assert series["values"] == np.histogram(scored, bins=dist["edges"])[0].tolist()
    curve = retrieval["pr_curve"]
    assert curve["recall"] == [r / 10 for r in range(11)]
    for series, rid in zip(curve["runs"], ev.run_ids, strict=True):
        aggs = ev.results[rid]["retrieval"].aggregates
        assert series["values"] == [aggs[m].value for m in IPREC]
    # interpolated precision never rises with recall
    for series in curve["runs"]:
        assert all(a >= b for a, b in zip(series["values"], series["values"][1:], strict=False))


def test_engine_metadata_is_preferred(tmp_path):
    """Counts the engine stored in the task metadata win over counting the details."""
    from ragmeter.result import Aggregate, Result
    from ragmeter.store import RunRecord, TaskRecord, open_store

    meta = {
        "counts": {"strict": {"COR": 5, "INC": 3, "MIS": 2, "SPU": 1}, "partial": {"COR": 7}},
        "confusions": [["LOC", "ORG", 2]],
    }
    ner = Result("ner", None, {"overall.strict.f1": Aggregate(0.5, 3, {"ok": 3})}, metadata=meta)
    cls_meta = {"confusion_matrix": {"labels": ["A", "M"], "matrix": [[3, 1], [2, 4]]}}
    cls = Result("classification", None, {"accuracy": Aggregate(0.7, 10, {"ok": 10})})
    run = RunRecord(
        id="r1",
        evaluation_id="e",
        project="p",
        system="s",
        created_at=__import__("datetime").datetime(2025, 1, 1),
        config_hash="c",
        tasks=[
            TaskRecord("ner", "ok", metrics=["overall.strict.f1"], result=ner, metadata=meta),
            TaskRecord("classification", "ok", metrics=["accuracy"], result=cls, metadata=cls_meta),
        ],
    )
    with open_store(tmp_path / "s.db") as store:
        store.write([run])
        v = build_report(store, ["r1"])
    kinds = v["errors"]["ner"]["runs"][0]
    assert kinds["kinds"] == {
        "correct": 5,
        "missed": 2,
        "spurious": 1,
        "wrong_type": 2,
        "wrong_boundary_any": 1,
    }
    assert kinds["source"] == "engine"
    assert kinds["confusions"] == [{"gold": "LOC", "pred": "ORG", "count": 2}]
    cm = v["errors"]["confusion"][0]
    assert cm["matrix"] == [[3, 1], [2, 4]] and cm["source"] == "engine"
    assert [(t["gold"], t["pred"], t["count"]) for t in cm["top"]] == [("M", "A", 2), ("A", "M", 1)]


# -- the HTML -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def page(project):
    return render_report(project.store, [project.evaluation.evaluation_id])


def test_report_is_self_contained(page):
    # nothing is fetched: no src/href to another resource, no @import, no url() to a host
    refs = re.findall(
        r"<(?:script|img|iframe|link|audio|video|source)[^>]*\s(?:src|href)=\"([^\"]*)", page
    )
    assert refs == ["data:,"]  # the empty icon, so that no browser asks for /favicon.ico
    assert '<link rel="icon" href="data:,">' in page
    assert not re.search(r"url\((?!['\"]?data:)", page)
    assert "@import" not in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert "uPlot" in page and "ragmeter charts" in page


def test_report_csp_pins_its_inline_script_and_style(page):
    csp = html.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)[1]
    )
    script = re.search(r"<script>(.*?)</script>", page, re.S)[1]
    style = re.search(r"<style>(.*?)</style>", page, re.S)[1]

    def digest(text):
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}'" in csp
    assert f"style-src 'sha256-{digest(style)}'" in csp
    assert "default-src 'none'" in csp and "connect-src" not in csp
    assert report_assets()["csp"] == csp


def test_report_shows_every_section(page):
    for anchor in ("overview", "gates", "metrics", "comparisons", "strata", "errors", "retrieval"):
        assert f'id="{anchor}"' in page
    assert "Interpolated precision-recall curve" in page
    assert "NER errors by kind" in page
    assert "confusion matrix" in page
    assert page.count('data-chart="') == len(
        json.loads(
            html.unescape(re.search(r'id="ragmeter-charts">(.*?)</script>', page, re.S)[1]).replace(
                "\\u003c", "<"
            )
        )
    )


def test_payloads_are_escaped_everywhere(evil):
    page = render_report(evil.store, [evil.evaluation.evaluation_id])
    for payload in PAYLOADS:
        assert payload not in page
    assert str(escape(XSS_SCRIPT)) in page  # shown, as text
    assert "<img" not in page
    # every <script> element is ours: the inline bundle and the JSON block
    assert len(re.findall(r"<script[\s>]", page)) == 2
    block = re.search(
        r'<script type="application/json" id="ragmeter-charts">(.*?)</script>', page, re.S
    )
    data = json.loads(block[1])  # JSON.parse of the same text gives the labels back exactly
    labels = [s["label"] for spec in data.values() for s in spec["series"]]
    assert "hyb" + XSS_SCRIPT in labels


def test_json_script_escapes_every_breakout():
    payload = {"a": "</script><!-- <script>\u2028\u2029 & 'x'"}
    text = str(json_script(payload))
    for bad in ("<", ">", "&", "'", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == payload


def test_write_report_and_cli(project, tmp_path):
    out = write_report(project.url, ["latest"], tmp_path / "sub" / "r.html")
    assert out.exists() and "hybrid-v1" in out.read_text()
    res = invoke(
        "report",
        project.evaluation.run_ids[1],
        "--store",
        project.url,
        "-o",
        str(tmp_path / "one.html"),
        "--worst",
        "2",
    )
    assert res.code == 0, res.stderr
    assert res.stdout.strip() == str((tmp_path / "one.html").resolve())
    assert "wrote" in res.stderr and "(1 run," in res.stderr
    text = (tmp_path / "one.html").read_text()
    runs_table = text.split('<table class="runs">')[1].split("</table>")[0]
    assert runs_table.count("<tr>") == 2  # the header and the one run


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "ragmeter report: no run 'nope' in the store"),
        (["20250602"], "ragmeter report: run '20250602' is ambiguous"),
    ],
)
def test_cli_errors_are_one_line(project, tmp_path, args, message):
    res = invoke("report", *args, "--store", project.url, "-o", str(tmp_path / "x.html"))
    assert res.code == 2
    assert res.stderr.startswith(message) and res.stderr.count("\n") == 1
    assert not (tmp_path / "x.html").exists()


def test_cli_missing_store_and_bad_output(tmp_path, project):
    res = invoke("report", "latest", "--store", str(tmp_path / "none.db"))
    assert res.code == 2
    assert res.stderr == (
        f"ragmeter report: no results store at {tmp_path / 'none.db'} (ragmeter run writes one; "
        "or pass --store URL)\n"
    )
    assert not (tmp_path / "none.db").exists()
    res = invoke("report", "latest", "--store", project.url, "-o", str(tmp_path))
    assert res.code == 2 and "is a folder" in res.stderr
    res = invoke("report", "latest", "--store", project.url, "--worst", "0")
    assert res.code == 2


def test_report_and_pages_on_both_backends(any_store_url):
    """The same numbers from SQLite and from a real PostgreSQL server."""
    from ragmeter.store import open_store
    from ragmeter.web import pages
    from tests.dashboard.builders import THREE, write_evaluation, write_history

    with open_store(any_store_url) as store:
        old = write_history(store, weeks=1)[0]
        ev = write_evaluation(store, systems=THREE)
        v = build_report(store, [ev.evaluation_id])
        dist = next(d for d in v["retrieval"]["distributions"] if d["metric"] == "nDCG@10")
        scored = list(ev.results[ev.run_ids[0]]["retrieval"].values("nDCG@10").values())
        assert dist["runs"][0]["values"] == np.histogram(scored, bins=dist["edges"])[0].tolist()
        assert (
            v["errors"]["ner"]["runs"][0]["kinds"]["correct"]
            == (ev.records[ev.run_ids[0]]["ner_totals"]["strict"]["COR"])
        )
        run = pages.run_page(
            store, ev.run_ids[1], {"series": "judge.faithfulness", "q": "HTTP 429", "sort": "value"}
        )
        statuses = ev.results[ev.run_ids[1]]["judge"].statuses("faithfulness")
        assert run["samples"]["pager"]["total"] == list(statuses.values()).count("timeout")
        cmp = pages.compare_page(store, {"runs": f"{old.run_ids[1]},{ev.run_ids[1]}"})
        nd = next(r for r in cmp["rows"] if r["name"] == "retrieval.nDCG@10")["deltas"][0]
        assert nd["source"] == "ad hoc" and nd["n"] == 16
        trend = pages.trends_page(store, {"project": "heritage-rag", "metric": "answers.em"})
        assert len(trend["points"]) == 5
