"""Profile averages are summed in file order with Python's ``sum``, as UltraRAG's
``compute_metrics``, FlashRAG's metric classes and the SQuAD v2 script do; the long table keeps
the canonical sorted-id order."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import ragmeter.answers as ra
from ragmeter.result import ordered_mean
from tests.helpers import invoke

WORDS = ["cat", "sat", "on", "mat", "with", "its", "red", "hat", "and", "ran", "to", "town"]


def _rows(seed: int, n: int = 200) -> list[dict]:
    rnd = random.Random(seed)
    ids = [f"q{i:03d}" for i in range(n)]
    rnd.shuffle(ids)  # file order is not sorted-id order
    rows = []
    for sid in ids:
        gold = " ".join(rnd.choices(WORDS, k=rnd.randint(1, 7)))
        pred = " ".join(rnd.choices(WORDS, k=rnd.randint(1, 9)))
        rows.append({"id": sid, "golden_answers": [gold], "pred_answer": pred})
    return rows


@pytest.mark.parametrize("profile", ["squad", "ultrarag", "flashrag"])
def test_profile_means_are_summed_in_file_order(profile, tmp_path):
    rows = _rows(7)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = invoke("answers", str(path), "--profile", profile, "-m", "f1", "-m", "em")
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    f1 = out["f1"]  # per-sample values in file order
    reference = sum(f1) / len(f1)  # what every reference computes
    canonical = ordered_mean(np.array([v for _, v in sorted(zip(out_ids(rows), f1, strict=True))]))
    assert reference != canonical  # the order matters for these values: the test can fail
    assert out["avg_f1"] == reference
    # the Python API gives the same bits, and the long table stays in sorted-id order
    api = ra.evaluate(
        [r["pred_answer"] for r in rows],
        [r["golden_answers"] for r in rows],
        ids=out_ids(rows),
        metrics=["f1"],
        profile=profile,
    )
    assert api.avg["f1"] == reference and api.aggregates["f1"].value == reference
    long_ids = list(api.values("f1"))
    assert long_ids == sorted(out_ids(rows))


def out_ids(rows: list[dict]) -> list[str]:
    return [r["id"] for r in rows]


def test_unscored_rows_are_skipped_in_file_order():
    preds = ["b c", "x", "d", "e f g"]
    golds = [["b c e"], None, ["d"], ["e"]]
    res = ra.evaluate(preds, golds, ids=["d", "c", "b", "a"], metrics=["f1"])
    values = [v for v in res.per_sample["f1"] if v is not None]
    assert res.per_sample["status"] == ["ok", "no_gold", "ok", "ok"]
    assert res.avg["f1"] == sum(values) / 3
    assert res.aggregates["f1"].n == 3
    assert dict(res.aggregates["f1"].status_counts) == {"ok": 3, "no_gold": 1}
