"""Screenshots of the real dashboard pages and report for ``docs/dashboard.md``.

    python -m tests.dashboard.screenshots [--out docs/img]

Builds the synthetic store of the tests (five weekly evaluations and one of three systems on
every task, :mod:`tests.dashboard.builders`), serves the dashboard on 127.0.0.1, and drives
Debian's chromium (the browser tests' set-up, every request checked) over each page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.dashboard import browser
from tests.dashboard.builders import THREE
from tests.helpers import REPO

SHOTS = (
    # name, path (RUN, RUN0, SAMPLE filled in), element to scroll to, height
    ("runs", "/", None, 640),
    ("run", "/runs/RUN", None, 1500),
    ("run-errors", "/runs/RUN", "#errors", 1300),
    ("run-samples", "/runs/RUN?series=judge.faithfulness&sort=value#samples", "#samples", 900),
    ("sample", "/runs/RUN/samples/SAMPLE", None, 1100),
    ("compare", "/compare?runs=RUN0,RUN", None, 1200),
    ("trends", "/trends?project=heritage-rag&metric=retrieval.nDCG@10", None, 760),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    args = parser.parse_args(argv)
    reason = browser.chromium_available()
    if reason:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 2
    from ragmeter.report import write_report
    from ragmeter.report.render import url_id
    from ragmeter.store import open_store
    from ragmeter.web import create_app
    from tests.dashboard.builders import write_evaluation, write_history

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "store.db")
        write_history(store)
        ev = write_evaluation(store, systems=THREE)
        report = write_report(store, [ev.evaluation_id], Path(tmp) / "report.html")
        fill = {
            "RUN0": url_id(ev.run_ids[0]),
            "RUN": url_id(ev.run_ids[1]),
            "SAMPLE": url_id(ev.qids[4]),
        }
        with browser.serve(create_app(store)) as base, browser.browser_context() as context:
            for name, path, anchor, height in SHOTS:
                for key in ("RUN0", "RUN", "SAMPLE"):
                    path = path.replace(key, fill[key])
                _shoot(
                    context, base + path, base, args.out / f"dashboard-{name}.png", anchor, height
                )
            url = report.resolve().as_uri()
            _shoot(context, url, None, args.out / "report.png", None, 1500, allowed={url})
            _shoot(
                context,
                url,
                None,
                args.out / "report-retrieval.png",
                "#retrieval",
                1250,
                allowed={url},
            )
        store.close()
    for png in sorted(args.out.glob("*.png")):
        shown = png.relative_to(REPO) if png.is_relative_to(REPO) else png
        print(f"{shown}: {png.stat().st_size // 1024} KB")
    return 0


def _shoot(
    context, url, origin, path: Path, anchor: str | None, height: int, allowed=frozenset()
) -> None:
    guard = browser.Guard(allowed_origin=origin, allowed_urls=set(allowed))
    page = context.new_page()
    page.route("**/*", guard.route)
    guard.watch(page)
    try:
        page.goto(url)
        browser.inked(page)
        top = 0
        if anchor:
            top = page.locator(anchor).evaluate(
                "e => e.getBoundingClientRect().top + window.scrollY"
            )
        full = page.evaluate("() => document.documentElement.scrollHeight")
        clip_h = min(height, full - top)
        page.screenshot(
            path=str(path), full_page=True, clip={"x": 0, "y": top, "width": 1280, "height": clip_h}
        )
    finally:
        page.close()
    if guard.blocked or guard.dialogs or guard.page_errors or guard.console_errors:
        raise RuntimeError(f"{url}: {guard}")


if __name__ == "__main__":
    raise SystemExit(main())
