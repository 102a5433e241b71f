"""TV-SIG-12 (ranx parity), 15 (three systems, Holm, markers), 16 (UltraRAG output), 10."""

from __future__ import annotations

import json

import pytest

from ragmeter.stats import compare, corpus_test
from tests.stats.conftest import close, load

CMP = load("compare_systems.json")
CORPUS = load("corpus_level.json")


def _sig15_scores():
    inp = CMP["TV-SIG-15"]["input"]
    return {
        s: {inp["metric"]: dict(zip(inp["query_ids"], vals, strict=True))}
        for s, vals in inp["scores"].items()
    }


def test_sig15_three_systems_randomization_holm_markers():
    v = CMP["TV-SIG-15"]
    e = v["expected"]
    r = compare(_sig15_scores(), test="randomization", correction="holm", alpha=0.05)
    for s, mean in e["means"].items():
        assert close(r.means[s]["ndcg@10"], mean)
    assert [(p.system_a, p.system_b) for p in r.pairs] == [(x["A"], x["B"]) for x in e["pairs"]]
    for got, want in zip(r.pairs, e["pairs"], strict=True):
        res = got.result
        assert res.method == "exact" and res.n_resamples == 4096
        assert close(res.mean_diff, want["mean_diff"])
        assert close(res.p_value, want["p_value"])
        assert close(got.p_adjusted, want["p_adjusted_holm"])
        assert got.significant is want["significant"]
        assert close(res.effect_size["cohens_dz"], want["cohens_dz"])
        assert dict(got.win_tie_loss) == want["win_tie_loss"]
        assert res.correction == {"method": "holm", "family": "per_metric", "m": 3}
    assert r.table_rows() == e["table_rows"]
    text = r.to_table()
    assert "0.593ᵃᶜ" in text
    assert text.splitlines()[-1] == (
        "randomization test (exact), Holm per metric, alpha 0.05, 12 queries, seed 42"
    )


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"correction": "bonferroni"}, "p_adjusted_bonferroni"),
        ({"correction": "bh"}, "p_adjusted_bh"),
        ({"test": "t", "correction": "none"}, "ttest_p"),
        ({"test": "t"}, "ttest_p_holm"),
        ({"test": "wilcoxon", "correction": "none"}, "wilcoxon_auto_p"),
    ],
)
def test_sig15_other_tests_and_corrections(options, key):
    r = compare(_sig15_scores(), **options)
    for got, want in zip(r.pairs, CMP["TV-SIG-15"]["expected"]["pairs"], strict=True):
        assert close(got.p_adjusted, want[key])


def test_sig15_family_all_counts_every_metric():
    scores = _sig15_scores()
    for s in scores:
        scores[s]["RR"] = dict(scores[s]["ndcg@10"])
    per = compare(scores)
    every = compare(scores, family="all")
    assert every.pairs[0].result.correction["m"] == 6 and per.pairs[0].result.correction["m"] == 3
    assert every.pairs[1].p_adjusted >= per.pairs[1].p_adjusted


def test_sig16_ultrarag_output():
    v = CMP["TV-SIG-16"]
    r = compare(_sig15_scores())
    got = r.to_ultrarag(v["input"]["A"], v["input"]["B"])
    want = v["expected"]["json"]
    assert list(got) == list(want) and list(got["ndcg@10"]) == list(want["ndcg@10"])
    for k, w in want["ndcg@10"].items():
        g = got["ndcg@10"][k]
        assert g is w if isinstance(w, bool) else close(g, w)
    header = r.to_ultrarag_table("hybrid", "bm25").splitlines()[1]
    assert [c.strip() for c in header.strip("│").split("│")] == v["expected"]["table_header"]
    single = r.pair("hybrid", "bm25", "ndcg@10").result.to_ultrarag("ndcg@10")
    assert single == got


