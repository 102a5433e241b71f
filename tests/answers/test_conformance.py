"""Every vector of tests/data/conformance/answers/vectors.json (docs/answers.md)."""

from __future__ import annotations

import json

import pytest

import ragmeter.answers as ra
from tests.answers.conftest import vectors
from tests.helpers import invoke

TOL = 1e-12
ELEVEN = (
    "em",
    "acc",
    "stringem",
    "coverem",
    "f1",
    "precision",
    "recall",
    "rouge-1",
    "rouge-2",
    "rouge-l",
    "rouge-lsum",
)
PROFILE_ARGS = {
    "squad": {"profile": "squad"},
    "squad+unicode": {"profile": "squad", "tokenizer": "unicode"},
    "ultrarag": {"profile": "ultrarag"},
    "flashrag": {"profile": "flashrag"},
}


def _answer_cases():
    for v in vectors()["answer_vectors"]:
        for key in v["expected"]:
            yield pytest.param(v, key, id=f"{v['id']}-{key}")


def _close(actual, expected, what):
    if expected is None:
        assert actual is None, f"{what}: expected null, got {actual!r}"
    else:
        assert actual is not None, f"{what}: expected {expected!r}, got null"
        assert abs(actual - expected) <= TOL, f"{what}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize(("vec", "key"), list(_answer_cases()))
def test_answer_vector(vec, key):
    exp = vec["expected"][key]
    kwargs = PROFILE_ARGS[key]
    metrics = [m for m in ELEVEN if exp["metrics"][m] is not None]
    s = ra.score(vec["prediction"], vec["golds"], metrics=metrics, **kwargs)
    assert s.status == exp["status"]
    for m in ELEVEN:
        _close(s.values.get(m), exp["metrics"][m], f"{vec['id']} {key} {m}")
    want_flags = set(exp.get("warnings", []))
    if "upstream_error" in exp:
        want_flags.add("rouge_upstream_error")
    assert set(s.flags) == want_flags
    if "empty_golds_dropped" in exp:
        assert s.empty_golds_dropped == exp["empty_golds_dropped"]


@pytest.mark.parametrize("vec", vectors()["answer_vectors"], ids=lambda v: v["id"])
def test_normalized(vec):
    for profile, norm in vec["normalized"].items():
        assert ra.normalize(vec["prediction"], profile=profile) == norm["prediction"]
        assert [ra.normalize(g, profile=profile) for g in vec["golds"]] == norm["golds"]


def test_flashrag_refuses_rouge_lsum():
    with pytest.raises(ValueError, match="rouge-lsum is not available in the flashrag profile"):
        ra.score("a", ["a"], metrics=["rouge-lsum"], profile="flashrag")


@pytest.mark.parametrize("vec", vectors()["agg_mean_vectors"], ids=lambda v: v["id"])
def test_agg_mean_vector(vec):
    exp = vec["expected"]
    metrics = list(exp["metrics"])
    s = ra.score(
        vec["prediction"], vec["golds"], metrics=metrics, profile=vec["profile"], agg=vec["agg"]
    )
    assert s.status == exp["status"]
    for m, value in exp["metrics"].items():
        _close(s.values[m], value, f"{vec['id']} {m}")
    # em under mean equals stringem
    s2 = ra.score(vec["prediction"], vec["golds"], metrics=["stringem"], profile=vec["profile"])
    assert s2.values["stringem"] == s.values["em"]


@pytest.mark.parametrize("vec", vectors()["tokenizer_vectors"], ids=lambda v: v["text"])
def test_tokenizer_vector(vec):
    from ragmeter.answers.tokenize import rouge_score_tokens, unicode_tokens

    assert rouge_score_tokens(vec["text"]) == vec["rouge_score_tokens"]
    assert unicode_tokens(vec["text"]) == vec["unicode_tokens"]


@pytest.mark.parametrize("vec", vectors()["str_em_alce_vectors"], ids=lambda v: v["id"])
def test_str_em_alce_vector(vec):
    exp = vec["expected"]
    s = ra.score(vec["prediction"], vec["golds"], metrics=["str-em-alce"], profile=vec["profile"])
    assert s.status == exp["status"]
    _close(s.values["str-em-alce"], exp["str-em-alce"], "str-em-alce")
    _close(s.extra["str_em_hit"], exp["str_em_hit"], "str_em_hit")
    assert s.groups_dropped == exp["groups_dropped"]


