"""The golden edge cases of docs/retrieval.md ("Semantics", "Decisions"), through the CLI
and the Python API, with the inputs given as files, dicts, lists, pandas and pyarrow tables;
and the TV-IR vectors."""

from __future__ import annotations

import json
import math

import pandas as pd
import pyarrow as pa
import pytest

from ragmeter.errors import InputError
from ragmeter.retrieval import evaluate
from tests.helpers import CONFORMANCE, invoke

from .conftest import trec_qrels_text, trec_run_text

# every test once per TREC parse path (Arrow, small files, regular files): same output, same errors
pytestmark = pytest.mark.usefixtures("trec_parser")

# (case, qrels rows, run rows (qid, docno, score) in file order, options, expected summary)
CASES = [
    (
        1,
        [("q1", "dA", 1), ("q1", "dB", 0)],
        [("q1", "dA", 1.0), ("q1", "dB", 1.0), ("q1", "dC", 0.5)],
        {},
        {"recip_rank": 0.5},
    ),
    (2, [("q1", "d2", 1)], [("q1", "d1", 0.1), ("q1", "d2", 0.9)], {}, {"recip_rank": 1.0}),
    (
        3,
        [("q1", d, 1) for d in ("d1", "d2", "d8", "d9")],
        [("q1", "d1", 3), ("q1", "d5", 2), ("q1", "d2", 1)],
        {},
        {
            "P_10": 0.2,
            "Rprec": 0.5,
            "map_cut_2": 0.25,
            "map": 0.4167,
            "recall_10": 0.5,
            "success_1": 1.0,
        },
    ),
    (
        4,
        [("q1", "d1", 1), ("q2", "d1", 1)],
        [("q1", "d1", 1), ("q3", "d1", 1)],
        {},
        {"map": 1.0, "num_q": 1},
    ),
    (
        5,
        [("q1", "d1", 1), ("q2", "d1", 1)],
        [("q1", "d1", 1), ("q3", "d1", 1)],
        {"complete": True},
        {"map": 0.5, "P_5": 0.1, "num_q": 2},
    ),
    (
        7,
        [("q1", "d1", 3), ("q1", "d2", 1)],
        [("q1", "d2", 2), ("q1", "d1", 1)],
        {},
        {"ndcg": 0.7967, "ndcg_cut_10": 0.7967, "nDCG(gain=exp)@10": 0.7098},
    ),
    (
        8,
        [("q1", "d1", 1), ("q1", "d2", 2)],
        [("q1", "d1", 2), ("q1", "d2", 1)],
        {"relevance_level": 2},
        {"map": 0.5, "recip_rank": 0.5, "P_1": 0.0, "ndcg_cut_10": 0.8597},
    ),
    (
        9,
        [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", -1), ("q1", "d4", 1), ("q1", "d5", 0)],
        [("q1", "dX", 9), ("q1", "d3", 8), ("q1", "d2", 7), ("q1", "d1", 6), ("q1", "d4", 5)],
        {},
        {
            "num_rel": 2,
            "map": 0.3250,
            "bpref": 0.5,
            "P_5": 0.4,
            "infAP": 0.3750,
            "num_nonrel_judged_ret": 1,
            "unj_5": 0.4,
            "rbp_resid": 0.7805,
            "Judged@5": 0.8,
        },
    ),
    (
        10,
        [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", -1), ("q1", "d4", 1), ("q1", "d5", 0)],
        [("q1", "dX", 9), ("q1", "d3", 8), ("q1", "d2", 7), ("q1", "d1", 6), ("q1", "d4", 5)],
        {"judged_only": True},
        {"map": 0.5833, "recip_rank": 0.5, "P_5": 0.4},
    ),
    (
        11,
        [("q1", "d1", 1), ("q2", "d1", 0)],
        [("q1", "d1", 1), ("q2", "d1", 1)],
        {},
        {"map": 0.5, "ndcg_cut_10": 0.5, "P_1": 0.5, "recip_rank": 0.5, "num_q": 2},
    ),
    (
        12,
        [("q1", "d1", 1), ("q1", "d2", 1)],
        [("q1", "d9", 3), ("q1", "d1", 2)],
        {},
        {"bpref": 0.5},
    ),
]

_FLAGS = {"complete": ["-c"], "judged_only": ["-J"], "relevance_level": ["-l2"]}
# measures as the CLI spells them (the summary keys above are printed names)
_REQUEST = {
    "recip_rank": "recip_rank",
    "P_10": "P.10",
    "Rprec": "Rprec",
    "map_cut_2": "map_cut.2",
    "map": "map",
    "recall_10": "recall.10",
    "success_1": "success.1",
    "num_q": "num_q",
    "P_5": "P.5",
    "ndcg": "ndcg",
    "ndcg_cut_10": "ndcg_cut.10",
    "nDCG(gain=exp)@10": "nDCG(gain=exp)@10",
    "P_1": "P.1",
    "num_rel": "num_rel",
    "bpref": "bpref",
    "infAP": "infAP",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "unj_5": "unj.5",
    "rbp_resid": "rbp_resid",
    "Judged@5": "Judged@5",
}


def _forms(qrels_rows, run_rows, write):
    """The same inputs as files, dicts, lists, pandas and pyarrow tables."""
    qd: dict = {}
    for q, d, g in qrels_rows:
        qd.setdefault(q, {})[d] = g
    rd: dict = {}
    for q, d, s in run_rows:
        rd.setdefault(q, {})[d] = s
    qdf = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    rdf = pd.DataFrame(run_rows, columns=["qid", "docno", "score"])
    yield (
        "files",
        write("qrels.txt", trec_qrels_text(qrels_rows)),
        write("run.txt", trec_run_text(run_rows)),
    )
    yield "dicts", qd, rd
    yield "pandas", qdf, rdf
    yield "pyarrow", pa.Table.from_pandas(qrels_rows and qdf), pa.Table.from_pandas(rdf)
    scores = {s for _, _, s in run_rows}
    if len(scores) == len(run_rows):  # lists carry the ranking only: no ties
        ranked: dict = {}
        for q, d, _ in sorted(run_rows, key=lambda r: (r[0], -r[2])):
            ranked.setdefault(q, []).append(d)
        yield "lists", qd, ranked


@pytest.mark.parametrize(
    ("case", "qrels", "run", "opts", "expected"), CASES, ids=[f"case{c[0]}" for c in CASES]
)
def test_golden_edge_case_api(case, qrels, run, opts, expected, write):
    measures = [_REQUEST[k] for k in expected]
    for form, q, r in _forms(qrels, run, write):
        res = evaluate(q, r, measures, **opts)
        for name, value in expected.items():
            got = res.summary[name]
            assert f"{got:.4f}" == f"{value:.4f}", (form, name, got)


@pytest.mark.parametrize(
    ("case", "qrels", "run", "opts", "expected"), CASES, ids=[f"case{c[0]}" for c in CASES]
)
def test_golden_edge_case_cli(case, qrels, run, opts, expected, write):
    qp = write("qrels.txt", trec_qrels_text(qrels))
    rp = write("run.txt", trec_run_text(run))
    args = ["trec"]
    for k in opts:
        args += _FLAGS[k]
    for name in expected:
        args += ["-m", _REQUEST[name]]
    res = invoke(*args, qp, rp)
    assert res.code == 0, res.stderr
    got = {line.split("\t")[0].strip(): line.split("\t")[2] for line in res.stdout.splitlines()}
    for name, value in expected.items():
        if isinstance(value, int) and name.startswith("num"):
            assert got[name] == str(value)
        else:
            assert got[name] == f"{value:.4f}", name


def test_case4_warnings_name_skipped_and_ignored_queries(write):
    qp = write("qrels.txt", "q1 0 d1 1\nq2 0 d1 1\n")
    rp = write("run.txt", "q1 Q0 d1 1 1 r\nq3 Q0 d1 1 1 r\n")
    res = invoke("trec", "-m", "map", "-m", "num_q", qp, rp)
    assert res.stdout == "num_q                 \tall\t1\nmap                   \tall\t1.0000\n"
    assert res.stderr.splitlines() == [
        f"ragmeter trec: warning: 1 judged query has no results in {rp} and was skipped: q2 "
        "(use -c to score missing queries as 0)",
        f"ragmeter trec: warning: 1 query in {rp} has no judgments in {qp} and was ignored: q3",
    ]
    api = evaluate(qp, rp, ["map"])
    assert any("was skipped: q2" in w for w in api.warnings)
    assert any("was ignored: q3" in w for w in api.warnings)


def test_case5_missing_query_prints_zeros_with_q(write):
    qp = write("qrels.txt", "q1 0 d1 1\nq2 0 d1 1\n")
    rp = write("run.txt", "q1 Q0 d1 1 1 r\nq3 Q0 d1 1 1 r\n")
    res = invoke("trec", "-c", "-q", "-m", "official", qp, rp)
    q2 = [ln.split("\t") for ln in res.stdout.splitlines() if ln.split("\t")[1] == "q2"]
    values = {name.strip(): v for name, _, v in q2}
    assert values["num_ret"] == "0" and values["num_rel"] == "1" and values["num_rel_ret"] == "0"
    others = {k: v for k, v in values.items() if not k.startswith("num_")}
    assert others and all(v == "0.0000" for v in others.values())
    api = evaluate(qp, rp, ["map"], complete=True)
    assert api.statuses("map") == {"q1": "ok", "q2": "missing_zeroed"}
    assert api.values("AP") == {"q1": 1.0, "q2": 0.0}


def test_case6_duplicate_is_an_error_and_dedupe_keeps_one(write):
    qp = write("qrels.txt", "q1 0 d1 1\n")
    rp = write("run.txt", "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d1 3 0.1 r\n")
    res = invoke("trec", "-m", "recip_rank", qp, rp)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        f"{rp}:3: document 'd1' appears twice for query 'q1' (first at line 1); use --dedupe "
        "first or --dedupe max to keep one\n"
    )
    for policy in ("first", "max"):
        ok = invoke("trec", "-m", "recip_rank", "--dedupe", policy, qp, rp)
        assert ok.stdout == "recip_rank            \tall\t1.0000\n"
        assert f"--dedupe {policy} dropped 1 duplicate line" in ok.stderr
    with pytest.raises(InputError) as exc:
        evaluate({"q1": {"d1": 1}}, {"q1": ["d1", "d2", "d1"]}, ["RR"])
    assert str(exc.value) == (
        "run['q1'][2]: document 'd1' appears twice for query 'q1' (first at run['q1'][0]); "
        "use --dedupe first or --dedupe max to keep one"
    )
    assert evaluate(
        {"q1": {"d1": 1}}, {"q1": ["d2", "d1", "d1"]}, ["RR"], dedupe="first"
    ).summary == {"RR": 0.5}


def test_case9_infap_full_precision(write):
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": -1, "d4": 1, "d5": 0}}
    run = {"q1": {"dX": 9, "d3": 8, "d2": 7, "d1": 6, "d4": 5}}
    res = evaluate(qrels, run, ["infAP", "rbp_resid"])
    eps = 1e-5
    by_hand = (
        1 / 4 + (2 / 4) * eps / (1 + 2 * eps) + 1 / 5 + (3 / 5) * (1 + eps) / (2 + 2 * eps)
    ) / 2
    assert math.isclose(res.summary["infAP"], 0.375002499950001, rel_tol=1e-13)
    assert math.isclose(res.summary["infAP"], by_hand, rel_tol=1e-12)
    assert math.isclose(res.summary["rbp_resid"], 0.9**5 + 0.1 * (1 + 0.9), rel_tol=1e-12)


def test_case8_relevance_level_is_ignored_by_ndcg():
    res = evaluate(
        {"q1": {"d1": 1, "d2": 2}}, {"q1": {"d1": 2, "d2": 1}}, ["ndcg_cut.10"], relevance_level=2
    )
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert res.summary["ndcg_cut_10"] == pytest.approx(dcg / idcg, rel=1e-15)


def test_ir_measures_tuples_are_accepted():
    from ir_measures import Qrel, ScoredDoc

    qrels = [Qrel("q1", "d1", 1), Qrel("q1", "d2", 0)]
    run = [ScoredDoc("q1", "d1", 0.5), ScoredDoc("q1", "d2", 0.9)]
    assert evaluate(qrels, run, ["RR", "AP"]).summary == {"AP": 0.5, "RR": 0.5}


def test_numpy_scalars_and_int_qids_are_accepted():
    import numpy as np

    qrels = {7: {"d1": np.int64(1)}}
    run = {"7": {"d1": np.float32(0.5), "d2": np.float32(0.7)}}
    res = evaluate(qrels, run, ["RR"])
    assert res.summary == {"RR": 0.5}
    assert any("converted to decimal strings" in w for w in res.warnings)


# ---- TV-IR-01 … 04 (the trec_eval blocks of the heritage vectors) ---------------------------

_HERITAGE = json.loads((CONFORMANCE / "extraction" / "heritage_retrieval_answer.json").read_text())
_TV = {
    v["id"]: v
    for v in _HERITAGE["vectors"]
    if v["id"] in ("TV-IR-01", "TV-IR-02", "TV-IR-03", "TV-IR-04")
}


def _trec_request(name: str) -> str:
    base, _, k = name.rpartition("_")
    return f"{base}.{k}" if k.isdigit() else name


@pytest.mark.parametrize("vid", ["TV-IR-01", "TV-IR-02"])
def test_heritage_vectors_summary(vid):
    v = _TV[vid]
    expected = v["expected"]["trec_eval"]
    res = evaluate(v["input"]["qrels"], v["input"]["run"], [_trec_request(k) for k in expected])
    for name, value in expected.items():
        assert math.isclose(res.summary[name], value, rel_tol=1e-9, abs_tol=1e-12), name


def test_heritage_query_without_relevant_documents():
    v = _TV["TV-IR-03"]
    expected = v["expected"]["trec_eval"]
    names = list(expected["q1"])
    res = evaluate(v["input"]["qrels"], v["input"]["run"], [_trec_request(k) for k in names])
    table = res.per_query.to_pylist()
    got = {row["qid"]: row for row in table}
    for qid, values in expected.items():
        for name, value in values.items():
            assert math.isclose(got[qid][name], value, rel_tol=1e-9, abs_tol=1e-12), (qid, name)


def test_heritage_ties_broken_by_docno_descending():
    v = _TV["TV-IR-04"]
    res = evaluate(v["input"]["qrels"], v["input"]["run"], ["recip_rank"])
    assert res.summary["recip_rank"] == v["expected"]["trec_eval_recip_rank"]
    assert res.summary["recip_rank"] != v["expected"]["ranx_mrr"]


@pytest.mark.parametrize(
    ("sep", "inner"),
    [("\t", b" "), (" ", b"\t"), (" ", b"\x0b"), (" ", b"\x0c"), (" ", b"\r"), ("\t", b"\r")],
)
@pytest.mark.parametrize("extra", [(), ("--stream",), ("mapped",)])
def test_whitespace_of_another_kind_after_the_first_lines_splits_fields(
    trec_parser, write, monkeypatch, sep, inner, extra
):
    # The first lines decide how a file is parsed; trec_eval splits every line on any
    # whitespace, so "dx<ws>y" on line 3,001 retrieves dx (it is judged relevant) there too.
    lines = [
        sep.join(["1", "Q0", f"d{i}", str(i), f"{1000 - i / 10}", "r"]).encode()
        for i in range(3000)
    ]
    lines.append(sep.encode().join([b"1", b"Q0", b"dx" + inner + b"y", b"3001", b"0.5", b"r"]))
    run = write("run", b"\n".join(lines) + b"\n")
    qrels = write("qrels", "1 0 dx 1\n1 0 zz 1\n")
    if extra == ("mapped",):  # a large file is parsed segment by segment from a memory map
        from ragmeter.io.trec import parse

        monkeypatch.setattr(parse, "_SEGMENT", 1 << 12)
        extra = ()
    res = invoke("trec", *extra, "-m", "num_ret", "-m", "num_rel_ret", qrels, run)
    assert res.code == 0, res.stderr
    assert res.stdout.split() == ["num_ret", "all", "3001", "num_rel_ret", "all", "1"]