def test_sig12_ranx_compat_parity():
    v = CMP["TV-SIG-12"]
    scores = v["input"]["per_query_scores_in_query_order_q0_to_q19"]
    qids = [f"q{i}" for i in range(20)]
    data = {
        s: {m: dict(zip(qids, vals, strict=True)) for m, vals in per.items()}
        for s, per in scores.items()
    }
    r = compare(data, ranx_compat=True)
    e = v["expected"]
    for s in ("A", "B"):
        for m in ("ndcg@5", "mrr"):
            assert close(r.means[s][m], e["means"][s][m])
    for m in ("ndcg@5", "mrr"):
        p = r.pair("A", "B", m)
        assert close(p.p_value, e["p_values"][m])
        assert p.significant is e["significant_at_0.01_and_0.05"]
        assert dict(p.win_tie_loss) == e["win_tie_loss_A_vs_B"][m]
    assert r.settings["alpha"] == 0.01 and r.settings["correction"] == "none"
    assert r.to_table().splitlines() == e["ranx_table"]
    d = r.to_dict()
    assert d["stat_test"] == "student" and d["model_names"] == ["A", "B"]
    assert d["metrics"] == ["ndcg@5", "mrr"]
    assert set(d["A"]) == {"scores", "comparisons", "comparisons_adjusted", "win_tie_loss"}
    assert close(d["A"]["comparisons"]["B"]["mrr"], e["p_values"]["mrr"])
    assert d["B"]["win_tie_loss"]["A"]["ndcg@5"] == {"W": 8, "T": 2, "L": 10}
    json.loads(r.to_json())


def test_sig12_against_ranx_itself():
    import ranx

    v = CMP["TV-SIG-12"]["input"]
    qrels = ranx.Qrels(v["qrels"])

    def run(ranked, name):
        return ranx.Run(
            {
                q: {d: float(len(docs) - i) for i, d in enumerate(docs)}
                for q, docs in ranked.items()
            },
            name=name,
        )

    runs = [run(v["run_A_ranked_doc_ids"], "A"), run(v["run_B_ranked_doc_ids"], "B")]
    ref = ranx.compare(qrels, runs, metrics=["ndcg@5", "mrr"], stat_test="student")
    per = {r.name: ranx.evaluate(qrels, r, ["ndcg@5", "mrr"], return_mean=False) for r in runs}
    qids = list(v["qrels"])
    data = {
        s: {m: dict(zip(qids, map(float, vals), strict=True)) for m, vals in per[s].items()}
        for s in per
    }
    ours = compare(data, ranx_compat=True)
    assert ours.to_table() == ref.to_table()
    want = ref.to_dict()
    got = ours.to_dict()
    for m in ("ndcg@5", "mrr"):
        assert close(got["A"]["comparisons"]["B"][m], want["A"]["comparisons"]["B"][m])
        assert got["A"]["win_tie_loss"]["B"][m] == want["A"]["win_tie_loss"]["B"][m]
        assert close(got["A"]["scores"][m], want["A"]["scores"][m])


def test_sig10_corpus_micro_f1():
    v = CORPUS["TV-SIG-10"]
    inp, e = v["input"], v["expected"]
    a = {f"doc{i}": t for i, t in enumerate(inp["A_doc_tp_fp_fn"])}
    b = {f"doc{i}": t for i, t in enumerate(inp["B_doc_tp_fp_fn"])}
    r = corpus_test(a, b, aggregate="micro_f1", test="randomization", ci_method=None)
    assert close(r.mean_a, e["micro_f1_A"]) and close(r.mean_b, e["micro_f1_B"])
    assert close(r.statistic, e["diff"])
    assert (r.p_value, r.n_resamples, r.method) == (e["randomization_exact_p"], 256, "exact")
    assert r.test == "corpus_randomization" and r.ci is None
    boot = inp["bootstrap"]
    for method, key in (("percentile", "percentile"), ("bca", "BCa")):
        res = corpus_test(
            a,
            b,
            test="bootstrap",
            ci_method=method,
            n_resamples=boot["n_resamples"],
            seed=boot["seed"],
        )
        assert close(res.ci.low, e["bootstrap_ci95"][key][0])
        assert close(res.ci.high, e["bootstrap_ci95"][key][1])
        assert res.ci.contains(e["bootstrap_properties"]["contains"])
        assert not res.ci.contains(e["bootstrap_properties"]["excludes"])
        assert res.test == "corpus_bootstrap" and 0 < res.p_value < 0.05
    # mappings with named counts, and order of the documents, change nothing
    named = {k: dict(zip(("tp", "fp", "fn"), t, strict=True)) for k, t in reversed(a.items())}
    assert corpus_test(named, b, ci_method=None).p_value == r.p_value
