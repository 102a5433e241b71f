"""The tool functions called as plain Python (no SDK): same numbers and messages as the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ragmeter.errors import RagmeterError
from ragmeter.mcp.compat import CompatTools
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.settings import Settings
from ragmeter.mcp.tools import OwnTools
from tests.helpers import CONFORMANCE, invoke
from tests.mcp.conftest import FIXED_TIME, STEPS, vector


def settings(root: Path, **kw) -> Settings:
    return Settings(roots=Roots([str(root)]), clock=lambda: FIXED_TIME, **kw)


@pytest.fixture
def compat(work: Path) -> CompatTools:
    return CompatTools(settings(work))


@pytest.fixture
def own(work: Path) -> OwnTools:
    return OwnTools(settings(work))


def test_no_sdk_imported_by_the_tool_modules():
    # the tool functions are unit-testable without an SDK: importing them imports none
    code = (
        "import sys; import ragmeter.mcp.compat, ragmeter.mcp.tools, ragmeter.mcp.ultrarag, "
        "ragmeter.mcp.answers_tool, ragmeter.mcp.judge_tool; "
        "print([m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')])"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- evaluate -----------------------------------------------------------------------------


def test_evaluate_cli_ultrarag_vector(compat):
    vec = vector("cli_vectors", "cli-ultrarag-01")
    rows = vec["input_jsonl"]
    out = compat.evaluate(
        [r["pred_answer"] for r in rows],
        [r["golden_answers"] for r in rows],
        ["em", "f1", "rouge-l"],
    )
    assert out["eval_res"] == vec["expected_metrics_output"]
    assert list(out["eval_res"]) == list(vec["expected_metrics_output"])
    assert out["ragmeter"]["profile"] == "ultrarag"


def test_evaluate_equals_the_cli(compat, tmp_path):
    vec = vector("cli_vectors", "cli-ultrarag-01")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in vec["input_jsonl"]), encoding="utf-8")
    cli = invoke("answers", str(src), "--profile", "ultrarag")
    assert cli.code == 0, cli.stderr
    expected = json.loads(cli.stdout)
    expected.pop("ragmeter")
    rows = vec["input_jsonl"]
    # None means all eight of UltraRAG's metrics; a bare string gold is one alias
    out = compat.evaluate([r["pred_answer"] for r in rows], [r["golden_answers"] for r in rows])
    assert out["eval_res"] == expected
    eight = ["acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l"]
    assert list(expected)[:8] == eight
    single = compat.evaluate(["Barack Obama"], ["Obama"], ["em", "acc"])
    assert single["eval_res"] == {"em": [0.0], "acc": [1.0], "avg_em": 0.0, "avg_acc": 1.0}


def test_answers_equals_the_cli(work, tmp_path):
    from ragmeter.mcp.answers_tool import AnswersTool

    vec = vector("cli_vectors", "cli-ultrarag-01")
    src = work / "answers-vector.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in vec["input_jsonl"]), encoding="utf-8")
    tool = AnswersTool(settings(work))
    ultrarag = {"profile": "ultrarag", "metrics": ["em", "f1,rouge-l"]}
    ultrarag_flags = ["--profile", "ultrarag", "-m", "em", "-m", "f1,rouge-l"]
    for args, flags in (({}, []), (ultrarag, ultrarag_flags)):
        cli = invoke("answers", str(src), *flags, "--summary-only")
        assert cli.code == 0, cli.stderr
        expected = json.loads(cli.stdout)
        out = tool.answers("answers-vector.jsonl", **args)
        assert {k: v for k, v in out.items() if k != "warnings"} == expected
        full = tool.answers("answers-vector.jsonl", per_sample=True, **args)
        assert full == {**json.loads(invoke("answers", str(src), *flags).stdout), "warnings": []}
    assert out["avg_em"] == 0.0 and out["avg_f1"] == pytest.approx(0.2857142857142857)
    with pytest.raises(RagmeterError) as exc:
        tool.answers("answers-vector.jsonl", metrics=["bleu"])
    assert str(exc.value).startswith("ragmeter answers: ")
    assert "bleu" in str(exc.value)
    with pytest.raises(RagmeterError, match="outside the allowed roots"):
        tool.answers("../elsewhere.jsonl")


def test_evaluate_errors_instead_of_silence(compat):
    with pytest.raises(RagmeterError) as exc:
        compat.evaluate(["a", "b"], [["a"], ["b"], ["c"]])
    assert str(exc.value) == (
        "ragmeter mcp: evaluate: pred_ls: 2 items, gt_ls: 3 (expected equal lengths)"
    )
    with pytest.raises(RagmeterError) as exc:
        compat.evaluate(["a"], [["a"]], ["em", "bleu"])
    assert str(exc.value).startswith("unknown metric 'bleu' (expected one of em, acc, stringem")


# -- evaluate_trec --------------------------------------------------------------------------


def test_evaluate_trec_equals_ragmeter_trec_format_ultrarag(compat, work):
    ks = "1,5,10,20,50,100"
    cli = invoke(
        "trec", "-m", "ultrarag", "--format", "ultrarag", "--ks", ks, str(work / "qrels.test"),
        str(work / "results.test"),
    )  # fmt: skip
    assert cli.code == 0, cli.stderr
    out = compat.evaluate_trec("results.test", "qrels.test")
    assert out["eval_res"] == json.loads(cli.stdout)
    assert list(out["eval_res"]) == list(json.loads(cli.stdout))
    assert out["eval_res"]["map"] == pytest.approx(0.1785, abs=5e-5)  # trec_eval's out.test
    assert out["eval_res"]["mrr"] == pytest.approx(0.4064, abs=5e-5)
    assert out["eval_res"]["P@10"] == 0.3
    assert len(out["eval_res"]) == 2 + 3 * 6


def test_evaluate_trec_writes_only_the_families_asked_for(compat):
    out = compat.evaluate_trec("results.test", "qrels.test", ["NDCG", "map"], [10, 5])
    assert list(out["eval_res"]) == ["map", "ndcg@5", "ndcg@10"]
    with pytest.raises(RagmeterError) as exc:
        compat.evaluate_trec("results.test", "qrels.test", ["bpref"])
    assert str(exc.value) == (
        "ragmeter mcp: evaluate_trec: unknown metric 'bpref' (expected mrr, map, recall, ndcg "
        "or precision; the trec tool takes any trec_eval or ir_measures name)"
    )


def test_malformed_run_line_is_the_cli_message(compat, own, work, monkeypatch):
    monkeypatch.chdir(work)
    cli = invoke("trec", "qrels.test", "bad.run")
    assert cli.code == 2
    with pytest.raises(RagmeterError) as exc:
        compat.evaluate_trec("bad.run", "qrels.test")
    assert str(exc.value) == cli.stderr.strip()
    assert str(exc.value).startswith("bad.run:2: ")
    with pytest.raises(RagmeterError) as exc:
        own.trec("qrels.test", "bad.run")
    assert str(exc.value) == cli.stderr.strip()


# -- evaluate_trec_pvalue -------------------------------------------------------------------


def test_pvalue_equals_ragmeter_compare_ultrarag(compat, work):
    cli = invoke(
        "compare", "--ultrarag", "-m", "map", "-m", "ndcg@10", "--n-resamples", "999",
        str(work / "qrels.test"), str(work / "results.test"), str(work / "results.reversed"),
    )  # fmt: skip
    assert cli.code == 0, cli.stderr
    out = compat.evaluate_trec_pvalue(
        "results.test", "results.reversed", "qrels.test", ["map", "ndcg"], [10], 999
    )
    assert out["eval_res"] == json.loads(cli.stdout)
    res = out["eval_res"]["map"]
    assert res["A_mean"] == pytest.approx(0.17854506039656948)
    assert res["diff"] == pytest.approx(res["A_mean"] - res["B_mean"])
    assert out["ragmeter"]["seed"] == 42 and out["ragmeter"]["n_resamples"] == 999


def test_pvalue_default_families_include_mrr(compat):
    out = compat.evaluate_trec_pvalue(
        "results.test", "results.test", "qrels.test", None, [5], n_resamples=99
    )
    assert list(out["eval_res"]) == ["recall@5", "ndcg@5", "P@5", "map", "mrr"]
    # identical runs: every difference is zero, p = 1
    assert {v["p_value"] for v in out["eval_res"].values()} == {1.0}
    assert not any(v["significant"] for v in out["eval_res"].values())


# -- save_path ------------------------------------------------------------------------------


def test_save_path_timestamp_and_exact(work):
    tools = CompatTools(settings(work, ultrarag=True))
    out = tools.evaluate(["a"], [["a"]], ["em"], "output/evaluate_results.json")
    name = "output/evaluate_results_20260102_030405.json"
    assert out["ragmeter"]["saved_to"] == name
    text = (work / name).read_text(encoding="utf-8")
    assert text == json.dumps(out["eval_res"], indent=4, ensure_ascii=False)
    meta = json.loads((work / (name + ".meta.json")).read_text(encoding="utf-8"))
    assert meta["profile"] == "ultrarag" and meta["saved_to"] == name
    exact = tools.evaluate_trec(
        "results.test", "qrels.test", ["map"], None, "out/exact.json", "exact"
    )
    assert exact["ragmeter"]["saved_to"] == "out/exact.json"
    assert json.loads((work / "out" / "exact.json").read_text()) == exact["eval_res"]
    # outside the ultrarag mode the default is the exact name
    plain = CompatTools(settings(work)).evaluate(["a"], [["a"]], ["em"], "out/plain.json")
    assert plain["ragmeter"]["saved_to"] == "out/plain.json"


def test_roots_rule_and_read_only(work):
    tools = CompatTools(settings(work))
    for bad in ("../qrels.test", str(work.parent / "x.txt")):
        with pytest.raises(RagmeterError) as exc:
            tools.evaluate_trec(bad, "qrels.test")
        assert str(exc.value) == (
            f"ragmeter mcp: path {bad!r} is outside the allowed roots ({work})"
        )
    link = work / "outside" / "link"
    link.symlink_to(work.parent)
    with pytest.raises(RagmeterError, match="outside the allowed roots"):
        tools.evaluate(["a"], [["a"]], None, "outside/link/escaped.json")
    assert not (work.parent / "escaped.json").exists()
    ro = CompatTools(settings(work, read_only=True))
    with pytest.raises(RagmeterError) as exc:
        ro.evaluate(["a"], [["a"]], None, "x.json")
    assert str(exc.value) == (
        "ragmeter mcp: evaluate: save_path writes files and this server runs with --read-only"
    )
    assert not (work / "x.json").exists()


# -- own tools ------------------------------------------------------------------------------


def test_grounded_is_grounded_02(own):
    vec = vector("grounded_vectors", "grounded-02")
    out = own.grounded("gold.jsonl", "trace.jsonl")
    expected = vec["expected_output"]
    assert {k: out[k] for k in expected} == expected
    assert list(out)[: len(expected)] == list(expected)
    assert out["pass"] is False and out["exit_status"] == 1
    assert len(out["warnings"]) == 3 and "details" not in out
    detailed = own.grounded("gold.jsonl", "trace.jsonl", details=True)
    assert [d["qid"] for d in detailed["details"]][:2] == ["G01", "G02"]


def test_steps_equals_the_cli(own):
    cli = invoke(
        "steps", "--reference", str(STEPS / "reference_1.yaml"), "--responses",
        str(STEPS / "actual_responses_1.jsonl"), "--json",
    )  # fmt: skip
    assert cli.code == 0, cli.stderr
    out = own.steps("reference_1.yaml", "responses_1.jsonl")
    assert out["aggregates"] == json.loads(cli.stdout)
    assert "records" not in out


def test_trec_equals_the_cli(own, work, monkeypatch):
    monkeypatch.chdir(work)
    cli = invoke("trec", "--json", "-m", "map", "-m", "nDCG@10", "qrels.test", "results.test")
    assert cli.code == 0, cli.stderr
    out = own.trec("qrels.test", "results.test", ["map", "nDCG@10"])
    assert out == json.loads(cli.stdout)
    assert out["summary"]["map"] == pytest.approx(0.1785, abs=5e-5)


def test_per_query_is_capped(work):
    tools = OwnTools(settings(work, max_rows=2))
    out = tools.trec("qrels.test", "results.test", ["map"], per_query=True)
    assert len(out["per_query"]) == 2 and out["truncated"] is True
    full = json.loads((work / out["complete_file"]).read_text(encoding="utf-8"))
    assert len(full) == 3 and out["complete_file"].startswith("results/mcp/")


def test_list_metrics_equals_the_cli(own):
    cli = invoke("metrics", "retrieval", "--json")
    assert own.list_metrics("retrieval")["metrics"] == json.loads(cli.stdout)


def test_pvalue_is_tv_sig_16(tmp_path):
    """TV-SIG-16 (UltraRAG's shape, from TV-SIG-15) through TREC files: with 100 relevant
    documents per query and runs of 100, P@100 equals each per-query score exactly."""
    stats = json.loads((CONFORMANCE / "stats" / "compare_systems.json").read_text(encoding="utf-8"))
    by_id = {v["id"]: v for v in stats["vectors"]}
    source, expected = by_id["TV-SIG-15"]["input"], by_id["TV-SIG-16"]["expected"]["json"]
    qrels, runs = [], {"hybrid": [], "bm25": []}
    for qid in source["query_ids"]:
        qrels += [f"{qid} 0 r{j} 1" for j in range(100)]
    for system, lines in runs.items():
        for qid, score in zip(source["query_ids"], source["scores"][system], strict=True):
            k = round(score * 100)
            docs = [f"r{j}" for j in range(k)] + [f"n{j}" for j in range(100 - k)]
            lines += [f"{qid} Q0 {d} {i + 1} {100 - i} {system}" for i, d in enumerate(docs)]
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    for system, lines in runs.items():
        (tmp_path / f"{system}.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = CompatTools(settings(tmp_path)).evaluate_trec_pvalue(
        "hybrid.run", "bm25.run", "qrels", ["precision"], [100]
    )
    assert out["eval_res"] == {"P@100": expected["ndcg@10"]}


def test_read_only_refuses_build_and_judge_but_not_reading(work):
    from ragmeter.mcp.judge_tool import JudgeTool
    from ragmeter.mcp.ultrarag import BuildTool

    ro = settings(work, read_only=True)
    with pytest.raises(RagmeterError) as exc:
        BuildTool(ro, []).build("parameter.yaml")
    assert str(exc.value) == (
        "ragmeter mcp: build: parameter_file writes files and this server runs with --read-only"
    )
    with pytest.raises(RagmeterError, match="judge: judging"):
        JudgeTool(ro).judge("gold.jsonl", ["faithfulness"])
    assert OwnTools(ro).trec("qrels.test", "results.test", ["map"])["summary"]["map"] > 0.17
