"""``ragmeter compare QRELS RUN_A RUN_B`` on trec_eval's own test files (TREC mode).

TREC mode scores runs with the retrieval engine; the per-query values are checked against
pytrec_eval and the p-values against scipy.
"""

from __future__ import annotations

import json

import numpy as np
import pytrec_eval
from scipy import stats as sps

from tests.helpers import CONFORMANCE, invoke

TREC = CONFORMANCE / "trec_eval"
QRELS = TREC / "qrels.test"
RUN_A = TREC / "results.test"
RUN_B = TREC / "results.trunc"


def _pytrec(run_path, measures):
    def read(path, cols):
        out = {}
        for line in path.read_text().splitlines():
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            if cols == 4:
                out.setdefault(f[0], {})[f[2]] = int(f[3])
            else:
                out.setdefault(f[0], {})[f[2]] = float(f[4])
        return out

    qrels = read(QRELS, 4)
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(measures))
    return ev.evaluate(read(run_path, 6))


def test_trec_mode_matches_pytrec_eval_and_scipy():
    res = invoke(
        "compare",
        str(QRELS),
        str(RUN_A),
        str(RUN_B),
        "-m",
        "ndcg_cut.10",
        "-m",
        "RR",
        "--test",
        "t",
        "--correction",
        "none",
        "--missing",
        "fill",
        "--json",
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["model_names"] == ["results.test", "results.trunc"]
    a_name, b_name = data["model_names"]
    pa = _pytrec(RUN_A, ["ndcg_cut_10", "recip_rank"])
    pb = _pytrec(RUN_B, ["ndcg_cut_10", "recip_rank"])
    qids = sorted(set(pa) | set(pb))
    for shown, key in (("ndcg_cut.10", "ndcg_cut_10"), ("RR", "recip_rank")):
        a = np.array([pa.get(q, {}).get(key, 0.0) for q in qids])
        b = np.array([pb.get(q, {}).get(key, 0.0) for q in qids])
        assert np.isclose(data[a_name]["scores"][shown], a.mean(), rtol=1e-12)
        assert np.isclose(data[b_name]["scores"][shown], b.mean(), rtol=1e-12)
        if np.any(a != b):
            ref = sps.ttest_rel(a, b)
            assert np.isclose(data[a_name]["comparisons"][b_name][shown], ref.pvalue, rtol=1e-9)


def test_ultrarag_preset_on_trec_runs():
    res = invoke("compare", str(QRELS), str(RUN_A), str(RUN_B), "--ultrarag")
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    keys = ["map", "mrr"] + [
        f"{m}@{k}" for k in (1, 5, 10, 20, 50, 100) for m in ("ndcg", "P", "recall")
    ]
    assert list(data) == keys
    pa = _pytrec(RUN_A, ["map", "P_10", "recall_100"])
    qids = sorted(pa)
    assert np.isclose(data["map"]["A_mean"], np.mean([pa[q]["map"] for q in qids]), rtol=1e-12)
    for v in data.values():
        assert set(v) == {"A_mean", "B_mean", "diff", "p_value", "significant"}
        assert v["significant"] == (v["p_value"] < 0.05)
        assert 0 < v["p_value"] <= 1


def test_unknown_retrieval_metric_is_a_usage_error():
    res = invoke("compare", str(QRELS), str(RUN_A), str(RUN_B), "-m", "NDCG10")
    assert res.code == 2 and res.stderr.startswith("ragmeter compare: unknown retrieval metric")


def test_engine_warnings_are_the_commands_own_lines():
    # they were Python warnings located in typer/main.py
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = invoke(
            "compare", str(QRELS), str(RUN_A), str(RUN_B), "-m", "map", "--missing", "intersect"
        )
    assert res.code == 0, res.stderr
    assert res.stderr.splitlines() == [
        "ragmeter compare: warning: 1 judged query has no results in "
        f"{RUN_B} and was skipped: 302 (use -c to score missing queries as 0)"
    ]


def test_n_runs_parse_the_qrels_once_and_keep_the_order(monkeypatch, tmp_path):
    import ragmeter.io.trec as io_trec

    calls = []
    real = io_trec.read_qrels

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(io_trec, "read_qrels", counting)
    run_c = tmp_path / "short.run"
    run_c.write_text("".join(RUN_A.read_text().splitlines(keepends=True)[::2]))
    runs = [RUN_B, RUN_A, run_c]
    res = invoke("compare", str(QRELS), *map(str, runs), "-m", "map", "--missing", "fill", "--json")
    assert res.code == 0, res.stderr
    assert len(calls) == 1
    data = json.loads(res.stdout)
    assert data["model_names"] == ["results.trunc", "results.test", "short"]
    for name, path in zip(data["model_names"], runs, strict=True):
        per_query = _pytrec(path, ["map"])
        # --missing fill: a judged query missing from the run counts 0 (3 judged queries)
        mean = sum(v["map"] for v in per_query.values()) / 3
        assert np.isclose(data[name]["scores"]["map"], mean, rtol=1e-12)


def test_a_bad_run_among_n_stops_before_any_output(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 d1 1 1.0 r\n301 Q0 d2 2 oops r\n")
    res = invoke("compare", str(QRELS), str(RUN_A), str(bad), str(RUN_B), "-m", "map")
    assert res.code == 2
    assert res.stdout == ""
    assert res.stderr.startswith(f"{bad}:2: ")
    assert res.stderr.count("\n") == 1
