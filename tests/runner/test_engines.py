"""``ragmeter run`` end to end with the real engines, on the example project.

Every number is checked against an oracle computed independently from the raw files: the
reference library where one exists (pytrec_eval, scikit-learn), else the engine's own function
called directly on inputs this test builds itself. A test is skipped only when its engine is not
part of the build (a task the runner then reports as skipped).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

import ragmeter
from tests.helpers import REPO

EXAMPLE = REPO / "examples" / "heritage"


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


GOLD = jsonl(EXAMPLE / "data" / "gold.jsonl")
SYSTEMS = {"bm25-v3": "bm25", "hybrid-v1": "hybrid"}


def config(tasks: dict, **extra) -> dict:
    return {
        "project": "e2e",
        "dataset": {"path": str(EXAMPLE / "data" / "gold.jsonl")},
        "systems": [
            {
                "name": name,
                "outputs": {
                    "run": str(EXAMPLE / "outputs" / f"{stem}.trec"),
                    "answers": str(EXAMPLE / "outputs" / f"{stem}-answers.jsonl"),
                    "traces": str(EXAMPLE / "outputs" / f"{stem}-traces.jsonl"),
                    "entities": str(EXAMPLE / "outputs" / f"{stem}-entities.jsonl"),
                },
            }
            for name, stem in SYSTEMS.items()
        ],
        "tasks": tasks,
        **extra,
    }


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("RAGMETER_LLM_BASE_URL", "RAGMETER_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# -- retrieval ----------------------------------------------------------------------------------


def test_retrieval_matches_pytrec_eval(here):
    import pytrec_eval

    res = ragmeter.evaluate(
        config(
            {"retrieval": {"measures": ["nDCG@10", "RR", "P@5", "R@10"]}}, stratify_by=["country"]
        ),
        cache_dir=None,
    )
    qrels = {q: g for s in GOLD for q, g in (s.get("relevant_docs") or {}).items()}
    country = {q: s["strata"]["country"] for s in GOLD for q in s.get("relevant_docs") or {}}
    for name, stem in SYSTEMS.items():
        run: dict[str, dict[str, float]] = defaultdict(dict)
        for line in (EXAMPLE / "outputs" / f"{stem}.trec").read_text().splitlines():
            q, _, d, _, score, _ = line.split()
            run[q][d] = float(score)
        ev = pytrec_eval.RelevanceEvaluator(
            qrels, {"ndcg_cut.10", "recip_rank", "P.5", "recall.10"}
        )
        per_q = ev.evaluate(run)
        result = res.result(name, "retrieval")
        for ours, theirs in (
            ("nDCG@10", "ndcg_cut_10"),
            ("RR", "recip_rank"),
            ("P@5", "P_5"),
            ("R@10", "recall_10"),
        ):
            # complete: true (trec_eval -c): a gold query missing from the run counts as 0
            values = {q: per_q[q][theirs] if q in per_q else 0.0 for q in sorted(qrels)}
            expected = sum(values[q] for q in sorted(values)) / len(values)
            assert close(result.aggregates[ours].value, expected), (name, ours)
            for level in ("NL", "BE"):
                qs = sorted(q for q in values if country[q] == level)
                want = sum(values[q] for q in qs) / len(qs)
                assert close(result.strata["country"][level][ours].value, want)
        assert result.aggregates["nDCG@10"].n == len(qrels)
        ci = result.aggregates["nDCG@10"]
        assert ci.ci_low < ci.value < ci.ci_high


def test_comparisons_match_ragmeter_stats(here):
    from ragmeter import stats

    res = ragmeter.evaluate(
        config(
            {"retrieval": {"measures": ["nDCG@10", "RR"]}},
            compare={"baseline": "bm25-v3", "n_resamples": 999, "seed": 7},
        ),
        cache_dir=None,
    )
    rows = {r["metric"]: r for r in res.comparisons}
    for metric in ("nDCG@10", "RR"):
        a = res.result("hybrid-v1", "retrieval").values(metric)
        b = res.result("bm25-v3", "retrieval").values(metric)
        test = stats.randomization_test(a, b, n_resamples=999, seed=7)
        row = rows[metric]
        assert (row["p_value"], row["mean_diff"]) == (test.p_value, test.mean_diff)
        assert row["system"] == "hybrid-v1" and row["baseline"] == "bm25-v3"
        # one system compared with the baseline: Holm over a family of one changes nothing
        assert row["p_adjusted"] == test.p_value and row["family_size"] == 1
    assert res.summary["comparisons"][0]["seed"] == 7


# -- answers, grounded, semantic -----------------------------------------------------------------


def answers_of(stem: str) -> dict[str, dict]:
    return {r["id"]: r for r in jsonl(EXAMPLE / "outputs" / f"{stem}-answers.jsonl")}


def test_answers_match_the_engine_on_raw_rows(here):
    import ragmeter.answers as ra

    res = ragmeter.evaluate(
        config({"answers": {"metrics": ["em", "f1", "rouge-l"]}}), cache_dir=None
    )
    qas = [qa for s in GOLD for qa in s["qa_pairs"] if "golden_answers" in qa]
    for name, stem in SYSTEMS.items():
        given = answers_of(stem)
        direct = ra.evaluate(
            [given[qa["qid"]]["answer"] for qa in qas],
            [qa["golden_answers"] for qa in qas],
            ids=[qa["qid"] for qa in qas],
            metrics=["em", "f1", "rouge-l"],
            profile="squad",
        )
        result = res.result(name, "answers")
        for m in ("em", "f1", "rouge-l"):
            assert result.aggregates[m].value == direct.aggregates[m].value
            assert result.values(m) == direct.values(m)
    # the answers task never holds semantic metrics
    assert "semantic-similarity" not in res.result("bm25-v3", "answers").aggregates


def test_grounded_matches_the_reference_formulas(here):
    res = ragmeter.evaluate(config({"grounded": {"k": 5}}), cache_dir=None)
    qas = [qa for s in GOLD for qa in s["qa_pairs"] if "answerable" in qa]
    for name, stem in SYSTEMS.items():
        given = answers_of(stem)
        shipped = [
            qa for qa in qas if given[qa["qid"]]["answer"].strip().lower() != "not in context"
        ]
        refused = [qa for qa in qas if qa not in shipped]
        answerable = [qa for qa in qas if qa["answerable"]]
        unanswerable = [qa for qa in qas if not qa["answerable"]]

        def hit(qa, given=given):
            a = given[qa["qid"]]
            cites = a["citations"]
            ok = all(c in a["retrieved_ids"] for c in cites)
            gold = qa["gold_citations"]
            return ok and (any(c in gold for c in cites) if gold else not cites)

        def contains(qa, given=given):
            subs = [s for s in qa["gold_claim_substr"] if len(s) >= 5]
            claim = given[qa["qid"]]["answer"].lower()
            return not subs or any(s.lower() in claim for s in subs)

        precision = sum(1 for qa in shipped if qa["answerable"] and contains(qa) and hit(qa))
        chr_ = sum(1 for qa in shipped if qa["answerable"] and hit(qa))
        agg = res.result(name, "grounded").aggregates
        assert close(agg["precision"].value, precision / len(shipped))
        assert close(agg["chr"].value, chr_ / len(shipped))
        assert close(
            agg["under_refusal"].value,
            sum(1 for q in unanswerable if q in shipped) / len(unanswerable),
        )
        assert close(
            agg["over_refusal"].value, sum(1 for q in answerable if q in refused) / len(answerable)
        )
        recall = sum(
            1
            for qa in answerable
            if set(qa["gold_citations"]) <= set(given[qa["qid"]]["retrieved_ids"][:5])
        )
        assert close(agg["recall@k"].value, recall / len(answerable))


def test_semantic_similarity_uses_the_bundled_model(here):
    import ragmeter.answers as ra

    res = ragmeter.evaluate(config({"semantic": {}}), cache_dir=None)
    given = answers_of("hybrid")
    qa = next(qa for s in GOLD for qa in s["qa_pairs"] if "golden_answers" in qa)
    direct = ra.semantic_similarity(given[qa["qid"]]["answer"], qa["golden_answers"])
    got = res.result("hybrid-v1", "semantic").values("semantic-similarity")[qa["qid"]]
    assert math.isclose(got, direct, abs_tol=1e-6)


# -- judge ---------------------------------------------------------------------------------------


def test_judge_without_endpoint_is_skipped_with_needs_llm(here):
    res = ragmeter.evaluate(
        config(
            {"judge": {"metrics": ["faithfulness"]}, "answers": {}},
            gates={"rules": [{"metric": "judge.faithfulness", "min": 0.8}]},
        ),
        cache_dir=None,
    )
    trun = res.systems["hybrid-v1"].tasks["judge"]
    assert trun.status == "skipped" and trun.reason.startswith(
        "LLM metrics skipped (status needs_llm)"
    )
    assert set(trun.result.statuses("faithfulness").values()) == {"needs_llm"}
    assert res.systems["hybrid-v1"].tasks["answers"].status == "ok"
    assert {o.verdict for o in res.gates.outcomes} == {"SKIP"} and res.passed


def test_judge_with_a_real_http_endpoint_resumes_and_reuses(here, monkeypatch):
    import tests.judge.fake_openai as fake_mod

    server = fake_mod.FakeOpenAI().start()
    try:
        monkeypatch.setenv("RAGMETER_LLM_BASE_URL", server.url)
        monkeypatch.setenv("RAGMETER_LLM_MODEL", "judge-test-model")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        cfg = config({"judge": {"metrics": ["faithfulness"]}}, judge={"prices": []})
        cfg["systems"] = cfg["systems"][1:]
        first = ragmeter.evaluate(cfg, cache_dir=here / "cache")
        sent = len(server.requests)
        assert sent > 0
        trun = first.systems["hybrid-v1"].tasks["judge"]
        assert trun.status == "ok"
        statuses = set(trun.result.statuses("faithfulness").values())
        assert statuses <= {"ok", "no_claims"} and "ok" in statuses
        again = ragmeter.evaluate(cfg, cache_dir=here / "cache")
        assert len(server.requests) == sent  # nothing recomputed, no request sent
        assert again.systems["hybrid-v1"].tasks["judge"].reused
        # without the task cache, the judge's own request cache still answers every call
        third = ragmeter.evaluate(cfg, cache_dir=None)
        assert len(server.requests) == sent
        assert third.result("hybrid-v1", "judge").aggregates["faithfulness"].value == (
            trun.result.aggregates["faithfulness"].value
        )
    finally:
        server.stop()


def test_a_judge_endpoint_answering_garbage_does_not_stop_the_run(here, monkeypatch):
    import tests.judge.fake_openai as fake_mod

    server = fake_mod.FakeOpenAI().start()
    # every call gets HTTP 200 with a cut-off body, as a misbehaving proxy sends it
    server.script("*", lambda req: fake_mod.Reply(raw=b'{"id":"x","choices":[ this is not'))
    try:
        monkeypatch.setenv("RAGMETER_LLM_BASE_URL", server.url)
        monkeypatch.setenv("RAGMETER_LLM_MODEL", "judge-test-model")
        cfg = config(
            {"judge": {"metrics": ["faithfulness"]}, "answers": {}},
            judge={"prices": [], "max_attempts": 1},
        )
        cfg["systems"] = cfg["systems"][1:]
        res = ragmeter.evaluate(cfg, cache_dir=None)
        tasks = res.systems["hybrid-v1"].tasks
        assert tasks["answers"].status == "ok"
        judged = tasks["judge"].result
        statuses = judged.statuses("faithfulness")
        assert len(statuses) > 0 and set(statuses.values()) <= {"parse_error", "no_claims"}
        assert "parse_error" in statuses.values()
        rows = judged.samples.to_pylist()
        details = {r["detail"] for r in rows if r["status"] == "parse_error"}
        assert details == {
            "HTTP 200 with a body that is not JSON (Expecting value at char 22) after 1 attempt"
        }
        assert judged.aggregates["faithfulness"].value is None
    finally:
        server.stop()


# -- steps ---------------------------------------------------------------------------------------


def test_steps_match_the_engine_on_graphrag_eval_input(here):
    from ragmeter import steps

    res = ragmeter.evaluate(config({"steps": {}}, stratify_by=["country"]), cache_dir=None)
    templates: dict[str, list] = defaultdict(list)
    for s in GOLD:
        for qa in s["qa_pairs"]:
            if "reference_steps" in qa:
                templates[qa["template_id"]].append(
                    {
                        "id": qa["qid"],
                        "question_text": qa["question"],
                        "reference_answer": qa["answer"],
                        "reference_steps": qa["reference_steps"],
                    }
                )
    reference = [{"template_id": t, "questions": q} for t, q in templates.items()]
    for name, stem in SYSTEMS.items():
        responses = {
            r["question_id"]: r for r in jsonl(EXAMPLE / "outputs" / f"{stem}-traces.jsonl")
        }
        direct = steps.run_evaluation(reference, responses)
        want = steps.compute_aggregates(direct)["micro"]["steps_score"]["mean"]
        result = res.result(name, "steps")
        assert close(result.aggregates["steps_score"].value, want)
        # the engine's per-template breakdown is kept next to the configured strata
        assert set(result.strata) == {"template_id", "country"}


# -- extraction ----------------------------------------------------------------------------------


def entities_of(stem: str) -> dict[str, dict]:
    return {r["id"]: r for r in jsonl(EXAMPLE / "outputs" / f"{stem}-entities.jsonl")}


def test_classification_matches_scikit_learn(here):
    from sklearn import metrics

    res = ragmeter.evaluate(
        config(
            {"classification": {"profile": "heritage"}},
            compare={"baseline": "bm25-v3", "n_resamples": 999},
        ),
        cache_dir=None,
    )
    gold = [s["type_classification"]["primary_type"] for s in GOLD]
    for name, stem in SYSTEMS.items():
        ents = entities_of(stem)
        pred = [ents[s["id"]]["type_classification"]["primary_type"] for s in GOLD]
        agg = res.result(name, "classification").aggregates
        assert close(agg["accuracy"].value, metrics.accuracy_score(gold, pred))
        labels = sorted(set(gold) | set(pred))
        want = metrics.f1_score(gold, pred, labels=labels, average="macro", zero_division=0)
        assert close(agg["macro.f1"].value, want)


def test_ner_and_linking_match_direct_computation(here):
    import ragmeter.extraction as ex

    res = ragmeter.evaluate(
        config(
            {"ner": {"schemas": ["strict", "type"]}, "linking": {"k": [1, 5]}},
            compare={"baseline": "bm25-v3", "n_resamples": 999},
            stratify_by=["custodian_type"],
        ),
        cache_dir=None,
    )
    for name, stem in SYSTEMS.items():
        ents = entities_of(stem)
        # NER strict micro F1 by hand: exact (start, end, type) matches within each document
        tp = pos = act = 0
        for s in GOLD:
            g = {(e["start"], e["end"], e["type"]) for e in s["ner_annotations"]}
            p = {(e["start"], e["end"], e["type"]) for e in ents[s["id"]]["ner_annotations"]}
            tp, pos, act = tp + len(g & p), pos + len(g), act + len(p)
        ner = res.result(name, "ner")
        assert close(ner.aggregates["overall.strict.f1"].value, 2 * tp / (pos + act))
        assert set(ner.aggregates) >= {"overall.strict.f1", "overall.type.f1"}
        # per stratum: recomputed on the stratum's documents, not averaged
        m_docs = [s for s in GOLD if s["strata"]["custodian_type"] == "M"]
        direct = ex.evaluate_ner(
            {
                s["id"]: [(e["start"], e["end"], e["type"]) for e in s["ner_annotations"]]
                for s in m_docs
            },
            {
                s["id"]: [
                    (e["start"], e["end"], e["type"]) for e in ents[s["id"]]["ner_annotations"]
                ]
                for s in m_docs
            },
            schemas=["strict"],
        ).overall["strict"]["f1"]
        assert close(ner.strata["custodian_type"]["M"]["overall.strict.f1"].value, direct)
        # linking by hand: rank of the first correct candidate over InKB gold mentions
        ranks, nil_tp, nil_fp, nil_fn = [], 0, 0, 0
        for s in GOLD:
            link = s["entity_linking"][0]
            pred = ents[s["id"]]["entity_linking"][0]
            cands = [c["kb_id"] for c in sorted(pred["candidates"], key=lambda c: -c["score"])]
            if link["wikidata_id"] is None:
                nil_tp += pred["nil"]
                nil_fn += not pred["nil"]
                continue
            nil_fp += pred["nil"]
            ranks.append(
                cands.index(link["wikidata_id"]) + 1 if link["wikidata_id"] in cands else math.inf
            )
        lk = res.result(name, "linking").aggregates
        assert close(lk["ranking.hits@1"].value, sum(r <= 1 for r in ranks) / len(ranks))
        assert close(lk["ranking.mrr"].value, sum(1 / r for r in ranks) / len(ranks))
        p, r = nil_tp / (nil_tp + nil_fp), nil_tp / (nil_tp + nil_fn)
        assert close(lk["nil.f1"].value, 2 * p * r / (p + r))


def test_corpus_level_metrics_are_compared_by_resampling_units(here):
    res = ragmeter.evaluate(
        config(
            {"ner": {"schemas": ["strict"]}, "classification": {}, "linking": {}},
            compare={"baseline": "bm25-v3", "n_resamples": 999},
        ),
        cache_dir=None,
    )
    rows = {(r["task"], r["metric"]): r for r in res.comparisons}
    for task, metric in (
        ("ner", "overall.strict.f1"),
        ("classification", "macro.f1"),
        ("linking", "nil.f1"),
    ):
        row = rows[(task, metric)]
        assert row["test"] == "corpus_randomization" and 0 < row["p_value"] <= 1
        # the observed difference is exactly the difference of the two reported values
        diff = (
            res.result("hybrid-v1", task).aggregates[metric].value
            - res.result("bm25-v3", task).aggregates[metric].value
        )
        assert close(row["mean_diff"], diff)
    # a sample-level metric of the same tasks goes through the paired test
    assert rows[("classification", "accuracy")]["test"] == "randomization"


def test_a_bad_prediction_points_at_the_entities_file(here):
    bad = here / "bad-entities.jsonl"
    rows = jsonl(EXAMPLE / "outputs" / "hybrid-entities.jsonl")
    rows[3]["ner_annotations"][0]["end"] = 10_000
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = config({"ner": {}})
    cfg["systems"][1]["outputs"] = {"entities": str(bad)}
    with pytest.raises(ragmeter.InputError) as exc:
        ragmeter.evaluate(cfg, cache_dir=None)
    # the message is the extraction engine's; the runner adds the file and the line
    message = str(exc.value)
    assert message.startswith("bad-entities.jsonl:4: ") and "'s004'" in message
    assert "10000" in message and message.count("\n") == 0


# -- the whole example ---------------------------------------------------------------------------


def test_the_example_project_runs_and_passes_its_gates(here):
    from tests.helpers import invoke

    out = invoke(
        "run",
        str(EXAMPLE / "ragmeter.yaml"),
        "--json",
        "--quiet",
        "--store",
        f"sqlite:///{here / 'demo.db'}",
    )
    assert out.code == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["passed"] is True
    verdicts = {(o["rule"], o["verdict"]) for o in data["gates"]["rules"]}
    assert ("judge.faithfulness >= 0.8", "SKIP") in verdicts
    assert ("retrieval.nDCG@10 no regression vs bm25-v3", "PASS") in verdicts
    assert all(v != "FAIL" for _, v in verdicts)
    tasks = data["tasks"]
    assert tasks["judge"]["systems"]["hybrid-v1"]["status"] == "skipped"
    for task in ("retrieval", "answers", "grounded", "steps", "ner", "classification", "linking"):
        assert tasks[task]["systems"]["hybrid-v1"]["status"] == "ok", task


def test_a_split_manifest_selects_the_split(here):
    import ragmeter.datasets as rd
    import ragmeter.stats.datasets as sd
    from tests.helpers import invoke

    assert rd.split is sd.split and rd.stratified_sample is sd.stratified_sample
    manifest = here / "split.json"
    out = invoke(
        "split",
        str(EXAMPLE / "data" / "gold.jsonl"),
        "--by",
        "custodian_type,country",
        "--group",
        "group",
        "--ratios",
        "0.5,0.2,0.3",
        "--seed",
        "42",
        "-o",
        str(manifest),
    )
    assert out.code == 0, out.stderr
    test_ids = set(json.loads(manifest.read_text())["splits"]["test"])
    cfg = config({"retrieval": {"measures": ["RR"]}})
    cfg["dataset"].update(split="test", manifest=str(manifest))
    res = ragmeter.evaluate(cfg, cache_dir=None)
    queries = {q for s in GOLD if s["id"] in test_ids for q in s.get("relevant_docs") or {}}
    assert set(res.result("hybrid-v1", "retrieval").values("RR")) == queries
    assert res.summary["dataset"]["n_samples"] == len(test_ids)
    cfg["dataset"]["split"] = "tset"
    with pytest.raises(ragmeter.InputError, match="split 'tset' is not in the manifest"):
        ragmeter.evaluate(cfg, cache_dir=None)


def test_gate_on_stored_runs_against_another_baseline(here):
    from ragmeter import stats
    from ragmeter.store import open_store
    from tests.helpers import invoke

    store_url = f"sqlite:///{here / 'g.db'}"
    cfg = config(
        {"retrieval": {"measures": ["nDCG@10"]}},
        compare={"baseline": "bm25-v3"},
        gates={"rules": [{"no_regression": {"metrics": ["retrieval.nDCG@10"]}}]},
    )
    first = ragmeter.evaluate(cfg, cache_dir=None)
    first.save(store_url, results_dir=here / "r")
    second = ragmeter.evaluate(cfg, cache_dir=None)
    second.save(store_url, results_dir=here / "r")
    hybrid, bm25_old = second.run_ids["hybrid-v1"], first.run_ids["bm25-v3"]
    # the run's own gates: the stored comparison of run time is used
    own = invoke("gate", hybrid, "--store", store_url, "--json")
    assert own.code == 0, own.stderr
    row = json.loads(own.stdout)["rules"][0]
    stored = next(c for c in second.comparisons if c["system"] == "hybrid-v1")
    assert row["p_value"] == stored["p_adjusted"] and row["verdict"] == "PASS"
    # another baseline: tested afresh from the stored per-sample values
    other = invoke(
        "gate",
        hybrid,
        "--baseline",
        bm25_old,
        "--store",
        store_url,
        "--rule",
        "no_regression:retrieval.nDCG@10",
        "--json",
    )
    assert other.code == 0, other.stderr
    fresh = json.loads(other.stdout)["rules"][0]
    with open_store(store_url) as store:
        a = store.sample_values(hybrid, "retrieval", "nDCG@10")
        b = store.sample_values(bm25_old, "retrieval", "nDCG@10")
    test = stats.randomization_test(a, b, n_resamples=9999, seed=42)
    assert fresh["p_value"] == test.p_value and fresh["baseline_run_id"] == bm25_old
    # the other way round, the baseline is significantly worse: FAIL, exit 1
    worse = invoke(
        "gate",
        bm25_old,
        "--baseline",
        hybrid,
        "--store",
        store_url,
        "--rule",
        "no_regression:retrieval.nDCG@10",
        "--json",
    )
    assert worse.code == 1
    assert json.loads(worse.stdout)["rules"][0]["verdict"] == "FAIL"


def test_a_missing_extra_skips_its_task_and_the_rest_runs(here, monkeypatch):
    from ragmeter.runner.tasks.semantic import SemanticAdapter

    monkeypatch.setattr(SemanticAdapter, "extra_modules", ("ragmeter_no_such_module",))
    res = ragmeter.evaluate(
        config(
            {"answers": {"metrics": ["em"]}, "semantic": {}},
            gates={"rules": [{"metric": "semantic.semantic-similarity", "min": 0.5}]},
        ),
        cache_dir=None,
    )
    sem = res.systems["hybrid-v1"].tasks["semantic"]
    assert (sem.status, sem.reason) == (
        "skipped",
        "needs ragmeter[semantic] (pip install 'ragmeter[semantic]')",
    )
    assert res.systems["hybrid-v1"].tasks["answers"].status == "ok"
    assert [o.verdict for o in res.gates.outcomes] == ["SKIP", "SKIP"] and res.passed


def test_gold_labels_outside_the_label_set_name_the_gold_line(here):
    rows = jsonl(EXAMPLE / "data" / "gold.jsonl")
    rows[4]["type_classification"]["primary_type"] = "museum"
    rows[6]["ner_annotations"][1]["type"] = "LOC"
    gold = here / "gold.jsonl"
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    cfg = config({"classification": {"profile": "heritage"}})
    cfg["dataset"]["path"] = str(gold)
    with pytest.raises(ragmeter.InputError) as exc:
        ragmeter.evaluate(cfg, cache_dir=None)
    assert str(exc.value) == (
        "gold.jsonl:5: sample 's005': type_classification.primary_type: 'museum' is not a "
        "heritage label (expected one of G L A M O R C U B E S F I X P H D N T; labels are "
        "compared exactly)"
    )
    cfg = config({"ner": {"vocabulary": "heritage"}})
    cfg["dataset"]["path"] = str(gold)
    with pytest.raises(ragmeter.InputError) as exc:
        ragmeter.evaluate(cfg, cache_dir=None)
    assert str(exc.value).startswith(
        "gold.jsonl:7: sample 's007': ner_annotations[1].type: 'LOC' is not a heritage NER label"
    )
