"""The Python API: Result contract, views, outputs, Evaluator statelessness, import hygiene,
measure names and the registry entry (docs/retrieval.md, "Python API", "Measure names")."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from ragmeter import registry
from ragmeter.errors import UsageError
from ragmeter.result import SAMPLES_SCHEMA, Result
from ragmeter.retrieval import Evaluator, RetrievalResult, evaluate, parse_measures
from tests.helpers import CONFORMANCE, fresh_python, warns

DATA = CONFORMANCE / "trec_eval"
QRELS = DATA / "qrels.test"
RUN = DATA / "results.test"
HEAVY = ("pandas", "scipy", "typer", "rich", "pydantic")


def _modules_after(code: str) -> list[str]:
    proc = fresh_python(
        "-c", code + "\nimport sys\nprint(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    return json.loads(proc.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_import_hygiene_of_the_package():
    loaded = _modules_after("import ragmeter.retrieval")
    assert not set(HEAVY) & set(loaded)


def test_the_trec_command_never_loads_heavy_modules():
    code = (
        "from ragmeter.cli.entry import main\n"
        f"main(['trec', '-q', '-m', 'all_trec', '--json', {str(QRELS)!r}, {str(RUN)!r}])\n"
        f"main(['trec', '-m', 'official', {str(QRELS)!r}, {str(RUN)!r}])"
    )
    loaded = _modules_after(code)
    assert not set(HEAVY) & set(loaded), set(HEAVY) & set(loaded)


def test_a_small_file_run_loads_neither_arrow_nor_the_name_suggestions():
    # the import budget of ``ragmeter trec`` on a small run (benchmarks/README.md, "Retrieval"):
    # numpy and ragmeter's own modules; no Arrow (a small file is parsed in Python) and none of
    # the standard library modules that only a bad measure name or another output needs
    code = (
        "import os, sys\n"
        "from ragmeter.cli.entry import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"main(['trec', {str(QRELS)!r}, {str(RUN)!r}])\n"
        "sys.stdout = sys.__stdout__"
    )
    loaded = set(_modules_after(code))
    assert "numpy" in loaded
    unwanted = {"pyarrow", "difflib", "cloudpickle", "json", "csv", "decimal", "logging"}
    assert not (set(HEAVY) | unwanted) & loaded, (set(HEAVY) | unwanted) & loaded


def test_the_trec_command_keeps_a_lean_hot_path():
    """The benchmark's measures (benchmarks/README.md) neither load pyarrow.compute (~20 ms of
    wrapper generation) nor numpy.ma (~15 ms, behind np.unique), and Arrow keeps every core:
    OMP_NUM_THREADS=1 would make its CSV parse serial."""
    code = (
        "import os, sys\n"
        "from ragmeter.cli.entry import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        "main(['trec', '-m', 'map', '-m', 'ndcg_cut.10', '-m', 'recip_rank', '-m', 'recall.100',"
        f" '-m', 'P.10', {str(QRELS)!r}, {str(RUN)!r}])\n"
        "sys.stdout = sys.__stdout__\n"
        "print([m for m in ('pyarrow.compute', 'numpy.ma') if m in sys.modules],"
        " 'OMP_NUM_THREADS' in os.environ)"
    )
    proc = fresh_python("-c", code)
    assert proc.stdout.strip().splitlines()[-1] == "[] False"


def test_result_contract():
    res = evaluate(QRELS, RUN, ["map", "P.5,10", "nDCG@10", "num_rel", "gm_map", "relstring"])
    assert isinstance(res, RetrievalResult) and isinstance(res, Result)
    assert res.samples.schema == SAMPLES_SCHEMA
    assert set(res.samples.column("metric").to_pylist()) == {
        "AP",
        "P@5",
        "P@10",
        "nDCG@10",
        "NumRel",
    }
    assert set(res.samples.column("status").to_pylist()) == {"ok"}
    assert list(res.aggregates) == ["NumRel", "AP", "gm_map", "P@5", "P@10", "nDCG@10"]
    assert res.aggregates["AP"].n == 3 and dict(res.aggregates["AP"].status_counts) == {"ok": 3}
    assert res.summary == {
        "num_rel": 561,
        "map": res.aggregates["AP"].value,
        "gm_map": res.aggregates["gm_map"].value,
        "P_5": res.aggregates["P@5"].value,
        "P_10": res.aggregates["P@10"].value,
        "nDCG@10": res.aggregates["nDCG@10"].value,
    }
    # every spelling reads the same per-query values
    a = res.values("nDCG@10")
    assert a == res.values("ndcg_cut_10") == res.values("ndcg_cut.10")
    assert set(a) == {"301", "302", "303"}
    assert res.values("map") == res.values("AP") == res.values(["retrieval", "AP"][1])
    table = res.per_query
    assert table.column_names == ["qid", "num_rel", "map", "P_5", "P_10", "relstring", "nDCG@10"]
    assert table.column("relstring").to_pylist() == [
        "'0000011000'"[1:-1],
        "1101110110",
        "0000000000",
    ]
    assert table.column("num_rel").type == pa.int64()
    # the mean of the per-sample values is the summary (level "sample")
    vals = [a[q] for q in sorted(a)]
    assert math.isclose(sum(vals) / 3, res.summary["nDCG@10"], rel_tol=1e-15)


def test_round_trip_through_the_foundation_serialisation():
    res = evaluate(QRELS, RUN, ["all_trec"])
    again = RetrievalResult.from_dict(json.loads(res.to_json(samples=True)))
    assert again.to_trec() == res.to_trec() == (DATA / "out.test.a").read_text()
    assert again.per_query.equals(res.per_query)


def test_to_pandas_views():
    res = evaluate(QRELS, RUN, ["map", "P.5"])
    wide = res.to_pandas()
    assert list(wide.columns) == ["qid", "map", "P_5"] and len(wide) == 3
    long = res.to_pandas(long=True)
    assert list(long.columns) == ["id", "metric", "value", "status", "detail"] and len(long) == 6


def test_json_document_layout():
    res = evaluate(QRELS, RUN, ["map", "num_q", "P.5"])
    doc = json.loads(res.to_json())
    assert doc["ragmeter"]["command"] == "trec" and doc["ragmeter"]["reference"] == "trec_eval 10.0"
    assert doc["inputs"]["qrels"]["topics"] == 3 and doc["inputs"]["qrels"]["lines"] == 3681
    assert doc["inputs"]["run"] == {
        "path": str(RUN),
        "sha256": doc["inputs"]["run"]["sha256"],
        "runid": "STANDARD",
        "queries": 3,
        "lines": 1500,
    }
    assert len(doc["inputs"]["run"]["sha256"]) == 64
    assert doc["options"]["relevance_level"] == 1 and doc["options"]["ties"] == "docno"
    assert doc["measures"][0] == {
        "name": "num_q",
        "trec": "num_q",
        "ir": "NumQ",
        "canonical": "NumQ",
        "params": {},
        "reference": "trec_eval 10.0",
    }
    assert doc["summary"]["num_q"] == 3 and isinstance(doc["summary"]["num_q"], int)
    assert doc["summary"]["map"] == pytest.approx(0.17854, abs=1e-5)
    assert doc["per_query"]["301"]["map"] == res.values("map")["301"]
    assert doc["queries"] == {
        "evaluated": 3,
        "missing_skipped": [],
        "missing_zeroed": [],
        "unjudged_ignored": [],
    }
    assert doc["ties"]["adjacent_tied_pairs"] >= 0
    assert doc["warnings"] == []
    assert "per_query" not in json.loads(res.to_json(samples=False))


def test_csv_output():
    res = evaluate(QRELS, RUN, ["map", "num_ret"])
    lines = res.to_csv().splitlines()
    assert lines[0] == "runid,qid,measure,value"
    assert "STANDARD,301,num_ret,500" in lines
    assert f"STANDARD,all,map,{res.summary['map']!r}" in lines
    assert lines[-1] == "STANDARD,all,map," + repr(res.summary["map"])
    assert res.to_csv(queries=False).splitlines()[1:] == ["STANDARD,all,num_ret,1500", lines[-1]]


def test_ultrarag_preset_and_format():
    res = evaluate(QRELS, RUN, ["ultrarag"])
    out = json.loads(res.to_ultrarag())
    assert list(out)[:5] == ["map", "mrr", "ndcg@1", "P@1", "recall@1"]
    expected = {
        "map": 0.1785,
        "mrr": 0.4064,
        "ndcg@1": 0.3333,
        "P@1": 0.3333,
        "recall@1": 0.0043,
        "ndcg@5": 0.2768,
        "P@5": 0.2667,
        "recall@5": 0.0173,
        "ndcg@10": 0.3016,
        "P@10": 0.3000,
        "recall@10": 0.0317,
        "ndcg@20": 0.3525,
        "P@20": 0.3667,
        "recall@20": 0.1061,
        "ndcg@50": 0.3799,
        "P@50": 0.3400,
        "recall@50": 0.3223,
        "ndcg@100": 0.3916,
        "P@100": 0.2467,
        "recall@100": 0.4980,
    }
    assert list(out) == list(expected)
    assert {k: round(v, 4) for k, v in out.items()} == expected
    assert res.to_ultrarag().startswith('{\n    "map": ')
    with pytest.raises(UsageError, match="'bpref' has no UltraRAG key"):
        evaluate(QRELS, RUN, ["map", "bpref"]).to_ultrarag()


def test_evaluator_is_stateless_and_thread_safe():
    ev = Evaluator(QRELS, ["all_trec"])
    runs = [RUN, DATA / "results.trunc", DATA / "results-302.test"]
    expected = [ev.evaluate(r).to_trec(queries=True) for r in runs]
    assert [ev.evaluate(r).to_trec(queries=True) for r in runs] == expected
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda r: ev.evaluate(r).to_trec(queries=True), runs * 3))
    assert got == expected * 3


def test_several_runs_against_one_evaluator_share_nothing():
    ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["RR"])
    assert ev.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}).summary == {"RR": 1.0}
    assert ev.evaluate({"q1": {"d1": 1.0, "d2": 2.0}}).summary == {"RR": 0.5}
    assert ev.evaluate({"q1": {"d1": 2.0, "d2": 1.0}}).summary == {"RR": 1.0}


def test_names_option_forces_one_style():
    def names(mode):
        return list(
            evaluate(QRELS, RUN, ["map", "nDCG@10", "gm_map", "P(rel=2)@5"], names=mode).summary
        )

    assert names("as-requested") == ["map", "gm_map", "nDCG@10", "P(rel=2)@5"]
    assert names("trec") == ["map", "gm_map", "ndcg_cut_10", "P(rel=2)@5"]
    assert names("ir") == ["AP", "gm_map", "nDCG@10", "P(rel=2)@5"]


def test_gain_exp_rewrites_ndcg_requests():
    res = evaluate(QRELS, RUN, ["ndcg", "ndcg_cut.10", "nDCG@5"], gain="exp")
    assert list(res.summary) == ["ndcg_exp", "nDCG(gain=exp)@5", "ndcg_cut_exp_10"]
    binary = evaluate(QRELS, RUN, ["ndcg_cut.10"])  # binary qrels: 2^1 − 1 = 1, same values
    assert res.summary["ndcg_cut_exp_10"] == binary.summary["ndcg_cut_10"]


def test_ties_file_keeps_file_order():
    qrels = {"q1": {"dA": 1}}
    run = [("q1", "dA", 1.0), ("q1", "dB", 1.0)]
    import pandas as pd

    df = pd.DataFrame(run, columns=["qid", "docno", "score"])
    assert evaluate(qrels, df, ["RR"]).summary == {"RR": 0.5}
    assert evaluate(qrels, df, ["RR"], ties="file").summary == {"RR": 1.0}
    res = evaluate(qrels, df, ["RR"])
    assert any("all scores equal" in w and "q1" in w for w in res.warnings)


def test_per_measure_relevance_level_and_judged_only():
    qrels = {"q1": {"d1": 1, "d2": 2, "d3": -1}}
    run = {"q1": {"d3": 3.0, "d1": 2.0, "d2": 1.0}}
    res = evaluate(qrels, run, ["P@2", "P(rel=2)@2", "RR", "RR(judged_only=true)", "AP(rel=2)"])
    assert res.summary == {
        "P@2": 0.5,
        "RR": 0.5,
        "P(rel=2)@2": 0.0,
        "RR(judged_only=true)": 1.0,
        "AP(rel=2)": 1 / 3,
    }


def test_extension_measures():
    qrels = {"q1": {"d1": 1, "d2": 1, "d3": 0}}
    run = {"q1": {"d9": 4.0, "d1": 3.0, "d3": 2.0, "d2": 1.0}}
    res = evaluate(
        qrels,
        run,
        [
            "RR@1",
            "RR@2",
            "Judged@2",
            "Success(all=true)@3",
            "Success(all=true)@4",
            "mrr@10",
            "hit_rate@1",
        ],
    )
    assert res.summary == {
        "RR@1": 0.0,
        "RR@2": 0.5,
        "RR@10": 0.5,
        "Judged@2": 0.5,
        "Success@1": 0.0,
        "Success(all=true)@3": 0.0,
        "Success(all=true)@4": 1.0,
    }


def test_rbp_published_definition_and_ir_default_p():
    qrels = {"q1": {"d1": 1, "d2": 1}}
    run = {"q1": {"d1": 3.0, "dx": 2.0, "d2": 1.0}}
    res = evaluate(qrels, run, ["rbp", "RBP", "rbp_resid", "RBP_resid(tail=true)"])
    assert res.summary["rbp"] == pytest.approx(0.1 * (1 + 0.81))
    assert res.summary["RBP(p=0.8)"] == pytest.approx(0.2 * (1 + 0.64))
    assert res.summary["rbp_resid"] == pytest.approx(0.9**3 + 0.1 * 0.9)
    judged = evaluate(
        qrels, {"q1": {"d1": 3.0, "d2": 1.0}}, ["rbp_resid", "RBP_resid(p=0.9,tail=true)"]
    )
    assert judged.summary["rbp_resid"] == 0.0  # trec_eval's rule: nothing unjudged → 0
    assert judged.summary["RBP_resid(p=0.9,tail=true)"] == pytest.approx(0.81)


def test_custom_gains_and_graded_rbp_rescaling():
    qrels = {"q1": {"d1": 4, "d2": 1}}
    run = {"q1": {"d2": 2.0, "d1": 1.0}}
    res = evaluate(qrels, run, ["rbp", "ndcg.1=3,4=1", "nDCG(gains={1:3,4:1})@1"])
    assert res.summary["rbp"] == pytest.approx(0.1 * (1 / 4 + 0.9 * 4 / 4))
    assert res.summary["ndcg_1=3,4=1"] == pytest.approx(1.0)
    assert res.summary["nDCG(gains={1:3,4:1})@1"] == pytest.approx(1.0)


# ---- measure names and the registry -------------------------------------------------------


def test_parse_measures_grammar():
    got = [
        (m.printed(), m.canonical, m.trec_name, m.ir_name)
        for m in parse_measures("P.10,5 nDCG(gain=exp)@10 iprec_at_recall..1")
    ]
    assert got == [
        ("iprec_at_recall_0.10", "IPrec@0.1", "iprec_at_recall_0.10", "IPrec@0.1"),
        ("P_5", "P@5", "P_5", "P@5"),
        ("P_10", "P@10", "P_10", "P@10"),
        ("nDCG(gain=exp)@10", "nDCG(gain=exp)@10", "ndcg_cut_exp_10", "nDCG(gain=exp)@10"),
    ]
    assert [m.printed() for m in parse_measures(["P.5", "P.10"])] == ["P_5", "P_10"]
    assert [m.printed() for m in parse_measures(["all_trec", "P.7"])].count("P_7") == 1
    assert "P_5" not in [m.printed() for m in parse_measures(["all_trec", "P.7"])]
    w: list[str] = []
    assert [m.printed() for m in parse_measures("recall.3.9", warnings=w)] == ["recall_3"]
    assert w == ["cutoff '3.9' in 'recall.3.9' is not an integer; using 3"]
    assert parse_measures("ndcg_cut_10")[0].printed() == "ndcg_cut_10"
    m = parse_measures("nDCG(gains={0: 0, 1: 1, 2: 3})@10")[0]
    assert m.printed() == "nDCG(gains={0:0,1:1,2:3})@10" and m.gains == (
        (0, 0.0),
        (1, 1.0),
        (2, 3.0),
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("P.x", "bad cutoff 'x' in 'P.x' (cutoffs are integers ≥ 1)"),
        ("utility.1", "utility takes exactly 4 coefficients, not 1 ('utility.1')"),
        ("P@10(rel=2)", "unknown measure 'P@10(rel=2)'"),
        ("nDCG(gain=log)@10", "bad gain 'log' in 'nDCG(gain=log)@10' (expected linear or exp)"),
        ("RBP(p=1.5)", "bad p '1.5' in 'RBP(p=1.5)' (expected 0 < p < 1)"),
        ("P", None),
    ],
)
def test_parse_errors(name, message):
    if message is None:
        assert len(parse_measures(name)) == 9
        return
    with pytest.raises(UsageError) as exc:
        parse_measures(name)
    assert str(exc.value).startswith("ragmeter trec: " + message)


def test_registry_resolves_every_spelling_to_the_canonical_name():
    for spelling in (
        "retrieval.ndcg_cut.10",
        "retrieval.ndcg_cut_10",
        "retrieval.nDCG@10",
        "retrieval.ndcg@10",
    ):
        hit = registry.resolve(spelling)
        assert (hit.canonical, hit.definition.name, dict(hit.params)) == (
            "nDCG@10",
            "nDCG@k",
            {"k": 10},
        )
    assert registry.resolve("retrieval.map").canonical == "AP"
    assert registry.resolve("retrieval.recip_rank").canonical == "RR"
    assert registry.resolve("retrieval.gm_map").canonical == "gm_map"
    assert registry.resolve("retrieval.P_5").canonical == "P@5"
    assert registry.resolve("retrieval.iprec_at_recall_0.10").canonical == "IPrec@0.1"
    with pytest.raises(registry.UnknownMetricError, match="did you mean 'nDCG@10'"):
        registry.resolve("retrieval.NDCG10")
    with pytest.raises(UsageError, match="names 2 values"):
        registry.resolve("retrieval.P.5,10")


def test_result_canonical_names_match_the_registry():
    res = evaluate(QRELS, RUN, ["all_trec", "RR@10", "Judged@5", "nDCG(gain=exp)@10"])
    for canonical in res.aggregates:
        assert registry.resolve(f"retrieval.{canonical}").canonical == canonical


def test_warnings_are_issued_and_recorded():
    from ragmeter.warnings import RagmeterWarning

    with warns(RagmeterWarning, "was skipped: 302"):
        res = evaluate(QRELS, DATA / "results.trunc", ["map"])
    assert res.warnings == [
        f"1 judged query has no results in {DATA / 'results.trunc'} and was skipped: 302 "
        "(use -c to score missing queries as 0)"
    ]
