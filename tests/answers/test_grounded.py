"""``ragmeter grounded`` and ``grounded.score`` (docs/answers.md): exit codes, gates on
unrounded values, every upstream quirk, ``--details`` and ``to_result()``."""

from __future__ import annotations

import json

import pytest

from ragmeter.answers import grounded
from ragmeter.errors import InputError, UsageError
from tests.helpers import invoke


def g(qid, answerable=True, subs=("the answer is",), cites=("d1",), **extra):
    row = {
        "qid": qid,
        "answerable": answerable,
        "gold_claim_substr": list(subs),
        "gold_citations": list(cites),
    }
    row.update(extra)
    return row


def t(qid, claim="The answer is 42.", cits=("d1",), ret=("d1",), **extra):
    row = {
        "qid": qid,
        "retrieved_ids": list(ret),
        "answer_json": {"claim": claim, "citations": list(cits)},
    }
    row.update(extra)
    return row


def kinds(report):
    return {w.kind: list(w.qids) for w in report.warnings}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def cli(tmp_path, gold, trace, *args):
    return invoke(
        "grounded",
        "--gold",
        write(tmp_path / "gold.jsonl", gold),
        "--trace",
        write(tmp_path / "trace.jsonl", trace),
        *args,
    )


def test_exit_codes_and_no_fail(tmp_path):
    gold = [g("q1"), g("q2", answerable=False, subs=(), cites=())]
    ok = [t("q1"), t("q2", claim="not in context", cits=())]
    assert cli(tmp_path, gold, ok).code == 0
    bad = [t("q1"), t("q2", claim="Made up.", cits=())]  # an under-refusal
    res = cli(tmp_path, gold, bad)
    assert res.code == 1
    assert json.loads(res.stdout)["pass"] is False
    assert "ragmeter grounded: gate under failed: under_refusal = 1.0 > 0.05" in res.stderr
    assert cli(tmp_path, gold, bad, "--no-fail").code == 0
    gold_bad = [{"qid": "q1", "answerable": "false", "gold_claim_substr": [], "gold_citations": []}]
    res = cli(tmp_path, gold_bad, ok)
    assert res.code == 2
    assert (
        res.stderr == f'{tmp_path}/gold.jsonl:1: answerable is "false" (expected a JSON boolean)\n'
    )


def test_gates_use_unrounded_values(tmp_path):
    # precision = 2/3 = 0.666…, printed 0.6667: a 0.6667 gate still fails
    gold = [g("q1"), g("q2"), g("q3")]
    trace = [t("q1"), t("q2"), t("q3", claim="Something else.")]
    res = cli(tmp_path, gold, trace, "--gates", "precision=0.6667")
    out = json.loads(res.stdout)
    assert out["precision"] == 0.6667 and out["pass"] is False and res.code == 1
    assert "precision = 0.6666666666666666 < 0.6667" in res.stderr
    assert cli(tmp_path, gold, trace, "--gates", "precision=0.6666").code == 0


def test_recall_gate_and_gate_parsing():
    gold = [g("q1", cites=("d1", "d2"))]
    trace = [t("q1", ret=("d1", "x", "d2"))]
    r = grounded.score(gold, trace, k=2, gates=" precision = 0.5 , recall=0.9 ")
    assert r.output["gates"] == {"precision": "0.5", "recall": "0.9"}
    assert r.exact["recall@k"] == 0.0 and not r.passed
    r = grounded.score(gold, trace, k=3, gates="recall=0.9")
    assert r.passed and r.output["gates"] == {"recall": "0.9"}
    with pytest.raises(UsageError, match="unknown gate 'prec'"):
        grounded.score(gold, trace, gates="prec=0.5")
    with pytest.raises(UsageError, match="has no '='"):
        grounded.score(gold, trace, gates="precision")
    with pytest.raises(UsageError, match="is not a number"):
        grounded.score(gold, trace, gates="precision=high")
    assert grounded.score(gold, trace, gates="").passed  # no gate: nothing enforced


def test_quirk1_empty_and_missing_claim_substr():
    gold = [g("q1", subs=()), {"qid": "q2", "answerable": True, "gold_citations": ["d1"]}]
    trace = [t("q1", claim="Anything."), t("q2", claim="Anything.")]
    r = grounded.score(gold, trace)
    assert r.exact["precision"] == 1.0  # vacuous containment, for [] and for a missing key
    assert kinds(r)["empty_gold_claim_substr"] == ["q1", "q2"]
    assert kinds(r)["missing_gold_claim_substr"] == ["q2"]


