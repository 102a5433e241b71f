"""Normalisers, tokenizers, metric definitions, aggregation and the Python API (docs/answers.md)."""

from __future__ import annotations

import json

import pytest

import ragmeter.answers as ra
from ragmeter.errors import InputError, UsageError


@pytest.mark.parametrize(
    ("text", "squad", "ultrarag"),
    [
        ("U.S. Navy", "us navy", "u s navy"),
        ("don't stop", "dont stop", "don t stop"),
        ("1,000 km", "1000 km", "1 000 km"),
        ("‘Hello’", "‘hello’", "hello"),
        ("True", "true", "yes"),
        (" True", "true", "true"),
        (
            "The president was Barack Obama.",
            "president was barack obama",
            "president was barack obama",
        ),
        ("x_y´z", "xy´z", "x y z"),
        ("False", "false", "no"),
    ],
)
def test_normaliser_table(text, squad, ultrarag):
    assert ra.normalize(text) == squad == ra.normalize(text, profile="flashrag")
    assert ra.normalize(text, profile="ultrarag") == ultrarag


def test_unknown_profile():
    with pytest.raises(ValueError, match="unknown profile 'squad2'"):
        ra.normalize("x", profile="squad2")
    with pytest.raises(UsageError, match="unknown profile 'squad2'"):
        ra.score("x", ["x"], profile="squad2")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("हिन्दी", ["हिन्दी"]),  # combining vowel signs stay inside the word
        ("ไปไหน", ["ไ", "ป", "ไ", "ห", "น"]),
        ("กิน", ["กิ", "น"]),  # a Thai vowel mark joins the preceding character
        ("K-pop 한국어 노래", ["k", "pop", "한국어", "노래"]),
        ("ＡＢＣ１２３", ["abc123"]),
        ("Ǆemal café", ["džemal", "café"]),  # NFKC splits the digraph
        ("\u0301abc", ["abc"]),  # a mark with no open token is dropped
        ("abc漢字def", ["abc", "漢", "字", "def"]),
        ("İstanbul", ["i̇stanbul"]),
    ],
)
def test_unicode_tokenizer(text, tokens):
    from ragmeter.answers.tokenize import unicode_tokens

    assert unicode_tokens(text) == tokens


def test_tokens_api():
    assert ra.tokens("北京大学", profile="squad", tokenizer="unicode") == ["北", "京", "大", "学"]
    assert ra.tokens("北京大学") == ["北京大学"]
    assert ra.tokens("The U.S. Navy", profile="ultrarag") == ["u", "s", "navy"]
    with pytest.raises(ValueError, match="unknown tokenizer"):
        ra.tokens("x", tokenizer="spacy")


def test_unicode_stemming_only_on_ascii_words():
    from ragmeter.answers.tokenize import unicode_tokens

    assert unicode_tokens("running naïveties 北京", stem=True) == ["run", "naïveties", "北", "京"]


def test_score_values_and_flags():
    s = ra.score(
        "December 14, 1973",
        ["14 December 1972 UTC", "December 1972"],
        metrics=["em", "f1", "rouge-l"],
        profile="squad",
    )
    assert s.status == "ok" and s.flags == []
    assert list(s.values) == ["em", "f1", "precision", "recall", "rouge-l"]
    s = ra.score("Zärich", ["Zürich"], metrics=["rouge-1"])
    assert s.values == {"rouge-1": 1.0} and s.flags == ["rouge_nonascii"]


def test_precision_recall_come_from_the_best_f1_gold_first_on_ties():
    # both golds give F1 = 2/3; the first gold's P/R are reported
    s = ra.score("x y", ["x y z w", "x"], metrics=["f1"])
    assert s.values["f1"] == pytest.approx(2 / 3)
    assert (s.values["precision"], s.values["recall"]) == (1.0, 0.5)
    s = ra.score("x y", ["x", "x y z w"], metrics=["f1"])
    assert (s.values["precision"], s.values["recall"]) == (0.5, 1.0)
    s = ra.score("x y", ["x", "x y z w"], metrics=["f1"], profile="flashrag")
    assert (s.values["precision"], s.values["recall"]) == (1.0, 1.0)


