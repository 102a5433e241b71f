"""Scores as columns: built from the shards' columns, a result is the one built from the
scores themselves (what a Dask run and the in-process command each do)."""

from __future__ import annotations

import itertools
import json
import pickle
import random

import pytest

from ragmeter.answers.columns import ScoreColumns
from ragmeter.answers.inputs import coerce_golds, coerce_prediction
from ragmeter.answers.options import resolve_options
from ragmeter.answers.result import build_result
from ragmeter.answers.sample import MISSING_PREDICTION, SampleScorer

WORDS = "the cat sat on a mat Obama December 1972 café naïve an of".split()  # noqa: SIM905


def _scores(metrics, n, seed, **kw):
    rng = random.Random(seed)
    opts = resolve_options(metrics, **kw)
    scorer = SampleScorer(opts)
    out = []
    for i in range(n):
        pred = None if i % 13 == 5 else " ".join(rng.choices(WORDS, k=rng.randint(0, 6)))
        golds = [" ".join(rng.choices(WORDS, k=rng.randint(0, 4))) for _ in range(i % 3)]
        text, missing = coerce_prediction(pred, location=f"sample {i}")
        score = scorer.score(text, coerce_golds(golds, key="golds", location=f"sample {i}"))
        if missing:
            score.flags.insert(0, MISSING_PREDICTION)
        out.append(score)
    return opts, out


CASES = {
    "squad": (["em", "f1", "rouge-l"], {}),
    "ultrarag": (["em", "f1", "rouge-1"], {"profile": "ultrarag", "empty_gold": "drop"}),
    "flashrag": (["em", "f1", "rouge-l"], {"profile": "flashrag", "empty_gold": "keep"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_columns_from_shards_build_the_result_of_the_scores(case):
    metrics, kw = CASES[case]
    opts, scores = _scores(metrics, 260, seed=len(case), **kw)
    ids = [f"s{i}" for i in range(len(scores))]
    whole = build_result(opts, ids, scores)
    cuts = [0, 1, 90, 91, 200, len(scores)]
    parts = [  # as the shards send them: pickled, one per byte range
        pickle.loads(pickle.dumps(ScoreColumns.from_scores(scores[a:b], opts.outputs())))
        for a, b in itertools.pairwise(cuts)
    ]
    joined = build_result(opts, ids, ScoreColumns.concat(parts))
    assert json.dumps(joined.to_ultrarag_dict()) == json.dumps(whole.to_ultrarag_dict())
    assert joined.rows() == whole.rows()
    assert joined.samples.equals(whole.samples)
    assert joined.warnings == whole.warnings
    # the views hold what each score says (value only where its metric is ok)
    rows = whole.rows()
    assert any(r["flags"] for r in rows)
    # without golds: no_gold, except where --empty-gold keep scores them
    assert any(r["status"] == "no_gold" for r in rows) == (kw.get("empty_gold") != "keep")
    for row, s in zip(rows, scores, strict=True):
        assert row["status"] == s.status and row["flags"] == s.flags
        for m in opts.outputs():
            assert row[m] == (s.values[m] if s.statuses[m] == "ok" else None)
    details = whole.samples.column("detail").to_pylist()[: len(scores)]
    flagged = sorted(range(len(scores)), key=lambda i: ids[i])
    assert details == [
        json.dumps({"flags": scores[i].flags}) if scores[i].flags else None for i in flagged
    ]
    assert whole.meta["warnings"].get("missing_predictions") == sum(
        MISSING_PREDICTION in s.flags for s in scores
    )


def test_str_em_hits_and_dropped_groups_survive_the_concatenation():
    opts = resolve_options(["str-em-alce"])
    scorer = SampleScorer(opts)
    golds = [[["Obama", "Barack Obama"]], [["the"], ["Paris"]], [["a"]]]
    scores = [
        scorer.score(p, coerce_golds(g, key="golds", location="x"))
        for p, g in zip(["Obama", "Paris", "x"], golds, strict=True)
    ]
    parts = [ScoreColumns.from_scores(scores[:1], opts.outputs(), str_em_hit=True)]
    parts.append(ScoreColumns.from_scores(scores[1:], opts.outputs(), str_em_hit=True))
    joined = ScoreColumns.concat(parts)
    assert joined.str_em_hit == [s.extra["str_em_hit"] for s in scores]
    assert joined.groups_dropped == sum(s.groups_dropped for s in scores) > 0
    res = build_result(opts, ["a", "b", "c"], joined)
    assert res.per_sample["str_em_hit"] == joined.str_em_hit
    assert res.meta["warnings"]["groups_dropped"] == joined.groups_dropped
