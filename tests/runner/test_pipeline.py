"""The pipeline's own machinery on a test task: values, strata, re-use, resume, save, CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

import ragmeter
from ragmeter.store import open_store
from tests.helpers import invoke
from tests.runner import toy


@pytest.fixture
def project(tmp_path, monkeypatch):
    toy.install()
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    toy.uninstall()


def lengths(i: int, base: bool) -> tuple[int, bool]:
    """(answer length, matched) of item i for each toy system, by the construction in toy.py."""
    if base:
        return (5, False) if i % 3 == 0 else (len(f"answer {i}"), True)
    return (4, False) if i == 5 else (len(f"answer {i}"), True)


def pooled(items, base):
    total = sum(lengths(i, base)[0] for i in items)
    hit = sum(lengths(i, base)[0] for i in items if lengths(i, base)[1])
    return hit / total


def test_values_strata_and_summary(project):
    config = toy.write_project(project)
    res = ragmeter.evaluate(config, cache_dir=project / "cache")
    base, good = res.result("base", "toy"), res.result("good", "toy")
    assert isinstance(base, ragmeter.Result) and res["good", "toy"] is good
    assert res.results == {"base": {"toy": base}, "good": {"toy": good}}
    assert base.aggregates["match"].value == pytest.approx(8 / 12)
    assert good.aggregates["match"].value == pytest.approx(11 / 12)
    assert base.aggregates["pooled"].value == pytest.approx(pooled(range(12), True))
    nl = base.strata["country"]["NL"]
    assert nl["match"].value == pytest.approx(4 / 6) and nl["match"].n == 6
    # the corpus-level metric is recomputed on the stratum's units, not averaged
    assert nl["pooled"].value == pytest.approx(pooled(range(1, 12, 2), True))
    assert good.strata["country"]["NL"]["pooled"].value == pytest.approx(
        pooled(range(1, 12, 2), False)
    )
    summary = res.summary
    assert summary["tasks"]["toy"]["metrics"] == ["match", "pooled", "length"]
    assert summary["tasks"]["toy"]["requested"] == ["match", "pooled", "len"]
    assert [s["name"] for s in summary["systems"]] == ["base", "good"]
    assert summary["passed"] is True and summary["gates"]["rules"] == []
    df = res.per_sample()
    assert set(df.columns) >= {
        "system",
        "task",
        "id",
        "gold_id",
        "metric",
        "value",
        "strata.country",
    }
    assert len(df) == 2 * 12 * 2  # systems x units x per-sample metrics
    row = df[(df.system == "good") & (df.id == "s3-q1") & (df.metric == "match")].iloc[0]
    assert (row.value, row.gold_id, row["strata.country"]) == (1.0, "s3", "NL")


def test_unchanged_inputs_recompute_nothing(project):
    config = toy.write_project(project)
    first = ragmeter.evaluate(config, cache_dir=project / "cache")
    assert toy.ToyAdapter.calls == 2 + 2 * 2  # two systems, plus two strata subsets each
    again = ragmeter.evaluate(config, cache_dir=project / "cache")
    assert toy.ToyAdapter.calls == 6
    assert all(t.reused for s in again.systems.values() for t in s.tasks.values())
    assert again.summary["tasks"] == {
        task: {
            **block,
            "systems": {
                name: {**entry, "reused": True} for name, entry in block["systems"].items()
            },
        }
        for task, block in first.summary["tasks"].items()
    }
    # changing one system's outputs recomputes that system only
    p = project / "outputs" / "good.jsonl"
    p.write_text(p.read_text().replace("nope", "answer 5"))
    third = ragmeter.evaluate(config, cache_dir=project / "cache")
    assert toy.ToyAdapter.calls == 6 + 3
    assert third.result("good", "toy").aggregates["match"].value == 1.0
    assert (
        third.systems["base"].tasks["toy"].reused and not third.systems["good"].tasks["toy"].reused
    )
    # so does changing a task option
    config.write_text(config.read_text().replace("len]}", "len], lowercase: false}"))
    ragmeter.evaluate(config, cache_dir=project / "cache")
    assert toy.ToyAdapter.calls == 9 + 6


def test_an_interrupted_run_resumes(project, monkeypatch):
    config = toy.write_project(project)
    real = toy.ToyAdapter.evaluate
    seen = []

    def interrupted(self, ctx, outputs):
        seen.append(ctx.system)
        if ctx.system == "good":
            raise KeyboardInterrupt
        return real(self, ctx, outputs)

    monkeypatch.setattr(toy.ToyAdapter, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ragmeter.evaluate(config, cache_dir=project / "cache")
    monkeypatch.setattr(toy.ToyAdapter, "evaluate", real)
    toy.ToyAdapter.calls = 0
    res = ragmeter.evaluate(config, cache_dir=project / "cache")
    assert res.systems["base"].tasks["toy"].reused
    assert not res.systems["good"].tasks["toy"].reused
    assert toy.ToyAdapter.calls == 3  # only "good" (and its two strata) was computed


def test_save_writes_folder_and_store(project):
    config = toy.write_project(project, extra="store: postgresql://me:hunter2@db.example/x\n")
    res = ragmeter.evaluate(config, cache_dir=None)
    saved = res.save(f"sqlite:///{project / 'r.db'}", results_dir=project / "results")
    folder = Path(saved["results_dir"])
    assert folder == project / "results" / res.evaluation_id
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.yaml",
        "samples.parquet",
        "summary.json",
    ]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["saved"]["run_ids"] == [f"{res.evaluation_id}-base", f"{res.evaluation_id}-good"]
    written = (folder / "config.yaml").read_text()
    assert "hunter2" not in written
    assert yaml.safe_load(written)["store"] == "postgresql://***@db.example/x"
    table = pq.read_table(folder / "samples.parquet")
    assert table.num_rows == 48 and "strata.country" in table.column_names
    with open_store(project / "r.db") as store:
        runs = store.list_runs()
        assert [r["system"] for r in runs] == ["good", "base"]
        good = store.get_run(f"{res.evaluation_id}-good")
        assert good["baseline_run_id"] is None and good["tags"] == ["candidate"]
        assert "hunter2" not in json.dumps(good["config"])
        metrics = {
            (m["metric"], m["factor"], m["level"]): m["value"]
            for m in store.metrics(good["id"], strata=True)
        }
        assert metrics[("match", None, None)] == pytest.approx(11 / 12)
        assert metrics[("pooled", "country", "NL")] == pytest.approx(pooled(range(1, 12, 2), False))
        sample = store.sample(good["id"], "s5-q1")
        assert sample["records"]["toy"]["output"] == {"answer": "nope"}
        assert sample["records"]["toy"]["gold_id"] == "s5"


GATES = {
    "rules": [
        {"metric": "toy.match", "min": 0.75},
        {"metric": "toy.len", "max": 20},
    ]
}


def test_gates_pass_fail_and_exit_status(project):
    config = toy.write_project(project, gates=GATES)
    res = ragmeter.evaluate(config, cache_dir=None)
    verdicts = {(o.system, o.rule): o.verdict for o in res.gates.outcomes}
    assert verdicts == {
        ("base", "toy.match >= 0.75"): "FAIL",
        ("base", "toy.len <= 20"): "PASS",
        ("good", "toy.match >= 0.75"): "PASS",
        ("good", "toy.len <= 20"): "PASS",
    }
    assert res.exit_status == 1 and res.gates.status("good") == "pass"
    # other rules on the same result, strings or dicts
    assert res.gate(["toy.match>=0.5"]).passed
    assert not res.gate([{"metric": "toy.pooled", "min": 0.99, "systems": ["good"]}]).passed


def test_gate_on_a_task_that_was_not_configured_skips(project):
    gates = {"rules": [{"metric": "toy.match", "min": 0.1}, {"metric": "answers.em", "min": 0.5}]}
    config = toy.write_project(project, gates=gates)
    res = ragmeter.evaluate(config, cache_dir=None)
    skip = [o for o in res.gates.outcomes if o.metric == "answers.em"]
    assert {o.verdict for o in skip} == {"SKIP"} and res.passed
    strict = res.gate(strict=True)
    assert not strict.passed and "strict gates" in strict.outcomes[1].reason


def test_cli_run_gate_runs(project):
    config = toy.write_project(project, gates=GATES)
    store = f"sqlite:///{project / 'cli.db'}"
    out = invoke("run", str(config), "--store", store, "--quiet", "--cache-dir", str(project / "c"))
    assert out.code == 1, out.stderr
    assert "toy.match >= 0.75" in out.stdout and "FAIL" in out.stdout
    assert "results: results/" in out.stdout
    listed = invoke("runs", "list", "--json", "--store", store)
    runs = json.loads(listed.stdout)
    assert {r["system"] for r in runs} == {"base", "good"}
    assert all({"id", "project", "system", "created_at"} <= set(r) for r in runs)
    good = next(r["id"] for r in runs if r["system"] == "good")
    base = next(r["id"] for r in runs if r["system"] == "base")
    # re-gating the stored runs gives the same verdicts
    gated = invoke("gate", good, base, "--store", store, "--json")
    assert gated.code == 1
    data = json.loads(gated.stdout)
    assert [(r["system"], r["verdict"]) for r in data["rules"]] == [
        ("good", "PASS"),
        ("good", "PASS"),
        ("base", "FAIL"),
        ("base", "PASS"),
    ]
    assert invoke("gate", good, "--store", store, "--rule", "toy.match>=0.9").code == 0
    assert invoke("gate", good, "--store", store, "--rule", "toy.match>=0.95").code == 1
    bad = invoke("gate", good, "--store", store, "--rule", "toy.mtch>=0.9")
    assert bad.code == 2 and "unknown toy metric 'mtch'; did you mean 'match'?" in bad.stderr
    shown = invoke("runs", "show", good, "--json", "--store", store)
    assert json.loads(shown.stdout)["run"]["id"] == good
    text = invoke("runs", "show", good, "--store", store)
    assert "match" in text.stdout and "0.9167" in text.stdout
    exported = project / "run.json"
    assert invoke("runs", "export", good, "-o", str(exported), "--store", store).code == 0
    assert len(json.loads(exported.read_text())["samples"]) == 24
    assert (
        invoke(
            "runs",
            "export",
            good,
            "--format",
            "parquet",
            "-o",
            str(project / "s.parquet"),
            "--store",
            store,
        ).code
        == 0
    )
    assert pq.read_table(project / "s.parquet").num_rows == 24
    refused = invoke("runs", "delete", good, "--store", store)
    assert refused.code == 2 and "add --yes" in refused.stderr
    assert invoke("runs", "delete", good, "--yes", "--store", store).code == 0
    assert [
        r["id"] for r in json.loads(invoke("runs", "list", "--json", "--store", store).stdout)
    ] == [base]


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "list"),
        ("runs", "show", "latest"),
        ("runs", "export", "latest"),
        ("gate", "latest"),
    ],
)
def test_reading_commands_never_create_a_store(project, args):
    db = project / "missing.db"
    out = invoke(*args, "--store", f"sqlite:///{db}")
    assert out.code == 2
    assert out.stderr == (
        f"ragmeter {' '.join(args[:2]) if args[0] == 'runs' else args[0]}: no results store at "
        f"{db} (ragmeter run writes one; or pass --store URL)\n"
    )
    assert not db.exists()


def test_every_store_error_of_gate_and_runs_names_its_command(project):
    config = toy.write_project(project)
    store = f"sqlite:///{project / 'e.db'}"
    out = invoke("run", str(config), "--store", store, "--quiet", "--no-cache")
    assert out.code == 0, out.stderr
    ids = sorted(
        r["id"] for r in json.loads(invoke("runs", "list", "--json", "--store", store).stdout)
    )
    missing = f"no run 'nosuch' in the store {store} (see ragmeter runs list)\n"
    for args in (
        ("gate", "nosuch"),
        ("runs", "show", "nosuch"),
        ("runs", "delete", "nosuch", "--yes"),
        ("runs", "export", "nosuch"),
    ):
        command = " ".join(args[:2]) if args[0] == "runs" else args[0]
        bad = invoke(*args, "--store", store)
        assert (bad.code, bad.stderr) == (2, f"ragmeter {command}: {missing}")
    # 'latest' names the latest evaluation's two runs: export gives both, --system one
    two = invoke("runs", "export", "latest", "--store", store, "--no-samples")
    assert two.code == 0, two.stderr
    assert sorted(r["run"]["id"] for r in json.loads(two.stdout)) == ids
    systems = {r["run"]["system"]: r["run"]["id"] for r in json.loads(two.stdout)}
    for name, run_id in systems.items():
        one = invoke("runs", "export", "latest", "--system", name, "--store", store)
        assert one.code == 0, one.stderr
        assert json.loads(one.stdout)["run"]["id"] == run_id
    none = invoke("runs", "export", "latest", "--system", "nope", "--store", store)
    assert (none.code, none.stderr) == (
        2,
        f"ragmeter runs export: 'latest' has no run of system 'nope' (it has "
        f"{', '.join(sorted(systems))})\n",
    )
    table = project / "both.parquet"
    assert (
        invoke(
            "runs", "export", "latest", "--format", "parquet", "-o", str(table), "--store", store
        ).code
        == 0
    )
    assert sorted(set(pq.read_table(table)["run_id"].to_pylist())) == ids
    url = invoke("runs", "list", "--store", "mysql://x/y")
    assert (url.code, url.stderr) == (
        2,
        "ragmeter runs list: unsupported store backend 'mysql' "
        "(expected sqlite:///PATH or postgresql://...)\n",
    )


def test_run_shows_a_progress_bar_per_task(project):
    config = toy.write_project(project)
    store = f"sqlite:///{project / 'p.db'}"
    # not a terminal: rich prints each task's finished bar once
    out = invoke("run", str(config), "--store", store, "--no-cache")
    assert out.code == 0, out.stderr
    assert re.fullmatch(r"toy +━+ 24/24 \d:\d\d:\d\d\n", out.stderr), out.stderr
    assert invoke("run", str(config), "--store", store, "--no-cache", "--quiet").stderr == ""
    # a terminal: the bar is drawn live (cursor control codes), labelled with the task
    import io

    from rich.console import Console

    from ragmeter.runner.config import load_config
    from ragmeter.runner.pipeline import RichProgress, run_pipeline

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100, color_system=None)
    run_pipeline(load_config(config), cache_dir=None, progress=RichProgress(console))
    drawn = screen.getvalue()
    assert console.is_terminal and "\x1b[?25l" in drawn  # the live display hid the cursor
    assert re.search(r"toy +━+ 24/24", drawn), drawn


def test_cli_json_and_exit_0(project):
    config = toy.write_project(project, gates={"rules": [{"metric": "toy.match", "min": 0.5}]})
    out = invoke(
        "run",
        str(config),
        "--json",
        "--quiet",
        "--no-cache",
        "--store",
        f"sqlite:///{project / 'j.db'}",
    )
    assert out.code == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["passed"] is True and data["format"] == "ragmeter-summary/1"
    assert data["tasks"]["toy"]["systems"]["good"]["aggregates"]["match"]["value"] == pytest.approx(
        11 / 12
    )


def test_bad_output_id_writes_nothing(project):
    config = toy.write_project(project)
    (project / "outputs" / "good.jsonl").write_text(
        '{"id": "s1-q1", "answer": "x"}\n{"id": "s99-q1", "answer": "y"}\n'
    )
    store = project / "nothing.db"
    out = invoke("run", str(config), "--store", f"sqlite:///{store}", "--quiet")
    assert out.code == 2
    assert out.stderr == (
        "outputs/good.jsonl:2: id 's99-q1' matches no gold QA pair (expected a qid of gold.jsonl)\n"
    )
    assert not (project / "results").exists()
    assert not store.exists()


def test_mixed_formats_in_one_output_file(project):
    config = toy.write_project(project)
    (project / "outputs" / "good.jsonl").write_text(
        '{"id": "s1-q1", "answer": "x"}\n{"id": "s2-q1", "pred_answer": "y"}\n'
    )
    out = invoke("run", str(config), "--quiet", "--no-store")
    assert (out.code, out.stderr) == (
        2,
        "outputs/good.jsonl:2: mixed formats: this line uses 'id' and 'pred_answer' where line 1 "
        "used 'id' and 'answer' (expected one format per file)\n",
    )


RUN_WITH_TOY = """
import sys
sys.path[:0] = [{src!r}, {root!r}]
from tests.runner import toy
toy.install()
from ragmeter.cli.entry import main
sys.exit(main(sys.argv[1:]))
"""


def test_two_ragmeter_run_processes_on_one_store_are_both_recorded(project, store_url):
    import subprocess
    import sys

    from tests.helpers import REPO

    config = toy.write_project(project)
    script = project / "run_toy.py"
    script.write_text(RUN_WITH_TOY.format(src=str(REPO / "src"), root=str(REPO)))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                "run",
                str(config),
                "--store",
                store_url,
                "--quiet",
                "--no-cache",
                "--results-dir",
                str(project / f"results-{i}"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    with open_store(store_url) as store:
        runs = store.list_runs(limit=None)
        assert len(runs) == 4 and len({r["evaluation_id"] for r in runs}) == 2
        for r in runs:
            assert store.count_samples(r["id"]) == 24


def test_ctrl_c_exits_130_and_the_next_run_resumes(project, monkeypatch):
    config = toy.write_project(project)
    real = toy.ToyAdapter.evaluate

    def interrupted(self, ctx, outputs):
        if ctx.system == "good":
            raise KeyboardInterrupt
        return real(self, ctx, outputs)

    monkeypatch.setattr(toy.ToyAdapter, "evaluate", interrupted)
    store = f"sqlite:///{project / 'int.db'}"
    out = invoke("run", str(config), "--store", store, "--quiet", "--cache-dir", str(project / "c"))
    assert out.code == 130
    assert not (project / "int.db").exists() or open_store(store).list_runs() == []
    monkeypatch.setattr(toy.ToyAdapter, "evaluate", real)
    toy.ToyAdapter.calls = 0
    out = invoke(
        "run", str(config), "--store", store, "--json", "--quiet", "--cache-dir", str(project / "c")
    )
    assert out.code == 0, out.stderr
    tasks = json.loads(out.stdout)["tasks"]["toy"]["systems"]
    assert (tasks["base"]["reused"], tasks["good"]["reused"]) == (True, False)


def test_a_key_in_the_judge_base_url_query_is_never_written(project):
    # Azure-style endpoints take the key in the query string; none of it may be stored
    secret = "AZKEY-9d2c41-do-not-store"
    base_url = f"https://me.openai.azure.com/openai/v1?api-version=2024-06-01&api-key={secret}"
    extra = f"judge:\n  base_url: {base_url}\n  model: m\n"
    config = toy.write_project(project, extra=extra)
    res = ragmeter.evaluate(config, cache_dir=None)
    db = f"sqlite:///{project / 'r.db'}"
    saved = res.save(db, results_dir=project / "results")
    written = (Path(saved["results_dir"]) / "config.yaml").read_text()
    assert yaml.safe_load(written)["judge"]["base_url"] == (
        "https://me.openai.azure.com/openai/v1?api-version=2024-06-01&api-key=***"
    )
    with open_store(project / "r.db") as store:
        stored = store.get_run(f"{res.evaluation_id}-good")["config"]
    assert stored["judge"]["base_url"].endswith("&api-key=***")
    report = project / "report.html"
    out = invoke("report", f"{res.evaluation_id}-good", "--store", db, "-o", str(report))
    assert out.code == 0, out.stderr
    texts = [written, json.dumps(stored), report.read_text(), json.dumps(res.summary())]
    texts += [p.read_text(errors="replace") for p in (project / "results").rglob("*.json")]
    for text in texts:
        assert secret not in text and "9d2c41" not in text
