"""User and data text is printed as text, never parsed as rich markup or emoji codes."""

from __future__ import annotations

import io
import json

import pytest

from ragmeter.cli.run_display import print_summary
from ragmeter.terminal import make_console
from tests.helpers import invoke
from tests.runner import toy


@pytest.fixture
def project(tmp_path, monkeypatch):
    toy.install()
    monkeypatch.chdir(tmp_path)
    toy.write_project(tmp_path)
    yield tmp_path
    toy.uninstall()


def test_run_prints_markup_like_names_as_written(project):
    """`proj [/] x` crashed `ragmeter run` with MarkupError after both runs were stored."""
    gold = [json.loads(line) for line in (project / "gold.jsonl").read_text().splitlines()]
    for i, g in enumerate(gold):
        g["strata"]["country"] = "[/red]" if i % 2 else "[link=https://evil.example]x"
    (project / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    cfg = (project / "ragmeter.yaml").read_text()
    cfg = cfg.replace("project: toy-project", "project: 'proj [/] x :smile:'")
    (project / "ragmeter.yaml").write_text(cfg)
    res = invoke("run", "ragmeter.yaml", "--no-store", "-q")
    assert res.code == 0, res.stderr
    assert "Traceback" not in res.stderr and "MarkupError" not in res.stderr
    assert "proj [/] x :smile:" in res.stdout
    assert "[/red]" in res.stdout
    assert "[link=https://evil.example]x" in res.stdout


def test_summary_keeps_an_install_hint_and_styles_only_its_own_text():
    summary = {
        "project": "p",
        "evaluation_id": "e1",
        "dataset": {"n_samples": 3, "path": "gold.jsonl"},
        "systems": [{"name": "a"}],
        "tasks": {
            "semantic": {
                "metrics": ["semantic-similarity"],
                "requested": ["semantic-similarity"],
                "systems": {
                    "a": {
                        "status": "skipped",
                        "aggregates": None,
                        "reason": "needs ragmeter[semantic] (pip install 'ragmeter[semantic]')",
                    }
                },
            }
        },
    }
    buf = io.StringIO()
    print_summary(summary, make_console(file=buf, width=200))
    out = buf.getvalue()
    assert "semantic: needs ragmeter[semantic] (pip install 'ragmeter[semantic]')" in out
    assert out.splitlines()[0] == "p  evaluation e1  · 3 gold samples (gold.jsonl)"
    styled = io.StringIO()
    print_summary(summary, make_console(file=styled, width=200, force_terminal=True))
    assert "\x1b[1mp\x1b[0m" in styled.getvalue()  # the project name in bold, as intended


def _bars(project, *, unavailable: str | None) -> tuple[list, str]:
    from rich.console import Console

    from ragmeter.runner.config import load_config
    from ragmeter.runner.pipeline import RichProgress, run_pipeline

    cfg = load_config(project / "ragmeter.yaml")
    if unavailable:
        cfg.unavailable["toy"] = unavailable
    buf = io.StringIO()
    progress = RichProgress(Console(file=buf, width=100, force_terminal=False))
    run_pipeline(cfg, cache_dir=None, progress=progress)
    return [(t.description, t.visible, t.completed, t.total) for t in progress.progress.tasks], (
        buf.getvalue()
    )


def test_a_skipped_task_draws_no_full_progress_bar(project):
    """The demo drew a full bar for the judge task it skipped (no LLM endpoint configured)."""
    tasks, shown = _bars(project, unavailable=None)
    assert tasks == [("toy", True, 24, 24)]  # 12 units x 2 systems, all scored
    assert "24/24" in shown
    tasks, shown = _bars(project, unavailable="needs an LLM endpoint")
    assert [t[:3] for t in tasks] == [("toy", False, 0)]
    assert "24/24" not in shown and "toy" not in shown
