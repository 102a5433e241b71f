"""Where live systems show: the stored run's metadata, the summary, the report and the
dashboard's run page (calls, cache hits, errors and time per method)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from starlette.testclient import TestClient

import ragmeter
from ragmeter.report.render import url_id
from ragmeter.store import Store
from ragmeter.web import create_app
from tests.helpers import invoke
from tests.systems.conftest import fake, write_config


def _rows(html: str) -> list[list[str]]:
    table = html.split('class="runs system-calls"', 1)[1].split("</table>", 1)[0]
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
        if "<td" in row
    ]


def test_calls_are_stored_and_shown_on_the_run_page(project: Path) -> None:
    config = write_config(
        project,
        [
            fake("FailingSystem", init={"fail_word": "Wanneer"}, max_errors=5),
            {"name": "files", "outputs": {"run": "run.trec"}},
        ],
        tasks={"retrieval": {"measures": ["RR"]}, "classification": {"profile": "heritage"}},
    )
    qids = [f"s{i:03d}-q1" for i in range(1, 13) if i != 8]  # s008 has no judged query
    (project / "run.trec").write_text("".join(f"{q} Q0 doc-001 1 1.0 files\n" for q in qids))
    store = f"sqlite:///{project / 'store.db'}"
    ragmeter.evaluate(config, systems_cache="c.sqlite", cache_dir=None)  # fills the cache
    res = invoke(
        "run", str(config), "-q", "--store", store, "--systems-cache", "c.sqlite", "--report"
    )
    assert res.code == 0, res.stderr
    assert "fake: retrieve 3 calls, 8 cached, 3 failed · classify 0 calls, 12 cached" in res.stdout
    handle = Store(store)
    try:
        run_id = handle.resolve("latest")
        runs = {handle.get_run(r)["system"]: handle.get_run(r, full=True) for r in run_id}
        meta = runs["fake"]["metadata"]
        assert meta["system_call"]["call"] == "tests.systems.fake_system:FailingSystem"
        assert meta["system_call"]["init_keys"] == ["corpus", "fail_word"]  # never the values
        calls = {
            m: (v["calls"], v["cache_hits"], v["errors"]) for m, v in meta["system_calls"].items()
        }
        # the second run: the 3 failed retrieve calls are retried, the rest come from the cache
        assert calls == {"retrieve": (3, 8, 3), "classify": (0, 12, 0)}
        assert "system_calls" not in runs["files"]["metadata"]
        fake_id = next(r for r in run_id if handle.get_run(r)["system"] == "fake")
        app = create_app(handle)
        page = TestClient(app, base_url="http://127.0.0.1:8150").get(f"/runs/{url_id(fake_id)}")
    finally:
        handle.close()
    shown = invoke("runs", "show", fake_id, "--store", store)
    assert shown.code == 0, shown.stderr
    assert "called tests.systems.fake_system:FailingSystem" in shown.stdout
    assert "  retrieve: 3 calls, 8 cache hits, 3 errors, " in shown.stdout
    assert page.status_code == 200
    rows = _rows(page.text)
    assert [r[2:6] for r in rows] == [["retrieve", "3", "8", "3"], ["classify", "0", "12", "0"]]
    assert rows[0][:2] == ["fake", "tests.systems.fake_system:FailingSystem (corpus, fail_word)"]
    folder = next(Path("results").rglob("report.html")).parent
    # the materialised outputs joined the results folder when it was saved
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.yaml", "outputs", "report.html", "samples.parquet", "summary.json"
    ]  # fmt: skip
    assert sorted(p.name for p in (folder / "outputs" / "fake").iterdir()) == [
        "entities.jsonl", "run.trec"
    ]  # fmt: skip
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    fake_entry = next(s for s in summary["systems"] if s["name"] == "fake")
    assert fake_entry["outputs"]["run"]["path"].endswith("outputs/fake/run.trec")
    report = (folder / "report.html").read_text(encoding="utf-8")
    assert [r[2:6] for r in _rows(report)] == [
        ["retrieve", "3", "8", "3"],
        ["classify", "0", "12", "0"],
    ]
