"""The dashboard's pages through Starlette's test client: HTML and JSON for every page, the
numbers they show, paging, errors, the read-only and security guarantees."""

from __future__ import annotations

import json

import numpy as np
import pytest
from starlette.testclient import TestClient

from ragmeter.report.render import url_id
from ragmeter.web import create_app, pages
from tests.dashboard.builders import XSS_IMG, XSS_SCRIPT

BASE = "http://127.0.0.1:8150"


@pytest.fixture(scope="module")
def client(project):
    return TestClient(create_app(project.store), base_url=BASE)


def run_url(run_id, *rest):
    return "/".join(["/runs", url_id(run_id), *(url_id(r) for r in rest)])


def test_every_page_answers_html_and_json(client, project):
    ev = project.evaluation
    rid = ev.run_ids[1]
    urls = [
        "/",
        run_url(rid),
        run_url(rid, "samples", ev.qids[2]),
        f"/compare?runs={ev.run_ids[0]},{rid}",
        "/trends?project=heritage-rag&metric=retrieval.nDCG@10",
    ]
    for url in urls:
        page = client.get(url)
        assert page.status_code == 200, (url, page.text[:300])
        assert page.headers["content-type"].startswith("text/html")
        path, _, query = url.partition("?")
        as_json = client.get(
            f"{path if path != '/' else '/index'}.json" + (f"?{query}" if query else "")
        )
        assert as_json.status_code == 200, url
        assert as_json.headers["content-type"] == "application/json"
        accept = client.get(url, headers={"accept": "application/json"})
        assert accept.json() == {**as_json.json(), **_volatile(accept.json())}
    assert client.get("/.json").json()["page_kind"] == "runs"


def _volatile(data):
    return {"generated_at": data["generated_at"]} if "generated_at" in data else {}


def test_runs_list_filters_and_headline_metrics(client, project):
    data = client.get("/index.json").json()
    assert data["pager"]["total"] == 13  # five weekly evaluations of 2 systems, one of 3
    newest = {r["id"] for r in data["runs"][:3]}
    assert newest == set(project.evaluation.run_ids)
    assert [h["name"] for h in data["headline"]][:2] == ["retrieval.nDCG@10", "answers.em"]
    run = next(r for r in data["runs"] if r["id"] == project.evaluation.run_ids[1])
    agg = project.evaluation.results[run["id"]]["retrieval"].aggregates["nDCG@10"]
    assert run["headline"][0]["value"] == agg.value
    assert client.get("/index.json?tag=candidate").json()["pager"]["total"] == 1
    assert client.get("/index.json?system=dense-e5").json()["runs"][0]["system"] == "dense-e5"
    assert client.get("/index.json?since=2025-06-01").json()["pager"]["total"] == 3
    assert client.get("/index.json?until=2025-05-05").json()["pager"]["total"] == 4
    paged = client.get("/index.json?per_page=5&page=3").json()
    assert paged["pager"] == {
        "page": 3,
        "per_page": 5,
        "total": 13,
        "pages": 3,
        "prev": 2,
        "next": None,
        "first_row": 11,
        "last_row": 13,
    }
    assert len(paged["runs"]) == 3
    html = client.get("/?per_page=5").text
    assert 'rel="next" href="?per_page=5&amp;page=2"' in html