def test_flashrag_yes_no_rule_and_precision_alone():
    s = ra.score("Yes, it is.", ["yes"], metrics=["f1"], profile="flashrag")
    assert s.values == {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    s = ra.score("No.", ["no"], metrics=["precision", "recall"], profile="flashrag")
    assert s.values == {"precision": 1.0, "recall": 1.0}


def test_agg_rules():
    golds = ["Barack Obama", "Obama"]
    s = ra.score("Obama", golds, metrics=["em", "stringem", "f1"], agg="mean")
    assert s.values["em"] == 0.5 == s.values["stringem"]
    assert s.values["f1"] == pytest.approx((2 / 3 + 1) / 2)
    s = ra.score("Obama", golds, metrics=["em", "f1"], agg="any")  # any is max for f1
    assert s.values == {"em": 1.0, "f1": 1.0, "precision": 1.0, "recall": 1.0}
    s = ra.score("Obama", golds, metrics=["f1", "precision"], agg={"f1": "mean"})
    assert s.values["precision"] == 1.0  # P and R follow f1 unless set themselves
    s = ra.score("Obama", golds, metrics=["f1", "recall"], agg={"f1": "max", "recall": "mean"})
    assert s.values["recall"] == 0.75
    with pytest.raises(UsageError, match="--agg f1=any is not allowed"):
        ra.score("x", ["x"], metrics=["f1"], agg={"f1": "any"})
    with pytest.raises(UsageError, match="--agg names unknown metric 'bleu'"):
        ra.score("x", ["x"], agg={"bleu": "max"})


def test_acc_is_token_safe_under_squad_only():
    assert ra.score("the start", ["art"], metrics=["acc"]).values["acc"] == 0.0
    assert ra.score("the start", ["art"], metrics=["acc"], profile="ultrarag").values["acc"] == 1
    assert ra.score("in new york city", ["New York"], metrics=["acc"]).values["acc"] == 1.0


def test_gold_without_tokens_under_squad_keep():
    # a gold that normalises to "" but is kept: squad's token metrics do not count it as found
    s = ra.score("anything", ["The"], metrics=["acc", "coverem", "em"], empty_gold="keep")
    assert s.values == {"acc": 0.0, "coverem": 0.0, "em": 0.0}
    s = ra.score("anything", ["The"], metrics=["acc", "coverem"], profile="ultrarag")
    assert s.values == {"acc": 1.0, "coverem": 1.0}


def test_empty_gold_list_policies():
    # no gold at all (None, a missing key) has nothing to score; under squad an explicit empty
    # list is an unanswerable question (SQuAD 2.0), under ultrarag and flashrag it has no gold
    assert ra.score("x", None, metrics=["em"]).status == "no_gold"
    assert ra.score("x", [], metrics=["em"], profile="flashrag", empty_gold="drop").status == (
        "no_gold"
    )
    s = ra.score("x", [], metrics=["em"])
    assert (s.status, s.values) == ("ok", {"em": 0.0})
    s = ra.score("x", [], metrics=["em", "rouge-1"], empty_gold="keep")
    assert (s.status, s.values) == ("ok", {"em": 0.0, "rouge-1": 0.0})
    s = ra.score("", [], metrics=["em"], empty_gold="error")
    assert (s.status, s.values) == ("ok", {"em": 1.0})
    with pytest.raises(InputError, match="gold answer 'The' normalises to ''"):
        ra.score("x", ["The"], empty_gold="error")


def test_str_em_alce_status_is_its_own_under_keep():
    s = ra.score("x", [["The"]], metrics=["em", "str-em-alce"], empty_gold="keep")
    assert s.status == "ok"
    assert s.statuses == {"em": "ok", "str-em-alce": "no_gold"}
    assert s.values == {"em": 0.0, "str-em-alce": None}


def test_rouge_api_per_profile():
    r = ra.rouge("the cat sat", ["the cat sat down", "a dog"], types=("rouge-1", "rouge-lsum"))
    assert r["rouge-1"].fmeasure == pytest.approx(6 / 7)
    r = ra.rouge("running quickly", ["runs quick"], types=("rouge-1",), profile="ultrarag")
    assert r["rouge-1"].fmeasure == 0.5  # normalised and Porter-stemmed
    r = ra.rouge("Paris is the capital", ["Paris"], types=("rouge-1",), profile="flashrag")
    assert r["rouge-1"].fmeasure == pytest.approx(0.4, abs=1e-8)
    assert ra.rouge("x", [], types=("rouge-1",))["rouge-1"] == (0.0, 0.0, 0.0)
    with pytest.raises(UsageError, match="ROUGE types only"):
        ra.rouge("x", ["x"], types=("em",))


def test_rouge_n_beyond_two():
    r = ra.rouge("a b c d e", ["a b c x d e"], types=("rouge-3", "rouge-9"))
    assert r["rouge-3"] == (1 / 3, 1 / 4, 2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert r["rouge-9"] == (0.0, 0.0, 0.0)


# -- evaluate() and its Result ---------------------------------------------------------------
def test_evaluate_result_views_and_long_table():
    res = ra.evaluate(
        ["December 14, 1973", "x", "Obama"],
        [["14 December 1972 UTC", "December 1972"], ["The"], ["Barack Obama", "Obama"]],
        metrics=["em", "f1", "rouge-l"],
        ids=["q10", "q2", "q1"],
    )
    assert res.per_sample["id"] == ["q10", "q2", "q1"]
    assert res.per_sample["status"] == ["ok", "no_gold", "ok"]
    assert res.per_sample["f1"] == [0.5714285714285715, None, 1.0]
    assert res.avg["em"] == 0.5 and res.avg["precision"] == pytest.approx((2 / 3 + 1) / 2)
    assert res.meta["n_rows"] == 3 and res.meta["n_scored"] == 2
    assert res.meta["status_counts"] == {"ok": 2, "no_gold": 1}
    assert res.metrics == ["em", "f1", "precision", "recall", "rouge-l"]
    assert res.values("f1") == {"q1": 1.0, "q10": 0.5714285714285715}
    assert res.statuses("em")["q2"] == "no_gold"
    agg = res.aggregates["f1"]
    assert (agg.n, dict(agg.status_counts)) == (2, {"ok": 2, "no_gold": 1})
    assert res.rows()[1] == {
        "id": "q2",
        "status": "no_gold",
        "em": None,
        "f1": None,
        "precision": None,
        "recall": None,
        "rouge-l": None,
        "flags": [],
    }
    from ragmeter import registry
    from ragmeter.result import Result

    for m in res.metrics:
        assert registry.resolve(f"answers.{m}").canonical == m
    again = Result.from_json(res.to_json())
    assert again == res and again.summary == res.summary


def test_evaluate_mixed_tasks_split():
    class Fake:
        def encode(self, texts):
            import numpy as np

            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    res = ra.evaluate(["x"], [["x"]], metrics=["em", "semantic-similarity"], embedder=Fake())
    assert res.task == "answers"
    assert res.meta["metric_tasks"] == {"em": "answers", "semantic-similarity": "semantic"}
    sem = res.for_task("semantic")
    assert sem.task == "semantic" and sem.metrics == ["semantic-similarity"]
    assert res.for_task("answers").summary == {"em": 1.0}


def test_evaluate_input_checks():
    with pytest.raises(UsageError, match="2 gold values for 1 predictions"):
        ra.evaluate(["a"], [["a"], ["b"]])
    with pytest.raises(UsageError, match="no samples"):
        ra.evaluate([], [])
    with pytest.raises(InputError, match="sample id '1' appears twice"):
        ra.evaluate(["a", "b"], ["a", "b"], ids=[1, "1"])
    with pytest.raises(InputError, match=r"sample '0': golds\[0\] is an object"):
        ra.evaluate(["a"], [[{"x": 1}]])
    with pytest.raises(InputError, match=r"golds\[0\] is NaN \(expected a string, a number"):
        ra.score("nan", [float("nan")], metrics=["em"])


def test_evaluate_progress_callback():
    seen = []
    ra.evaluate(["x"] * 250, ["x"] * 250, progress=seen.append)
    assert seen[-1] == 250 and seen == sorted(seen)


def test_ultrarag_dict_matches_cli_shape():
    res = ra.evaluate(["a", "b"], ["a", "c"], metrics=["em"], profile="ultrarag")
    d = res.to_ultrarag_dict()
    assert d["em"] == [1.0, 0.0] and d["avg_em"] == 0.5
    assert json.loads(json.dumps(d)) == d
    assert "em" not in res.to_ultrarag_dict(summary_only=True)


# -- factual accuracy ---------------------------------------------------------------------------
def test_factual_match_modes():
    facts = [{"fact": "opgericht in 1800", "source": "x"}]
    claims = [
        {"claim": "Opgericht in 1800.", "verifiable": True},
        {"claim": "het museum is opgericht in 1800", "verifiable": True},
    ]
    assert ra.factual_accuracy(claims, facts, match="exact").supported_claims == 1
    assert ra.factual_accuracy(claims, facts, match="fact_in_claim").supported_claims == 2
    assert ra.factual_accuracy(claims, facts, match="claim_in_fact").supported_claims == 1
    r = ra.factual_accuracy(["1800"], ["", {"fact": "opgericht in 1800"}])
    assert r.verdicts[0] == {"claim": "1800", "verdict": "supported", "fact": 1}
    assert r.fact_recall == 1.0  # the empty fact has no tokens and is ignored


def test_factual_bad_input():
    with pytest.raises(InputError, match=r"claims\[0\]: 'verifiable' is 'yes'"):
        ra.factual_accuracy([{"claim": "x", "verifiable": "yes"}], [])
    with pytest.raises(InputError, match=r"facts\[0\]"):
        ra.factual_accuracy([], [{"text": "x"}])
    with pytest.raises(UsageError, match="unknown match 'fuzzy'"):
        ra.factual_accuracy([], [], match="fuzzy")
    r = ra.factual_accuracy([], [])
    assert (r.status, r.factual_accuracy, r.fact_recall) == ("no_claims", None, None)


# -- registry ------------------------------------------------------------------------------------
def test_registry_tasks():
    from ragmeter import registry

    assert registry.resolve("answers.rougeLsum").canonical == "rouge-lsum"
    assert registry.resolve("answers.Sub_EM").canonical == "acc"
    assert registry.resolve("grounded.under").definition.direction == "lower"
    assert registry.resolve("grounded.over_refusal").definition.direction == "lower"
    assert registry.resolve("grounded.recall@k").canonical == "recall@k"
    sem = registry.resolve("semantic.semantic_similarity").definition
    assert sem.needs == frozenset({"embeddings"}) and sem.extra == "semantic"
    with pytest.raises(registry.UnknownMetricError):
        registry.resolve("answers.semantic-similarity")  # it belongs to the semantic task
    names = {m.name for m in registry.get_task("answers").metrics}
    assert {"em", "f1", "rouge-9", "rouge-lsum", "str-em-alce"} <= names


def test_metrics_command_lists_answer_tasks():
    from tests.helpers import invoke

    res = invoke("metrics", "grounded", "--json")
    assert res.code == 0
    listed = [m["name"] for m in json.loads(res.stdout)]
    assert listed == ["precision", "chr", "under_refusal", "over_refusal", "recall@k"]


# -- --lsum-split nltk ---------------------------------------------------------------------------
def test_lsum_split_nltk_needs_local_data(tmp_path, monkeypatch):
    import nltk

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # no punkt anywhere
    with pytest.raises(UsageError, match="never downloaded"):
        ra.rouge("a. b", ["a. b"], types=("rouge-lsum",), lsum_split="nltk")


def test_lsum_split_nltk_matches_rouge_score_split_summaries(monkeypatch):
    import nltk
    from rouge_score import rouge_scorer

    from ragmeter.answers import sentences

    def split(text):  # a stand-in for punkt, used by both sides
        return text.replace("! ", ". ").split(". ")

    monkeypatch.setattr(nltk, "sent_tokenize", split)
    monkeypatch.setattr(sentences, "check_nltk_punkt", lambda: None)
    pred = "The cat sat. The dog ran! A bird sang"
    gold = "A dog ran. The cat sat on the mat. Birds sang"
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)
    ours = ra.rouge(pred, [gold], types=("rouge-lsum",), lsum_split="nltk")
    assert tuple(ours["rouge-lsum"]) == tuple(scorer.score(gold, pred)["rougeLsum"])


def test_empty_gold_policy_applies_to_gold_metrics_only():
    s = ra.score("paris", [["The"], ["Paris"]], metrics=["str-em-alce"], empty_gold="error")
    assert s.values["str-em-alce"] == 1.0 and s.groups_dropped == 1
    assert s.empty_golds_dropped == 0