@pytest.mark.parametrize("vec", vectors()["factual_vectors"], ids=lambda v: v["id"])
def test_factual_vector(vec):
    r = ra.factual_accuracy(vec["claims"], vec["facts"], profile=vec["profile"], match=vec["match"])
    got = r.as_dict()
    for key, value in vec["expected"].items():
        if isinstance(value, float):
            _close(got[key], value, key)
        else:
            assert got[key] == value, key
    if "expected_match_claim_in_fact" in vec:
        r2 = ra.factual_accuracy(
            vec["claims"], vec["facts"], profile=vec["profile"], match="claim_in_fact"
        )
        for key, value in vec["expected_match_claim_in_fact"].items():
            got2 = r2.as_dict()[key]
            if isinstance(value, float):
                _close(got2, value, key)
            else:
                assert got2 == value, key


def _grounded_rows(vec):
    if vec["gold"] == "same as grounded-02":
        base = next(v for v in vectors()["grounded_vectors"] if v["id"] == "grounded-02")
        return base["gold"], base["trace"]
    return vec["gold"], vec["trace"]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("vec", vectors()["grounded_vectors"], ids=lambda v: v["id"])
def test_grounded_vector_api(vec):
    gold, trace = _grounded_rows(vec)
    report = ra.grounded.score(gold, trace, k=vec["args"]["k"], gates=vec["args"]["gates"])
    assert report.output == vec["expected_output"]
    assert list(report.output) == list(vec["expected_output"])
    assert report.to_json() + "\n" == vec["expected_stdout"]
    assert report.passed is vec["expected_output"]["pass"]
    got = {(w.kind, w.qids) for w in report.warnings}
    assert got == {(w["kind"], tuple(w["qids"])) for w in vec["expected_warnings"]}
    items = {it["qid"]: it for it in report.items}
    for qid, want in vec.get("per_item", {}).items():
        for field, value in want.items():
            if field == "why":
                continue
            if field == "counts_as":  # ragmeter's --details field is counted_as
                assert items[qid]["counted_as"] == value, qid
            else:
                assert items[qid][field] == value, (qid, field)


@pytest.mark.parametrize("vec", vectors()["grounded_vectors"], ids=lambda v: v["id"])
def test_grounded_vector_cli(vec, tmp_path):
    gold, trace = _grounded_rows(vec)
    g = _write_jsonl(tmp_path / "gold.jsonl", gold)
    t = _write_jsonl(tmp_path / "trace.jsonl", trace)
    args = [
        "grounded",
        "--gold",
        g,
        "--trace",
        t,
        "--k",
        str(vec["args"]["k"]),
        "--gates",
        vec["args"]["gates"],
    ]
    res = invoke(*args)
    assert res.stdout == vec["expected_stdout"]
    assert res.code == vec["expected_exit_code"], res.stderr
    res = invoke(*args, "--no-fail")
    assert res.stdout == vec["expected_stdout"]
    assert res.code == vec["expected_exit_code_no_fail"]
    for w in vec["expected_warnings"]:
        assert f"warning: {w['kind']}:" in res.stderr


@pytest.mark.parametrize("vec", vectors()["cli_vectors"], ids=lambda v: v["id"])
def test_cli_vector(vec, tmp_path):
    path = _write_jsonl(tmp_path / "in.jsonl", vec["input_jsonl"])
    argv = [path if a == "INPUT.jsonl" else a for a in vec["argv"]]
    res = invoke(*argv)
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    meta = out.pop("ragmeter")
    exp = vec["expected_metrics_output"]
    assert list(out) == list(exp)
    for key, value in exp.items():
        if isinstance(value, list):
            assert len(out[key]) == len(value)
            for a, b in zip(out[key], value, strict=True):
                _close(a, b, key)
        else:
            _close(out[key], value, key)
    assert meta["profile"] == "ultrarag" and meta["n_rows"] == 2