def test_run_page_has_the_report_and_a_paged_sample_table(client, project):
    ev = project.evaluation
    rid = ev.run_ids[1]
    data = client.get(
        run_url(rid) + ".json?series=answers.f1&sort=value&order=desc&per_page=7"
    ).json()
    assert data["run"]["id"] == rid and [r["id"] for r in data["runs"]] == [rid]
    assert {"tasks", "comparisons", "strata", "errors", "retrieval", "gates"} <= set(data)
    table = data["samples"]
    assert table["selected"]["name"] == "answers.f1"
    values = ev.results[rid]["answers"].values("f1")
    statuses = ev.results[rid]["answers"].statuses("f1")
    expected = sorted(values.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    expected += sorted((i, None) for i, s in statuses.items() if s not in ("ok", "missing_zeroed"))
    got = []
    for page in range(1, 8):
        chunk = client.get(
            run_url(rid) + f".json?series=answers.f1&sort=value&order=desc&per_page=7&page={page}"
        ).json()["samples"]
        got.extend((r["sample_id"], r["value"]) for r in chunk["rows"])
    assert got == expected[: len(got)] and len(got) == len(expected) == 40
    hits = client.get(run_url(rid) + ".json?series=judge.faithfulness&q=HTTP 429").json()
    judge_statuses = ev.results[rid]["judge"].statuses("faithfulness")
    assert hits["samples"]["pager"]["total"] == list(judge_statuses.values()).count("timeout")
    assert all(r["reason"] == "HTTP 429 after 6 attempts" for r in hits["samples"]["rows"])
    asked = client.get(
        run_url(rid) + ".json?series=answers.f1&q=Museum Amsterdam&fields=all"
    ).json()
    assert asked["samples"]["pager"]["total"] > 0
    html = client.get(run_url(rid) + "?series=judge.faithfulness&status=parse_error").text
    assert "verdict count 3 != statements 4" in html
    assert 'id="samples"' in html and "Per-sample values" in html


def test_sample_page_shows_records_values_and_explanations(client, project):
    ev = project.evaluation
    rid = ev.run_ids[1]
    statuses = ev.results[rid]["judge"].statuses("faithfulness")
    qid = next(q for q, s in sorted(statuses.items()) if s == "ok")
    data = client.get(run_url(rid, "samples", qid) + ".json").json()
    tasks = {t["task"]: t for t in data["tasks"]}
    assert set(tasks) == {"retrieval", "answers", "judge"}
    faith = tasks["judge"]["values"][0]
    assert faith["metric"] == "faithfulness" and faith["status"] == "ok"
    assert faith["explanation"].endswith("statements are supported by the contexts.")
    assert tasks["answers"]["record"]["output"]["answer"].startswith("Het werd opgericht in")
    assert [v["metric"] for v in tasks["retrieval"]["values"]][:4] == [
        "nDCG@10",
        "RR",
        "P@5",
        "R@100",
    ]
    html = client.get(run_url(rid, "samples", qid)).text
    assert "statements are supported" in html and 'class="explanation"' in html


def test_compare_uses_stored_tests_and_computes_the_rest(client, project):
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    ev = project.evaluation
    base, cand = ev.run_ids[0], ev.run_ids[1]
    data = client.get(f"/compare.json?runs={base},{cand}").json()
    rows = {r["name"]: r for r in data["rows"]}
    stored = {f"{c['task']}.{c['metric']}": c for c in ev.comparisons[cand]}
    nd = rows["retrieval.nDCG@10"]["deltas"][0]
    assert nd["source"] == "stored"
    assert nd["p_adjusted"] == pytest.approx(stored["retrieval.nDCG@10"]["p_adjusted"])
    # reversed order: the stored comparison with its sign flipped
    rev = client.get(f"/compare.json?runs={cand},{base}").json()
    r_nd = next(r for r in rev["rows"] if r["name"] == "retrieval.nDCG@10")["deltas"][0]
    assert r_nd["mean_diff"] == pytest.approx(-nd["mean_diff"])
    assert (r_nd["ci_low"], r_nd["ci_high"]) == pytest.approx((-nd["ci_high"], -nd["ci_low"]))
    # the others: paired t on the common scored samples, Holm over the pair's ad-hoc tests
    adhoc = [r for r in data["rows"] if r["deltas"][0]["source"] == "ad hoc"]
    assert data["tests"]["ran"] is True and len(adhoc) > 5
    pvals = []
    for r in adhoc:
        a = ev.results[base][r["task"]].values(r["metric"])
        b = ev.results[cand][r["task"]].values(r["metric"])
        common = sorted(set(a) & set(b))
        ref = stats.ttest_rel([b[i] for i in common], [a[i] for i in common])
        d = r["deltas"][0]
        assert d["n"] == len(common)
        assert d["p_value"] == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-12)
        pvals.append(ref.pvalue)
    adjusted = multipletests(pvals, method="holm")[1]
    assert [r["deltas"][0]["p_adjusted"] for r in adhoc] == pytest.approx(list(adjusted))
    # a corpus-level value without per-sample rows gets the difference only
    macro = rows["classification.macro.f1"]["deltas"][0]
    assert macro["source"] == "difference" and macro["p_value"] is None
    assert macro["mean_diff"] == pytest.approx(
        ev.results[cand]["classification"].aggregates["macro.f1"].value
        - ev.results[base]["classification"].aggregates["macro.f1"].value
    )
    # runs of different evaluations compare too
    old = project.history[0].run_ids[1]
    cross = client.get(f"/compare.json?runs={old}&run={cand}").json()
    assert [r["id"] for r in cross["runs"]] == [old, cand]
    assert (
        next(r for r in cross["rows"] if r["name"] == "retrieval.nDCG@10")["deltas"][0]["source"]
        == "ad hoc"
    )
    assert "compare" in cross["charts"]