def test_quirk2_short_substrings_are_unsatisfiable():
    r = grounded.score([g("q1", subs=("42", "yes"))], [t("q1", claim="42 yes")])
    assert r.items[0]["containment"] is False and r.exact["precision"] == 0.0
    assert kinds(r) == {"unsatisfiable_gold_claim_substr": ["q1"]}


@pytest.mark.parametrize(
    ("mode", "answered", "refused", "under"),
    [("answered", 2, 0, 1.0), ("refused", 0, 2, 0.0)],
)
def test_quirk3_missing_trace(mode, answered, refused, under):
    gold = [g("q1"), g("q2", answerable=False, subs=(), cites=())]
    r = grounded.score(gold, [t("other")], missing_trace=mode)
    assert (r.output["answered"], r.output["refused"]) == (answered, refused)
    assert r.exact["under_refusal"] == under
    assert kinds(r)["missing_trace"] == ["q1", "q2"]
    assert kinds(r)["unknown_trace_qid"] == ["other"]


def test_quirk3_missing_trace_error(tmp_path):
    res = cli(tmp_path, [g("q1"), g("q2")], [t("q1")], "--missing-trace", "error")
    assert res.code == 2
    assert res.stderr == (
        f"{tmp_path}/trace.jsonl: no trace line for gold qid q2 (expected one "
        "per gold item, or --missing-trace answered|refused)\n"
    )


def test_quirk4_refusal_near_miss_and_custom_token():
    gold = [g("q1"), g("q2")]
    trace = [t("q1", claim="Not in context!", cits=()), t("q2", claim=" NOT IN CONTEXT ")]
    r = grounded.score(gold, trace)
    assert (r.output["answered"], r.output["refused"]) == (1, 1)
    assert kinds(r)["refusal_near_miss"] == ["q1"]
    r = grounded.score(
        gold,
        [t("q1", claim="I don't know"), t("q2", claim="i DON'T know ")],
        refusal_token="I don't know",
    )
    assert r.output["refused"] == 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"qid": "q1", "answerable": None, "gold_claim_substr": [], "gold_citations": []},
            "answerable is null (expected a JSON boolean)",
        ),
        (
            {"qid": "q1", "gold_claim_substr": [], "gold_citations": []},
            "answerable is missing (expected a JSON boolean)",
        ),
        ({"qid": 7, "answerable": True}, "qid is 7 (expected a non-empty string)"),
        (
            {"qid": "q1", "answerable": True, "gold_claim_substr": "abc"},
            'gold_claim_substr is "abc" (expected a list of strings)',
        ),
        (
            {"qid": "q1", "answerable": True, "gold_claim_substr": [], "gold_citations": [["d"]]},
            'gold_citations contains ["d"] (expected ids: strings or numbers)',
        ),
    ],
)
def test_quirk5_and_bad_gold_rows(row, message):
    with pytest.raises(InputError) as exc:
        grounded.score([g("q0"), row], [t("q0")], gold_path="gold.jsonl")
    assert str(exc.value) == f"gold.jsonl:2: {message}"


def test_quirk6_duplicates():
    trace = [t("q1", claim="wrong"), t("q1")]
    r = grounded.score([g("q1")], trace)
    assert r.exact["precision"] == 1.0  # the last line wins
    assert kinds(r)["duplicate_trace"] == ["q1"]
    with pytest.raises(InputError, match=r"gold:2: duplicate qid 'q1' \(first on line 1"):
        grounded.score([g("q1"), g("q1")], trace)


def test_quirk7_nothing_shipped():
    r = grounded.score([g("q1")], [t("q1", claim="not in context")], gates="precision=0.8,chr=0.75")
    assert (r.exact["precision"], r.exact["chr"]) == (1.0, 1.0) and r.passed
    assert "no_answers_shipped" in kinds(r)
    assert r.exact["over_refusal"] == 1.0


def test_quirk8_empty_gold_citations():
    gold = [g("q1", cites=()), g("q2", cites=())]
    r = grounded.score(gold, [t("q1", cits=()), t("q2", cits=("d1",))])
    assert [it["citation_hit"] for it in r.items] == [True, False]
    assert [it["recall_hit"] for it in r.items] == [True, True]
    assert kinds(r)["empty_gold_citations"] == ["q1", "q2"]


