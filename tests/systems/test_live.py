"""The runner calls live systems: counts, the call cache, failures, and the materialised files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import ragmeter
from ragmeter import status as st
from tests.helpers import invoke
from tests.systems import fake_system
from tests.systems.conftest import fake, write_config

PER_METHOD = {"retrieve": 12, "answer": 12, "extract_entities": 12, "classify": 12, "link": 12}


def _evaluate(config: Path, **kw):  # type: ignore[no-untyped-def]
    return ragmeter.evaluate(config, cache_dir=None, systems_cache=".ragmeter/calls.sqlite", **kw)


def _calls(result, system: str = "fake") -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    return next(s for s in result.summary()["systems"] if s["name"] == system)["calls"]


def test_each_method_once_per_unit_then_zero_calls_on_rerun(project: Path) -> None:
    config = write_config(project, [fake()])
    first = _evaluate(config)
    assert dict(fake_system.CALLS) == PER_METHOD
    stats = _calls(first)
    assert {m: (s["calls"], s["cache_hits"], s["errors"]) for m, s in stats.items()} == {
        m: (n, 0, 0) for m, n in PER_METHOD.items()
    }
    fake_system.CALLS.clear()
    second = _evaluate(config)
    assert sum(fake_system.CALLS.values()) == 0
    assert {m: (s["calls"], s["cache_hits"]) for m, s in _calls(second).items()} == {
        m: (0, n) for m, n in PER_METHOD.items()
    }
    # the same numbers from the cache as from the calls
    for task, res in first.results["fake"].items():
        assert second.results["fake"][task].summary == res.summary, task
    assert first.results["fake"]["retrieval"].aggregates["RR"].n == 11


def test_new_version_calls_again_and_refresh_drops_one_system(project: Path) -> None:
    _evaluate(write_config(project, [fake(version="1")]))
    fake_system.CALLS.clear()
    _evaluate(write_config(project, [fake(version="2")]))
    assert dict(fake_system.CALLS) == PER_METHOD
    fake_system.CALLS.clear()
    config = write_config(project, [fake(version="2")])
    _evaluate(config)
    assert sum(fake_system.CALLS.values()) == 0
    _evaluate(config, refresh_systems=["fake"])
    assert dict(fake_system.CALLS) == PER_METHOD


def test_async_system_gives_the_numbers_of_the_sync_one(project: Path) -> None:
    sync = _evaluate(write_config(project, [fake("SyncSystem", name="s")]))
    asyn = _evaluate(
        write_config(project, [fake("AsyncSystem", name="a", concurrency=3, init={"delay": 0.01})])
    )
    assert fake_system.CALLS["retrieve"] == 24
    for task, res in sync.results["s"].items():
        assert asyn.results["a"][task].summary == res.summary, task
    out = Path(sync.saved.get("results_dir", "results"))
    del out
    s_dir = Path("results") / sync.evaluation_id / "outputs" / "s"
    a_dir = Path("results") / asyn.evaluation_id / "outputs" / "a"
    for name in ("answers.jsonl", "entities.jsonl"):
        assert (s_dir / name).read_bytes() == (a_dir / name).read_bytes()
    run_s = (s_dir / "run.trec").read_text().replace(" s\n", "\n")
    assert run_s == (a_dir / "run.trec").read_text().replace(" a\n", "\n")


def test_materialised_files_evaluate_to_the_same_numbers(project: Path) -> None:
    live = _evaluate(write_config(project, [fake()]))
    folder = Path("results") / live.evaluation_id / "outputs" / "fake"
    assert sorted(p.name for p in folder.iterdir()) == [
        "answers.jsonl",
        "entities.jsonl",
        "run.trec",
    ]
    files = write_config(
        project,
        [
            {
                "name": "fake",
                "outputs": {
                    "run": str(folder / "run.trec"),
                    "answers": str(folder / "answers.jsonl"),
                    "entities": str(folder / "entities.jsonl"),
                },
            }
        ],
        name="files.yaml",
    )
    again = ragmeter.evaluate(files, cache_dir=None)
    assert set(again.results["fake"]) == set(live.results["fake"]) == {
        "retrieval", "answers", "grounded", "ner", "classification", "linking"
    }  # fmt: skip
    for task, res in live.results["fake"].items():
        assert again.results["fake"][task].aggregates == res.aggregates, task
    # and a Python object handed in gives the same numbers again (no import path)
    obj = fake_system.SyncSystem(corpus="data/corpus.jsonl")
    handed = ragmeter.evaluate(
        write_config(project, [{"name": "fake", "version": "py"}], name="py.yaml"),
        cache_dir=None,
        systems_cache=None,
        systems={"fake": obj},
    )
    for task, res in live.results["fake"].items():
        assert handed.results["fake"][task].summary == res.summary, task


def test_no_config_form(project: Path) -> None:
    obj = fake_system.SyncSystem(corpus="data/corpus.jsonl")
    result = ragmeter.evaluate(
        dataset="data/gold.jsonl",
        systems={"mine": obj},
        tasks=["classification", "ner"],
        cache_dir=None,
        systems_cache=None,
    )
    assert set(result.results["mine"]) == {"classification", "ner"}
    assert fake_system.CALLS == {"classify": 12, "extract_entities": 12}
    acc = result.results["mine"]["classification"].aggregates["accuracy"]
    assert acc.n == 12 and 0 < acc.value <= 1


def test_failing_calls_become_system_error_rows_and_are_retried(project: Path) -> None:
    # "Wanneer" starts 3 of the 12 questions (s003, s009, s012): they raise; "Where" (s001,
    # s007) gets a NaN score; a span past the end of the text for "Wilford" (s001 only)
    config = write_config(
        project,
        [
            fake(
                "FailingSystem",
                max_errors=10,
                init={"fail_word": "Wanneer", "nan_word": "Where", "bad_span_word": "Wilford"},
            )
        ],
    )
    result = _evaluate(config)
    retrieval = result.results["fake"]["retrieval"]
    statuses = retrieval.statuses("RR")
    errors = sorted(q for q, s in statuses.items() if s == st.SYSTEM_ERROR)
    assert errors == ["s001-q1", "s003-q1", "s007-q1", "s009-q1", "s012-q1"]
    agg = retrieval.aggregates["RR"]
    assert agg.n == 6 and dict(agg.status_counts) == {"ok": 6, "system_error": 5}
    rows = retrieval.samples.to_pylist()
    detail = {r["id"]: r["detail"] for r in rows if r["metric"] == "RR"}
    assert detail["s003-q1"] == "retrieve raised RuntimeError: index offline"
    assert detail["s001-q1"].startswith("retrieve returned score NaN for doc 'doc-")
    # the answer of a question whose retrieval failed is a system_error too (no contexts)
    answers = result.results["fake"]["answers"].statuses("f1")
    assert sorted(q for q, s in answers.items() if s == st.SYSTEM_ERROR) == errors
    ner = result.results["fake"]["ner"]
    bad = {r["id"]: r["detail"] for r in ner.samples.to_pylist() if r["status"] == st.SYSTEM_ERROR}
    assert list(bad) == ["s001"] and "outside the text" in bad["s001"]
    assert ner.aggregates["overall.strict.f1"].status_counts["system_error"] == 1
    stats = _calls(result)
    assert (stats["retrieve"]["calls"], stats["retrieve"]["errors"]) == (12, 5)
    assert stats["extract_entities"]["errors"] == 1
    # errors are never cached: the re-run calls exactly the failed inputs again
    fake_system.CALLS.clear()
    again = _evaluate(config)
    assert fake_system.CALLS == {"retrieve": 5, "extract_entities": 1}
    assert _calls(again)["retrieve"] == {
        "calls": 5, "cache_hits": 7, "errors": 5, "seconds": _calls(again)["retrieve"]["seconds"]
    }  # fmt: skip
    # the failed units have no line in the materialised files
    folder = Path("results") / result.evaluation_id / "outputs" / "fake"
    qids = {line.split()[0] for line in (folder / "run.trec").read_text().splitlines()}
    assert qids.isdisjoint(errors) and len(qids) == 7


def test_max_errors_stops_with_one_line_and_exit_2(project: Path) -> None:
    # one call at a time, in gold order: s001 NaN, s002 ok, s003 raises, s004-s006 ok, s007 NaN
    init = {"fail_word": "Wanneer", "nan_word": "Where"}
    config = write_config(project, [fake("FailingSystem", init=init, max_errors=2, concurrency=1)])
    res = invoke("run", str(config), "--systems-cache", "calls.sqlite", "-q", "--no-store")
    assert res.code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert (
        lines[0].startswith(f"{config}:")
        and "systems[0].max_errors: system 'fake': 3 calls" in lines[0]
    )
    assert "more than max_errors 2" in lines[0]
    assert "(last: retrieve on 's007-q1': retrieve returned score NaN for doc" in lines[0]
    # finished calls were kept; nothing of the evaluation was written
    with sqlite3.connect("calls.sqlite") as conn:
        kept = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    assert kept == 4
    assert not any(p.name == "summary.json" for p in Path("results").rglob("*"))


def test_default_max_errors_is_five_percent_at_least_one(project: Path) -> None:
    # 60 planned calls: 5% is 3; two failures pass, the run finishes
    ok = write_config(project, [fake("FailingSystem", init={"fail_word": "Wilford"})])
    assert _evaluate(ok).results["fake"]["retrieval"].aggregates["RR"].n == 10
    three = write_config(project, [fake("FailingSystem", name="f2", init={"fail_word": "Wanneer"})])
    res = invoke("run", str(three), "--systems-cache", "c2.sqlite", "-q", "--no-store")
    assert res.code == 0, res.stderr  # 3 failures = 5% of 60: allowed
    four = write_config(
        project,
        [fake("FailingSystem", name="f3", init={"fail_word": "Wanneer", "nan_word": "Where"})],
    )
    res = invoke("run", str(four), "--systems-cache", "c3.sqlite", "-q", "--no-store")
    assert res.code == 2 and "more than max_errors 3" in res.stderr


@pytest.mark.parametrize("kind", ["Hangs", "AsyncHangs"])
def test_timeouts_are_system_errors_and_do_not_block(project: Path, kind: str) -> None:
    config = write_config(
        project,
        [fake(kind, timeout_s=0.2, concurrency=12, max_errors=20, init={"delay": 3.0})],
        tasks={"classification": {"profile": "heritage"}},
    )
    result = _evaluate(config)
    cls = result.results["fake"]["classification"]
    details = {r["detail"] for r in cls.samples.to_pylist()}
    assert details == {"classify timed out after 0.2 s"}
    assert dict(cls.aggregates["accuracy"].status_counts) == {"system_error": 12}
    assert cls.aggregates["accuracy"].value is None


def test_systems_check(project: Path) -> None:
    config = write_config(project, [fake(), fake("OnlyClassify", name="one", init={})])
    # OnlyClassify takes no corpus: init with only corpus is given by fake(); drop it
    text = config.read_text().replace(
        "  init:\n    corpus: data/corpus.jsonl\n  concurrency", "  concurrency"
    )
    config.write_text(text)
    res = invoke("systems", "check", str(config), "--json")
    assert res.code == 2  # OnlyClassify(corpus=...) fails: init keys it does not take
    assert (
        "systems[1].init: tests.systems.fake_system:OnlyClassify(...) raised TypeError"
        in res.stderr
    )
    config = write_config(
        project, [fake(), {"name": "one", "call": "tests.systems.fake_system:OnlyClassify"}]
    )
    res = invoke("systems", "check", str(config), "--json")
    assert res.code == 0, res.stderr
    report = json.loads(res.stdout)
    assert list(report["fake"]["methods"]) == [
        "retrieve",
        "answer",
        "extract_entities",
        "classify",
        "link",
    ]
    assert report["fake"]["methods"]["retrieve"]["unit"] == "s001-q1"
    assert report["fake"]["methods"]["retrieve"]["result"][0] == ["doc-001", 4.0]
    ctx = report["fake"]["methods"]["answer"]["args"]["contexts"][0]
    assert ctx["id"] == "doc-001" and ctx["text"].startswith("The Wilford County Archives")
    assert report["one"]["tasks"] == ["classification"]
    assert report["one"]["methods"]["classify"]["result"] == {
        "primary_type": "M",
        "secondary_types": [],
    }
    # no call is cached by a check
    assert not Path(".ragmeter/systems-cache.sqlite").exists()
    text = invoke("systems", "check", str(config))
    assert "classify [classification] on 's001'" in text.stdout


def test_system_errors_are_counted_in_their_strata(project: Path) -> None:
    # every text with "Museum" gets a bad span: custodian type M fails entirely in NER
    config = write_config(
        project,
        [fake("FailingSystem", max_errors=20, init={"bad_span_word": "Museum"})],
        tasks={"ner": {}},
        stratify_by=["custodian_type"],
    )
    ner = _evaluate(config).results["fake"]["ner"]
    levels = ner.strata["custodian_type"]
    failed = {r["id"] for r in ner.samples.to_pylist() if r["status"] == st.SYSTEM_ERROR}
    assert failed == {"s003", "s009", "s010"}
    museum = levels["M"]["overall.strict.f1"]
    assert museum.value is None and museum.reason == "no scored samples"
    assert dict(museum.status_counts) == {"system_error": 3}
    assert "system_error" not in levels["A"]["overall.strict.f1"].status_counts
    assert levels["A"]["overall.strict.f1"].value is not None


def test_async_method_that_raises(project: Path) -> None:
    config = write_config(project, [fake("AsyncHangs", max_errors=20)], tasks={"linking": {}})
    linking = _evaluate(config).results["fake"]["linking"]
    details = {r["id"]: r["detail"] for r in linking.samples.to_pylist()}
    assert (
        len(details) == 12
        and details["s001-m1"] == "link raised KeyError: 'Wilford County Archives'"
    )
    assert dict(linking.aggregates["ranking.mrr"].status_counts) == {"system_error": 12}


def test_async_max_errors_stops_new_calls(project: Path) -> None:
    config = write_config(
        project,
        [fake("AsyncHangs", timeout_s=0.1, concurrency=4, max_errors=2, init={"delay": 3.0})],
        tasks={"classification": {"profile": "heritage"}},
    )
    res = invoke("run", str(config), "--systems-cache", "c.sqlite", "-q", "--no-store")
    assert res.code == 2
    assert "more than max_errors 2 (last: classify on 's00" in res.stderr
    assert "classify timed out after 0.1 s); finished calls are kept" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_tasks_a_live_system_cannot_do_are_skipped_with_the_reason(project: Path) -> None:
    config = write_config(
        project,
        [
            {"name": "one", "call": "tests.systems.fake_system:OnlyClassify"},
            {"name": "empty", "call": "tests.systems.fake_system:EmptyRetriever"},
        ],
        tasks={"retrieval": {}, "answers": {}, "ner": {}, "classification": {}},
    )
    result = _evaluate(config)
    tasks = result.summary()["tasks"]
    assert tasks["ner"]["systems"]["one"]["reason"] == (
        "one has no extract_entities method (docs/systems.md) and no outputs for ner"
    )
    assert tasks["retrieval"]["systems"]["empty"]["reason"] == (
        "empty returned nothing to evaluate retrieval on (retrieve gave an empty result for "
        "every unit)"
    )
    assert tasks["answers"]["systems"]["empty"]["status"] == "ok"
    assert fake_system.CALLS == {"classify": 12, "answer": 11}  # 11 QA pairs have gold answers
    em = result.results["empty"]["answers"].aggregates["em"]
    assert em.n == 11 and em.value == 1 / 11  # "1888" is right for one founding year (s003)


def test_factory_function_and_instance(project: Path) -> None:
    config = write_config(
        project,
        [
            fake("make_system", name="made"),
            {"name": "inst", "call": "tests.systems.fake_system:INSTANCE"},
        ],
        tasks={"classification": {"profile": "heritage"}},
    )
    result = _evaluate(config)
    assert fake_system.CALLS == {"classify": 24}
    made = result.results["made"]["classification"].summary
    assert made == result.results["inst"]["classification"].summary
    assert result.summary()["systems"][1]["call"]["init_keys"] == []
    assert result.summary()["systems"][0]["call"]["init_keys"] == ["corpus"]


def test_init_paths_are_relative_to_the_config(project: Path) -> None:
    sub = project / "conf"
    sub.mkdir()
    config = sub / "ragmeter.yaml"
    config.write_text(
        "project: live\n"
        "dataset: {path: ../data/gold.jsonl}\n"
        "systems:\n"
        "  - name: fake\n"
        "    call: tests.systems.fake_system:SyncSystem\n"
        "    init: {corpus: ../data/corpus.jsonl, log: calls.log}\n"
        "tasks: {retrieval: {measures: [RR]}}\n"
    )
    result = _evaluate(config)
    # the corpus was found from the config's folder (the working directory is its parent);
    # "calls.log" names no existing file there, so it is passed as written
    assert result.results["fake"]["retrieval"].aggregates["RR"].value == 1.0
    assert (project / "calls.log").exists() and not (sub / "calls.log").exists()


def test_python_api_usage_errors(project: Path) -> None:
    obj = fake_system.SyncSystem()
    config = write_config(project, [fake()])
    with pytest.raises(ragmeter.UsageError) as err:
        ragmeter.evaluate(config, systems={"other": obj}, systems_cache=None)
    assert str(err.value) == "systems: 'other' is not a system of the config (expected one of fake)"
    with pytest.raises(ragmeter.UsageError) as err:
        ragmeter.evaluate(systems={"x": obj})
    assert str(err.value) == "evaluate: without a config, give dataset= and systems= (and tasks=)"
    with pytest.raises(ragmeter.UsageError, match="dataset= and tasks= go in the config"):
        ragmeter.evaluate(config, tasks=["ner"])
    assert sum(fake_system.CALLS.values()) == 0