def test_compare_leaves_big_tests_for_a_request(client, project, monkeypatch):
    ev = project.evaluation
    monkeypatch.setattr(pages, "AUTO_TEST_ROWS", 10)
    url = f"/compare.json?runs={project.history[0].run_ids[1]},{ev.run_ids[1]}"
    data = client.get(url).json()
    assert data["tests"]["ran"] is False and data["tests"]["paired_rows"] > 10
    assert {r["deltas"][0]["source"] for r in data["rows"]} <= {"difference", None}
    assert client.get(url + "&tests=all").json()["tests"]["ran"] is True
    html = client.get(url.replace("/index.json", "/").replace(".json", "")).text
    assert 'id="run-tests"' in html and "tests=all" in html


def test_trends_points_are_labelled_with_versions(client, project):
    data = client.get("/trends.json?project=heritage-rag&metric=retrieval.nDCG@10").json()
    assert data["systems"] == ["bm25-v3", "hybrid-v1", "dense-e5"]
    assert len(data["points"]) == 13
    chart = data["charts"]["trend"]
    hybrid = chart["series"][1]
    versions = [p["system_version"] for p in data["points"] if p["system"] == "hybrid-v1"]
    assert [v for v in hybrid["point_labels"] if v] == versions
    assert chart["x"] == sorted(chart["x"])
    # a project alone lists its metrics
    form = client.get("/trends.json?project=heritage-rag").json()
    assert "retrieval.nDCG@10" in form["metrics"] and form["points"] == []
    bad = client.get("/trends.json?project=heritage-rag&metric=retrieval.nDCG10")
    assert bad.status_code == 400
    assert (
        "metric: no run of this project has a value of 'retrieval.nDCG10'; did you mean "
        "'retrieval.nDCG@10'" in bad.json()["error"]
    )


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("/runs/nope", 404, "no run 'nope'"),
        ("/runs/nope.json", 404, "no run 'nope'"),
        ("/index.json?page=0", 400, "page: 0 is out of range"),
        ("/index.json?per_page=x", 400, "per_page: 'x' is not a whole number"),
        ("/index.json?since=2025-13-01", 400, "since: '2025-13-01' is not a date"),
        ("/compare.json?runs=nope,other", 404, "no run 'nope'"),
        ("/compare.json?runs=RUN,PREFIX", 400, "name two or more different runs"),
        ("/trends.json?project=nope&metric=a.b", 404, "no project 'nope'"),
        ("/runs/RUN.json?sort=detail", 400, "sort: 'detail'"),
        ("/runs/RUN.json?series=answers.nope", 400, "has no per-sample values for 'answers.nope'"),
        ("/runs/RUN/samples/nope.json", 404, "has no sample 'nope'"),
        ("/runs/RUN/other/x", 404, "no page at"),
    ],
)
def test_errors_are_statuses_with_one_line(client, project, url, status, message):
    run = project.evaluation.run_ids[0]
    url = url.replace("PREFIX", run[:-2]).replace("RUN", url_id(run))
    r = client.get(url, headers={"accept": "application/json"})
    assert r.status_code == status, r.text[:200]
    assert message in r.json()["error"]
    html = client.get(url.replace("/index.json", "/").replace(".json", ""))
    assert html.status_code == status and "error-box" in html.text
    assert html.headers["content-type"].startswith("text/html")


def test_unknown_paths_get_the_error_page(client):
    r = client.get("/nowhere")
    assert r.status_code == 404 and "error-box" in r.text
    assert client.get("/nowhere", headers={"accept": "application/json"}).json() == {
        "error": "no page at /nowhere",
        "status": 404,
    }