def test_quirk9_citations_not_a_list_and_unhashable():
    row = t("q1")
    row["answer_json"]["citations"] = "d1"  # a string, not a list
    r = grounded.score([g("q1")], [row])
    assert r.items[0]["citation_hit"] is False
    assert kinds(r)["citations_not_a_list"] == ["q1"]
    with pytest.raises(InputError, match=r"trace:1: answer_json.citations contains \{\}"):
        grounded.score([g("q1")], [t("q1", cits=({},))])


def test_quirk10_unknown_gate_is_usage_error(tmp_path):
    res = cli(tmp_path, [g("q1")], [t("q1")], "--gates", "precision=0.8,recal=0.5")
    assert res.code == 2
    assert res.stderr == (
        "ragmeter grounded: unknown gate 'recal' (expected precision, chr, under, over or recall)\n"
    )


def test_quirk11_empty_gold_file(tmp_path):
    (tmp_path / "gold.jsonl").write_text("\n", encoding="utf-8")
    res = invoke(
        "grounded",
        "--gold",
        str(tmp_path / "gold.jsonl"),
        "--trace",
        write(tmp_path / "trace.jsonl", [t("q1")]),
    )
    assert res.code == 2
    assert (
        res.stderr == f"{tmp_path}/gold.jsonl: no data lines (expected one JSON object per line)\n"
    )


def test_recall_at_k_uses_top_k_and_all_retrieved_for_h():
    gold = [g("q1", cites=("d2",))]
    trace = [t("q1", cits=("d2",), ret=("a", "b", "c", "d", "e", "d2"))]
    r = grounded.score(gold, trace, k=5)
    assert r.items[0]["citation_hit"] is True  # H looks at every retrieved id
    assert r.items[0]["recall_hit"] is False
    assert "d2 is at rank 6" in " ".join(r.items[0]["notes"])
    assert grounded.score(gold, trace, k=6).exact["recall@k"] == 1.0


def test_details_file(tmp_path):
    gold = [g("q1"), g("q2", answerable=False, subs=(), cites=())]
    trace = [t("q1", cits=("d9",)), t("q2", claim="not in context", cits=())]
    details = tmp_path / "d.jsonl"
    res = cli(tmp_path, gold, trace, "--details", str(details), "--no-fail")
    assert res.code == 0
    lines = [json.loads(x) for x in details.read_text().splitlines()]
    assert [x["qid"] for x in lines] == ["q1", "q2"]
    assert list(lines[0]) == [
        "qid",
        "answerable",
        "answered",
        "containment",
        "citation_hit",
        "recall_hit",
        "counted_as",
        "notes",
    ]
    assert lines[0]["citation_hit"] is False
    assert lines[0]["notes"] == ["cited id d9 is not in retrieved_ids"]
    assert lines[1]["counted_as"] == ["correct_refusal"]
    assert lines[1]["containment"] is None


def test_output_file_and_json_flag(tmp_path):
    out = tmp_path / "report.json"
    res = cli(tmp_path, [g("q1")], [t("q1")], "--output", str(out), "--json")
    assert res.code == 0 and out.read_text() == res.stdout


def test_k_must_be_positive(tmp_path):
    res = cli(tmp_path, [g("q1")], [t("q1")], "--k", "0")
    assert res.code == 2 and "--k must be a positive integer" in res.stderr


def test_to_result():
    gold = [g("q1"), g("q2"), g("q3", answerable=False, subs=(), cites=())]
    trace = [t("q1"), t("q2", claim="not in context", cits=()), t("q3", claim="Made up.")]
    r = grounded.score(gold, trace)
    res = r.to_result()
    assert res.task == "grounded"
    assert res.summary == {
        "precision": 0.5,
        "chr": 0.5,
        "under_refusal": 1.0,
        "over_refusal": 0.5,
        "recall@k": 1.0,
    }
    assert res.values("precision") == {"q1": 1.0, "q3": 0.0}  # shipped answers only
    assert res.values("over_refusal") == {"q1": 0.0, "q2": 1.0}
    assert res.aggregates["under_refusal"].n == 1
    assert res.metadata["gates"] == {
        "precision": "0.80",
        "chr": "0.75",
        "under": "0.05",
        "over": "0.10",
    }
    assert res.metadata["k"] == 5 and res.metadata["pass"] is False
    detail = json.loads(res.samples.column("detail")[0].as_py())
    assert detail["qid"] == "q1"
    from ragmeter.result import Result

    assert Result.from_json(res.to_json()) == res
    from ragmeter import registry

    for key in res.aggregates:
        assert registry.resolve(f"grounded.{key}").canonical == key
