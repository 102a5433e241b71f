"""The dashboard and the report in a real browser (``docs/dashboard.md``, "Security"): Debian's
chromium driven by Playwright. Every page opens and draws its charts, navigation works from
the runs list to a run to a sample and through compare, XSS payloads in ids, system names and
answers render as text and run nothing, and no request leaves for another host. Screenshots go
to ``tests/artifacts/`` (ignored by git)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.report import write_report
from ragmeter.report.render import url_id
from tests.dashboard import browser
from tests.dashboard.builders import XSS_CLOSE, XSS_IMG, XSS_SCRIPT, write_evaluation
from tests.helpers import REPO, require_system

pytestmark = pytest.mark.system

ARTIFACTS = REPO / "tests" / "artifacts"


@pytest.fixture(scope="module")
def context() -> Iterator[object]:
    reason = browser.chromium_available()
    require_system(reason is None, reason or "")
    with browser.browser_context() as ctx:
        yield ctx


@pytest.fixture(scope="module")
def server(evil) -> Iterator[str]:
    from ragmeter.web import create_app

    with browser.serve(create_app(evil.store)) as url:
        yield url


@pytest.fixture
def page(context, server):
    guard = browser.Guard(allowed_origin=server)
    browser_page = context.new_page()
    browser_page.route("**/*", guard.route)
    guard.watch(browser_page)
    yield browser_page, guard
    browser_page.close()
    assert guard.blocked == [], f"requests to other hosts: {guard.blocked}"
    assert guard.dialogs == [], f"a payload ran: {guard.dialogs}"
    assert guard.page_errors == [], guard.page_errors
    assert guard.console_errors == [], guard.console_errors


def shot(p, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(ARTIFACTS / f"dashboard-{name}.png"), full_page=True)


def no_injected_markup(p) -> None:
    """Nothing the payloads carry became an element or a handler."""
    assert p.locator("img").count() == 0
    scripts = p.locator("script").evaluate_all(
        "els => els.map(e => e.src || e.type || 'inline:' + e.textContent.slice(0, 40))"
    )
    ours = (".js", "application/json", "inline:/*! https://github.com/leeoniya/uPlot")
    assert all(s.endswith(ours[:2]) or s.startswith(ours[2]) for s in scripts), scripts
    handlers = p.evaluate(
        "() => [...document.querySelectorAll('*')].filter(e => [...e.attributes]"
        ".some(a => a.name.startsWith('on'))).length"
    )
    assert handlers == 0


def fits_the_viewport(p) -> None:
    """No horizontal page scroll: wide tables scroll inside their own box."""
    width, viewport = p.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, (p.url, width, viewport)


def test_runs_list_to_run_to_sample(page, server, evil):
    p, guard = page
    ev = evil.evaluation
    p.goto(server + "/")
    assert p.title() == "runs · ragmeter"
    assert p.locator("table.runs-list tbody tr").count() == 13
    assert p.locator("table.runs-list th.headline").count() >= 4  # many metric columns...
    fits_the_viewport(p)  # ...and the page stays the viewport's width
    shot(p, "runs")
    # the run whose system name carries the payloads: its link text is the literal id
    evil_run = ev.run_ids[2]
    link = p.locator("a.run-link", has_text=XSS_SCRIPT)
    assert link.count() == 1 and link.inner_text() == evil_run
    assert XSS_SCRIPT in p.locator("body").inner_text()
    no_injected_markup(p)
    link.click()
    p.wait_for_url(f"**/runs/{url_id(evil_run)}")
    assert p.locator("h1").inner_text().startswith("hyb" + XSS_SCRIPT)
    drawn = browser.inked(p)
    assert len(drawn) >= 10 and min(drawn) > 100, drawn
    no_injected_markup(p)
    fits_the_viewport(p)
    shot(p, "run")
    # the per-sample table: search it, then open a sample whose id is a payload
    p.select_option("select[name=series]", "answers.f1")
    p.fill("input[name=q]", "eval_")
    p.click("#samples button[type=submit]")
    p.wait_for_url("**q=eval_**")
    sample = p.locator("table.samples a", has_text=XSS_IMG)
    assert sample.count() == 1
    sample.click()
    p.wait_for_url("**/samples/**")
    assert p.locator("h1").inner_text() == "eval_" + XSS_IMG + "-q1"
    body = p.locator("body").inner_text()
    assert XSS_CLOSE in body  # the answer, shown as text
    no_injected_markup(p)
    shot(p, "sample")
    del guard


def test_sample_with_a_slash_and_an_explanation(page, server, evil):
    p, _ = page
    ev = evil.evaluation
    qid = ev.qids[2]  # "eval/../x#1?y=</script>...-q1"
    p.goto(server + f"/runs/{url_id(ev.run_ids[2])}/samples/{url_id(qid)}")
    assert p.locator("h1").inner_text() == qid
    explanations = p.locator(".explanation").all_inner_texts()
    assert any("statements are supported" in e for e in explanations)
    no_injected_markup(p)


def test_compare_from_the_runs_list(page, server, evil):
    p, _ = page
    ev = evil.evaluation
    p.goto(server + "/")
    for rid in ev.run_ids[:2]:
        p.locator(f'input[name=run][value="{rid}"]').check()
    p.click("#compare-form button[type=submit]")
    p.wait_for_url("**/compare?**")
    systems = p.locator("table.runs tbody tr td:nth-child(2)").all_inner_texts()
    assert sorted(systems) == ["bm25-v3", "hybrid-v1"]
    rows = p.locator("table.compare tbody tr")
    assert rows.count() > 20
    nd = p.locator("table.compare tbody tr", has_text="retrieval.nDCG@10").first.inner_text()
    assert "stored" in nd
    drawn = browser.inked(p)
    assert len(drawn) == 1 and drawn[0] > 100
    fits_the_viewport(p)
    # long metric names do not fit a bar group's width: the labels are rotated, all shown
    axis = p.locator("[data-chart]").first.evaluate(
        "el => [el.uplot.axes[0]._rotate, el.uplot.axes[0]._values, el.uplot.bbox.width"
        " / devicePixelRatio]"
    )
    rotate, labels, plot_width = axis
    assert rotate == 40 and all(labels) and len(labels) > 6, axis
    assert plot_width / len(labels) < 7 * max(map(len, labels))  # level ones would overlap
    shot(p, "compare")


def test_trends_form_draws_the_chart(page, server):
    p, _ = page
    p.goto(server + "/trends")
    p.select_option("select[name=project]", "heritage-rag")
    p.select_option("select[name=metric]", "retrieval.nDCG@10")
    p.click("form.filters button[type=submit]")
    p.wait_for_url("**metric=retrieval.nDCG%4010**")
    drawn = browser.inked(p)
    assert len(drawn) == 1 and drawn[0] > 100
    assert p.locator("table.trend tbody tr").count() == 13
    no_injected_markup(p)
    shot(p, "trends")


@pytest.fixture(scope="module")
def solo(tmp_path_factory) -> Iterator[str]:
    """A store with one evaluation: every trend has a single timestamp."""
    from ragmeter.store import open_store
    from ragmeter.web import create_app

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('solo') / 'store.db'}")
    write_evaluation(store, project="solo", tasks=("retrieval",))
    with browser.serve(create_app(store)) as url:
        yield url
    store.close()


def test_a_trend_with_one_timestamp_is_centred_on_it(context, solo):
    guard = browser.Guard(allowed_origin=solo)
    p = context.new_page()
    p.route("**/*", guard.route)
    guard.watch(p)
    p.goto(solo + "/trends?project=solo&metric=retrieval.nDCG@10")
    assert browser.inked(p)[0] > 100
    lo, hi, xs = p.locator("[data-chart]").first.evaluate(
        "el => [el.uplot.scales.x.min, el.uplot.scales.x.max, el.uplot.data[0]]"
    )
    (t,) = set(xs)
    day = 86400
    assert t - 2 * day <= lo < t < hi <= t + 2 * day  # not 1000 days with the point at the edge
    assert abs((t - lo) - (hi - t)) < day / 10
    shot(p, "trends-one-timestamp")
    p.close()
    assert guard.blocked == [] and guard.page_errors == [] and guard.console_errors == []


def test_report_from_a_file_url(context, evil, tmp_path):
    out = write_report(evil.store, [evil.evaluation.evaluation_id], tmp_path / "report.html")
    url = Path(out).resolve().as_uri()
    guard = browser.Guard(allowed_urls={url})
    p = context.new_page()
    p.route("**/*", guard.route)
    guard.watch(p)
    try:
        p.goto(url)
        drawn = browser.inked(p)
        assert len(drawn) >= 20 and min(drawn) > 100, drawn
        body = p.locator("body").inner_text()
        for payload in (XSS_SCRIPT, XSS_IMG):
            assert payload in body
        no_injected_markup(p)
        # the CSP (hashes of the inline script and style) let both run: no violation logged
        assert guard.console_errors == []
        shot(p, "report")
    finally:
        p.close()
    assert guard.requests == [url]  # the file itself, nothing else
    assert guard.blocked == [] and guard.dialogs == [] and guard.page_errors == []


def test_the_guard_sees_leaks_and_payloads(context, server):
    """The checks above can fail: a request to another host and a script that runs are seen."""
    guard = browser.Guard(allowed_origin=server)
    p = context.new_page()
    p.route("**/*", guard.route)
    guard.watch(p)
    try:
        p.goto("about:blank")
        p.set_content('<img src="http://example.invalid/pixel.png"><script>alert("ran")</script>')
        p.wait_for_timeout(200)
    finally:
        p.close()
    assert "http://example.invalid/pixel.png" in guard.blocked
    assert guard.dialogs == ["ran"]


def test_the_dashboard_csp_blocks_inline_scripts(context, server):
    """Defence in depth: even markup that slipped through escaping could not run a script."""
    guard = browser.Guard(allowed_origin=server)
    p = context.new_page()
    p.route("**/*", guard.route)
    guard.watch(p)
    try:
        p.goto(server + "/")
        p.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'alert(1)'; document.body.appendChild(s); }"
        )
        p.wait_for_timeout(200)
    finally:
        p.close()
    assert guard.dialogs == []
    assert any("Content Security Policy" in e for e in guard.console_errors)
