"""The declared stages are what the pipelines send and what the dry run counts (judge.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragmeter.judge as rj
from ragmeter.judge.estimate import estimate
from ragmeter.judge.metrics import plan
from ragmeter.judge.metrics.plan import stages


class _Embedder:
    """Unit vectors at a fixed angle: the relevance score is irrelevant here, the calls are."""

    def encode(self, texts):
        return np.vstack([np.array([1.0, 0.0])] + [np.array([0.6, 0.8]) for _ in texts[1:]])


def _samples() -> list[rj.Sample]:
    # 13 chunks: two usefulness calls (⌈13/10⌉); a 23-sentence answer: two verify batches
    long_answer = " ".join(f"Fact number {i} holds." for i in range(23))
    chunks = [f"Fact number {i} holds." for i in range(13)]
    return [
        rj.Sample(
            "long",
            question="What holds?",
            answer=long_answer,
            reference="Fact number 1 holds. Fact number 2 holds. Paris is in France.",
            contexts=chunks,
            reference_contexts=["Fact number 3 holds.", "Fact number 4 holds."],
        ),
        rj.Sample(
            "short",
            question="Where is Rome?",
            answer="Rome is in Italy.",
            reference="Rome is in Italy.",
            # no chunk equals the reference: a repeated text is one cached request, which the
            # dry run does not foresee
            contexts=["Rome, the capital, is in Italy.", "noise"],
            reference_contexts=["Rome is in Italy."],
        ),
        rj.Sample("bare", question="Q?", answer="", reference="R.", contexts=[]),
    ]


def _rubrics(make_config, **settings):
    from ragmeter.judge.config import config_from_mapping

    block = config_from_mapping(
        {
            "rubrics": [
                {
                    "name": "fixed",
                    "inputs": ["question", "answer"],
                    "scale": [1, 5],
                    "steps": ["Read.", "Judge."],
                },
                {"name": "generated", "criteria": "Is it polite?", "scale": [0, 3]},
            ]
        }
    )
    return make_config(**block, **settings)


CASES = [
    ("answer_correctness", {}),
    ("answer_relevance", {}),
    ("answer_relevance", {"independent": True, "temperature": 0.7}),
    ("faithfulness", {}),
    ("context_precision", {}),
    ("context_precision", {"per_chunk": True}),
    ("context_utilization", {}),
    ("context_recall", {}),
    ("context_entity_recall", {}),
    ("context_entity_recall", {"per_chunk": True}),
    ("retrieval_answer_f1", {}),
    ("retrieval_context_f1", {}),
    ("rubric", {}),
]


@pytest.mark.parametrize(("metric", "settings"), CASES)
def test_estimate_brackets_the_calls_a_fake_run_sends(fake, make_config, metric, settings):
    cfg = _rubrics(make_config, **settings)
    samples = _samples()
    est = estimate(samples, [metric], config=cfg)
    assert fake.requests == []
    res = rj.evaluate(samples, [metric], config=cfg, embedder=_Embedder())
    sent = [r.stage for r in fake.requests]
    assert est.total.calls_lo <= len(sent) <= est.total.calls_hi, (est.to_dict(), sent)
    # the run sends only declared prompts, and as many first-stage calls as the dry run counted
    declared = [s for p in est.metrics for s in stages(p.metric)]
    assert set(sent) <= {s.prompt_id for s in declared}
    first = {s.prompt_id for s in declared if s.first}
    if metric != "context_entity_recall":  # its two stages share one prompt
        assert sum(1 for stage in sent if stage in first) == est.total.first_stage_calls
    assert est.total.samples == len({r["id"] for r in res.records}) == len(samples)
    # fixed-size pipelines are exact
    if est.total.calls_lo == est.total.calls_hi:
        assert len(sent) == est.total.calls_lo


def test_batches_are_the_declared_sizes(fake, make_config):
    samples = _samples()[:1]
    rj.evaluate(samples, ["context_precision", "faithfulness"], config=make_config())
    stages_sent = [r.stage for r in fake.requests]
    assert stages_sent.count("context_precision.usefulness") == math.ceil(13 / plan.CHUNK_BATCH)
    verify = [r for r in fake.requests if r.stage == "faithfulness.verify"]
    assert [len(r.numbered("statement")) for r in verify] == [plan.STATEMENT_BATCH, 3]


def test_every_pipeline_declares_its_stages():
    from ragmeter.judge.metrics import PIPELINES
    from ragmeter.judge.prompts import get

    for pipe in [*PIPELINES, "rubric:x"]:
        declared = stages(pipe)
        assert declared and all(get(s.prompt_id) for s in declared), pipe
        assert declared[0].first or pipe.startswith("rubric:"), pipe