def test_read_only_and_security_headers(client):
    for method in ("post", "put", "delete", "patch"):
        assert getattr(client, method)("/").status_code == 405
    r = client.get("/")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "style-src 'self'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["server-timing"].startswith("app;dur=")
    # a page of another site reaching the dashboard through DNS rebinding is refused
    assert client.get("/", headers={"host": "evil.example:8150"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:8150"}).status_code == 200
    assert client.get("/", headers={"host": "[::1]:8150"}).status_code == 200
    assert client.get("/static/vendor/uplot/uPlot.iife.min.js").status_code == 200
    assert client.get("/static/../../store/schema.py").status_code == 404


def test_public_binding_accepts_any_host(project):
    open_client = TestClient(create_app(project.store, allowed_hosts=None), base_url=BASE)
    assert open_client.get("/", headers={"host": "dashboard.lan"}).status_code == 200


def test_ids_with_slashes_and_json_suffixes(tmp_path):
    """Run and sample ids go in one URL segment each, percent-encoded, whatever they hold."""
    from datetime import datetime

    from ragmeter.result import Result
    from ragmeter.store import RunRecord, SampleRecord, TaskRecord, open_store

    ids = ["a/b", "c.json", "d#1?x=2", "e%2Ff", "f g"]
    res = Result.from_columns("answers", ids, {"em": [1.0, 0.0, 1.0, 0.0, 1.0]})
    recs = [SampleRecord(i, i, {}, {"input": {"question": i}}) for i in ids]
    with open_store(tmp_path / "s.db") as store:
        for rid in ("org/model-7b", "x.json", "y"):
            store.write(
                [
                    RunRecord(
                        id=rid,
                        evaluation_id=rid,
                        project="p",
                        system=rid,
                        created_at=datetime(2025, 1, 1),
                        config_hash="c",
                        tasks=[
                            TaskRecord("answers", "ok", metrics=["em"], result=res, records=recs)
                        ],
                    )
                ]
            )
        client = TestClient(create_app(store), base_url=BASE)
        assert client.get(run_url("org/model-7b")).status_code == 200
        assert client.get(run_url("org/model-7b") + ".json").json()["run"]["id"] == "org/model-7b"
        # "x.json" exists and "x" does not: the id wins over the suffix
        page = client.get("/runs/x.json")
        assert page.headers["content-type"].startswith("text/html") and "x.json" in page.text
        assert client.get("/runs/x.json.json").json()["run"]["id"] == "x.json"
        for sid in ids:
            r = client.get(run_url("org/model-7b", "samples", sid) + ".json")
            assert r.status_code == 200, sid
            assert r.json()["sample_id"] == sid
        html = client.get(run_url("org/model-7b") + "?series=answers.em").text
        for sid in ids:
            assert f'href="{run_url("org/model-7b", "samples", sid)}"' in html


def test_payloads_render_as_text(evil):
    client = TestClient(create_app(evil.store), base_url=BASE)
    ev = evil.evaluation
    rid = ev.run_ids[2]  # the system whose name, version and tags carry payloads
    for url in (
        "/",
        run_url(rid),
        run_url(rid, "samples", ev.qids[0]),
        run_url(rid, "samples", ev.sample_ids[1]),
        f"/compare?runs={url_id(ev.run_ids[0])},{url_id(rid)}",
        "/trends?project=heritage-rag&metric=retrieval.nDCG@10",
    ):
        r = client.get(url)
        assert r.status_code == 200, url
        assert XSS_SCRIPT not in r.text and XSS_IMG not in r.text and "<img" not in r.text
        assert "&lt;script&gt;" in r.text or "&lt;img" in r.text, url
    data = client.get(run_url(rid) + ".json").json()
    assert data["run"]["system"].endswith(XSS_SCRIPT)
    assert json.dumps(data)  # JSON keeps the text exactly, escaped by JSON rules


def test_pages_are_pure_functions_of_the_store(project):
    """The page builders need no server (what the app renders is what they return)."""
    data = pages.runs_page(project.store, {"per_page": "2"})
    assert len(data["runs"]) == 2 and data["pager"]["pages"] == 7
    cache = pages.ReportCache(size=1)
    first = pages.run_page(project.store, project.evaluation.run_ids[0], {}, cache=cache)
    again = pages.run_page(project.store, project.evaluation.run_ids[0], {"page": "2"}, cache=cache)
    assert first["tasks"] is again["tasks"]  # the report part came from the cache
    pages.run_page(project.store, project.evaluation.run_ids[1], {}, cache=cache)
    assert len(cache.entries) == 1
    assert np.isfinite(first["errors"]["confusion"][0]["total"])


def test_trends_resolve_aliases_through_the_registry(tmp_path):
    """A metric named by an alias finds the values stored under the canonical name."""
    from datetime import datetime, timedelta

    from ragmeter.result import Result
    from ragmeter.store import RunRecord, TaskRecord, open_store
    from tests.runner import toy

    toy.install()
    try:
        with open_store(tmp_path / "s.db") as store:
            for week, value in enumerate((3.0, 2.0)):
                res = Result.from_columns("toy", ["a", "b"], {"length": [value, value + 1]})
                store.write(
                    [
                        RunRecord(
                            id=f"r{week}",
                            evaluation_id=f"e{week}",
                            project="p",
                            system="s",
                            system_version=f"v{week}",
                            created_at=datetime(2025, 1, 1) + timedelta(days=7 * week),
                            config_hash="c",
                            tasks=[TaskRecord("toy", "ok", metrics=["length"], result=res)],
                        )
                    ]
                )
            data = pages.trends_page(store, {"project": "p", "metric": "toy.len"})
    finally:
        toy.uninstall()
    assert data["metric"] == "toy.length"
    assert [(p["value"], p["system_version"]) for p in data["points"]] == [(3.5, "v0"), (2.5, "v1")]
