"""``ragmeter trec -m ultrarag --format ultrarag`` gives UltraRAG's numbers bit for bit.

UltraRAG's ``evaluate_trec`` reads both files into dicts, runs pytrec_eval (trec_eval 9.0.8,
which stores scores as float32, so scores that differ only beyond float32 precision tie) and
averages ``sum(per-query values) / n`` in the order pytrec_eval returns the queries (the run's
order of first appearance). The reference below is exactly that computation."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tests.helpers import REPO, invoke

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)


def _ultrarag_reference(qrels_text: str, run_text: str) -> dict[str, float]:
    """UltraRAG's _load_qrels/_load_run, pytrec_eval and its key names and means."""
    qrel: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines():
        q, _, d, r = line.split()
        qrel.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        p = line.split()
        run.setdefault(p[0], {})[p[2]] = float(p[4])
    measures = {"recip_rank", "map"} | {f"{m}.{k}" for k in KS for m in ("ndcg_cut", "P", "recall")}
    per_query = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
    n_q = len(per_query)
    agg = {
        m: sum(q.get(m, 0.0) for q in per_query.values()) / n_q
        for m in sorted(next(iter(per_query.values())))
    }
    out = {"map": agg["map"], "mrr": agg["recip_rank"]}
    for k in KS:
        out[f"ndcg@{k}"] = agg[f"ndcg_cut_{k}"]
        out[f"P@{k}"] = agg[f"P_{k}"]
        out[f"recall@{k}"] = agg[f"recall_{k}"]
    return out


def _files(seed: int) -> tuple[str, str]:
    rnd = random.Random(seed)
    qids = [f"q{i}" for i in range(60)]
    rnd.shuffle(qids)  # file order is not qid order, so the order of the sum matters
    qrels, run = [], []
    for q in qids:
        docs = [f"d{j:02d}" for j in range(12)]
        for d in rnd.sample(docs, 6):
            qrels.append(f"{q} 0 {d} {rnd.choice((0, 1, 1, 2))}")
        base = rnd.uniform(5, 20)
        for rank, d in enumerate(rnd.sample(docs, 10), start=1):
            # scores 1e-9 apart: distinct doubles, equal float32s
            score = base + rnd.choice((0.0, 1e-9, 2e-9, 0.5, 1.0))
            run.append(f"{q} Q0 {d} {rank} {score!r} tag")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def test_ultrarag_format_is_pytrec_eval_bit_for_bit(tmp_path):
    qrels_text, run_text = _files(3)
    qp, rp = tmp_path / "qrels", tmp_path / "run"
    qp.write_text(qrels_text)
    rp.write_text(run_text)
    ks = ",".join(map(str, KS))
    res = invoke("trec", "-m", "ultrarag", "--ks", ks, "--format", "ultrarag", str(qp), str(rp))
    assert res.code == 0, res.stderr
    got = json.loads(res.stdout)
    want = _ultrarag_reference(qrels_text, run_text)
    assert list(got) == list(want)
    assert got == want  # every value, to the last bit
    # the float32 ties matter here: trec_eval 10.0's doubles give other numbers
    doubles = invoke("trec", "-m", "ultrarag", "--ks", ks, "--format", "json", str(qp), str(rp))
    summary = json.loads(doubles.stdout)["summary"]
    assert summary["recip_rank"] != pytest.approx(got["mrr"], abs=1e-6)


def test_float32_scores_option_in_python():
    from ragmeter.retrieval import evaluate

    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.00000002, "b": 1.00000001}}  # one float32 value: b wins the tie
    assert evaluate(qrels, run, ["RR"]).summary["RR"] == 1.0
    assert evaluate(qrels, run, ["RR"], scores="float32").summary["RR"] == 0.5
    assert np.float32(1.00000002) == np.float32(1.00000001)


def test_format_ultrarag_without_ultrarag_measures_is_one_line() -> None:
    # the default measures include runid, which has no UltraRAG key (it was a KeyError traceback)
    ex = REPO / "examples" / "retrieval"
    res = invoke("trec", "--format", "ultrarag", str(ex / "qrels.txt"), str(ex / "bm25.run"))
    assert res.code == 2
    assert res.stderr.count("\n") == 1
    assert "measure 'runid' has no UltraRAG key" in res.stderr
    assert "-m ultrarag" in res.stderr
