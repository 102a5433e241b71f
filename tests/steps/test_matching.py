"""Step scores, matching and steps_score: docs/steps.md (E1–E6) and graphrag-eval's
own asserted cases."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.steps import match_groups, run_evaluation, score_step, steps_score
from ragmeter.steps.matching import optimal_assignment
from tests.steps.common import LLM, load_yaml, read_responses

V6, V5 = "graphrag-eval-6", "graphrag-eval-5"
MODES = [None, V6, V5]
SPARQL = "application/sparql-results+json"


def score(groups, actual, compat=None):
    return steps_score(groups, match_groups(groups, actual, compat=compat), compat=compat)


def step(name, output, sid=None, status="success", **extra):
    s = {"name": name, "status": status, **extra}
    if output is not None:
        s["output"] = output
    if sid is not None:
        s["id"] = sid
    return s


def ref(name, output=None, **extra):
    s = {"name": name, **extra}
    if output is not None:
        s["output"] = output
    return s


def docs(*ids):
    return json.dumps([{"id": i, "text": f"text {i}"} for i in ids])


def sparql_out(variables, *rows):
    return json.dumps(
        {
            "head": {"vars": list(variables)},
            "results": {
                "bindings": [
                    {
                        v: {"type": "literal", "value": str(c)}
                        for v, c in zip(variables, row, strict=True)
                    }
                    for row in rows
                ]
            },
        }
    )


def sparql_ref(variables, *rows, required=None):
    return ref(
        "sparql_query",
        sparql_out(variables, *rows),
        output_media_type=SPARQL,
        required_columns=list(required or variables),
    )


SPARQL_REF = sparql_ref(["t", "n"], ["T1", "OSLO T1"], ["T2", "OSLO T2"])
SPARQL_ACT = step("sparql_query", sparql_out(["x", "y"], ["T2", "OSLO T2"], ["T1", "OSLO T1"]))
RETRIEVAL_REF = ref("retrieval", docs(1, 3, 5, 7, 9), args={"k": 5})
RETRIEVAL_ACT = step("retrieval", docs(*range(1, 11)), args={"k": 5})


# -- step scores (graphrag-eval's asserted cases) -------------------------------------------


@pytest.mark.parametrize("compat", MODES)
def test_step_scores(compat):
    influx_ref = ref(
        "influx_query",
        '{"results": [{"series": [{"name": "t", "columns": ["time", "v"], '
        '"values": [[1, 2.5]]}]}]}',
        output_media_type="application/json",
    )
    influx_act = step(
        "influx_query",
        '{"results": [{"series": [{"values": [[1, 2.5]], "columns": ["time", "v"], '
        '"name": "t"}]}]}',
    )
    assert score_step(influx_ref, influx_act, compat=compat) == 1.0
    calc = ref("calculation", 15)
    assert score_step(calc, step("calculation", 15), compat=compat) == 1.0
    assert score_step(calc, step("calculation", 16), compat=compat) == 0.0
    concat = ref("concatenation", "510")
    assert score_step(concat, step("concatenation", "510"), compat=compat) == 1.0
    assert score_step(concat, step("concatenation", "105"), compat=compat) == 0.0
    retr_self = step("retrieval", docs(1, 3, 5, 7, 9), args={"k": 5})
    assert score_step(RETRIEVAL_REF, retr_self, compat=compat) == 1.0
    assert score_step(RETRIEVAL_REF, RETRIEVAL_ACT, compat=compat) == 0.6
    assert score_step(ref("retrieval", args={"k": 5}), RETRIEVAL_ACT, compat=compat) == 0.0
    assert score_step(ref("calculation"), step("calculation", 16), compat=compat) == 0.0
    assert score_step(SPARQL_REF, SPARQL_ACT, compat=compat) == 1.0
    failed = step("retrieval", None, status="error", args={"k": 5})
    assert score_step(RETRIEVAL_REF, failed, compat=compat) == 0.0


def test_json_equality_is_typed():
    true_ref = ref("tool", "[true]", output_media_type="application/json")
    assert score_step(true_ref, step("tool", "[1]")) == 0.0
    assert score_step(true_ref, step("tool", [True])) == 1.0  # already-parsed actual output
    assert (
        score_step(
            ref("tool", '{"a": 1}', output_media_type="application/json"),
            step("tool", '{"a": 1.0}'),
        )
        == 1.0
    )
    assert score_step(true_ref, step("tool", "not json")) == 0.0


def test_names_must_match_except_iri_discovery():
    assert score_step(ref("a", "x"), step("b", "x")) == 0.0
    assert score_step(ref("a", "x"), step("b", "x"), compat=V6) == 0.0


def test_sparql_rule_needs_the_name_in_v6_only():
    r = dict(SPARQL_REF, name="graphdb_query")
    a = dict(SPARQL_ACT, name="graphdb_query")
    assert score_step(r, a) == 1.0
    assert score_step(r, a, compat=V6) == 0.0  # raw string comparison, as upstream
    assert score_step(r, a, compat=V5) == 1.0


# -- E1–E5 ----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::ragmeter.warnings.RagmeterWarning")  # 39 stray responses
@pytest.mark.parametrize("compat", MODES)
def test_e1_readme_example(compat):
    reference = load_yaml(LLM / "reference_1.yaml")
    responses = read_responses(LLM / "actual_responses_1.jsonl")
    record = run_evaluation(reference, responses, compat=compat)[0]
    assert record["steps_score"] == 1.0
    group = record["reference_steps"][0]
    assert [s["matches"] for s in group] == ["call_3", "call_3b3zHJnBXwYYSg04BiFGAAgO"]


@pytest.mark.parametrize(
    ("actual", "default", "v6", "v5"),
    [
        ([RETRIEVAL_ACT, SPARQL_ACT], 0.3, 0.3, 0.6),
        ([SPARQL_ACT, RETRIEVAL_ACT], 0.8, 0.8, 0.6),
        ([RETRIEVAL_ACT], 0.3, 0.3, 0.6),
        ([SPARQL_ACT], 0.0, 0.0, 0.0),
    ],
)
def test_e2_two_groups(actual, default, v6, v5):
    groups = [[SPARQL_REF], [RETRIEVAL_REF]]
    assert score(groups, actual) == default
    assert score(groups, actual, V6) == v6
    assert score(groups, actual, V5) == v5


@pytest.mark.parametrize("compat", MODES)
def test_e2_one_group(compat):
    groups = [[SPARQL_REF, RETRIEVAL_REF]]
    assert score(groups, [RETRIEVAL_ACT, SPARQL_ACT], compat) == 0.8
    assert score(groups, [SPARQL_ACT, RETRIEVAL_ACT], compat) == 0.8
    assert score(groups, [RETRIEVAL_ACT], compat) == 0.3
    assert score(groups, [SPARQL_ACT], compat) == 0.5
    failed = step("retrieval", None, status="error", args={"k": 5})
    assert score(groups, [failed], compat) == 0.0
    assert score(groups, [step("calculation", 16)], compat) == 0.0
    assert score(groups, [], compat) == 0.0


R_AB = sparql_ref(["a", "b"], [1, 2])
R_A = sparql_ref(["a"], [1])


def _e3_actual():
    return [
        step("sparql_query", sparql_out(["a", "b"], [1, 2]), "s1"),
        step("lookup", "L", "L1"),
        step("sparql_query", sparql_out(["a"], [1]), "s3"),
        step("sparql_query", sparql_out(["a", "b"], [1, 2]), "s4"),
    ]


def test_e3_fence_choice():
    groups = [[ref("lookup", "L")], [R_AB, R_A]]
    actual = _e3_actual()
    assert score(groups, actual, V6) == 0.5
    assert score(groups, actual) == 1.0
    assert score(groups, actual, V5) == 1.0
    m = {(g, r): actual[j]["id"] for g, r, j, _s in match_groups(groups, actual)}
    assert m == {(1, 0): "s4", (1, 1): "s3", (0, 0): "L1"}
    assert score([[ref("lookup", "L")], [R_A, R_AB]], actual, V6) == 1.0


def test_e4_greedy_vs_optimal():
    actual = [
        step("sparql_query", sparql_out(["a"], [1]), "S_a"),
        step("sparql_query", sparql_out(["a", "b"], [1, 2]), "S_ab"),
    ]
    assert score([[R_AB, R_A]], actual, V6) == 0.5
    assert score([[R_AB, R_A]], actual) == 1.0
    assert score([[R_A, R_AB]], actual, V6) == 1.0
    assert score([[R_A, R_AB]], actual, V5) == 0.5


def test_e5_retrieval_takes_the_best():
    reference = ref("retrieval", docs("d1", "d2"))
    good = step("retrieval", docs("d1", "d2"), "good", args={"k": 2})
    bad = step("retrieval", docs("d1", "x"), "bad", args={"k": 2})
    groups = [[reference]]
    assert score(groups, [good, bad], V5) == 0.5
    assert score(groups, [good, bad], V6) == 0.5
    assert score(groups, [good, bad]) == 1.0
    (match,) = match_groups(groups, [good, bad])
    assert match.actual == 0


# -- matching (graphrag-eval's asserted cases) ----------------------------------------------


def ab(name, n):
    return {"name": f"step_{name}", "output": f"result_{name}{n}"}


def act(name, n, sid=None, status="success"):
    s = {"name": f"step_{name}", "status": status, "id": sid}
    if status == "success":
        s["output"] = f"result_{name}{n}"
    return s


@pytest.mark.parametrize("compat", MODES)
def test_match_group_last_group(compat):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "")]]
    actual = [act("a", "_1", "1"), act("b", "", "2")]
    matches = match_groups(groups, actual, compat=compat)
    assert [tuple(m) for m in matches if m.group == 1] == [(1, 0, 1, 1.0)]


@pytest.mark.parametrize(("compat", "expected_ref"), [(None, 1), (V6, 1), (V5, 0)])
def test_match_group_duplicate_reference_steps(compat, expected_ref):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", ""), ab("b", "")]]
    actual = [act("a", "", "1"), act("b", "", "2")]
    matches = match_groups(groups, actual, compat=compat)
    assert [tuple(m) for m in matches] == [(1, expected_ref, 1, 1.0)]


@pytest.mark.parametrize("compat", MODES)
def test_match_group_crossed(compat):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "_1"), ab("b", "_2")]]
    actual = [act("b", "_2", "1"), act("a", "", "2"), act("b", "_1", "3")]
    matches = match_groups(groups, actual, compat=compat)
    got = {(m.group, m.ref): m.actual for m in matches}
    assert got == {(1, 0): 2, (1, 1): 0}


@pytest.mark.parametrize(("compat", "expected"), [(None, 0.5), (V6, 0.5), (V5, 1.0)])
def test_match_groups_with_failed_step(compat, expected):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "_1"), ab("b", "_2")]]
    actual = [
        act("b", "_2", "1"),
        act("b", None, "2", status="error"),
        act("a", "", "3"),
        act("b", "_1", "4"),
    ]
    matches = match_groups(groups, actual, compat=compat)
    assert {tuple(m) for m in matches} == {(1, 1, 0, 1.0), (1, 0, 3, 1.0)}
    assert steps_score(groups, matches, compat=compat) == expected
    if compat != V5:
        assert [tuple(m) for m in matches] == [(1, 1, 0, 1.0), (1, 0, 3, 1.0)]


@pytest.mark.parametrize(("compat", "expected"), [(None, 0.25), (V6, 0.25), (V5, 0.5)])
def test_match_groups_incomplete_last_group(compat, expected):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "_1"), ab("b", "_2")]]
    actual = [
        act("b", "_24", "1"),
        act("b", None, "2", status="error"),
        act("a", "", "3"),
        act("b", "_1", "4"),
    ]
    matches = match_groups(groups, actual, compat=compat)
    assert steps_score(groups, matches, compat=compat) == expected
    assert {(m.group, m.ref): actual[m.actual]["id"] for m in matches} == {(1, 0): "4"}


@pytest.mark.parametrize("compat", MODES)
def test_match_groups_nothing_matches(compat):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "_2")]]
    actual = [
        act("a", "_1", "1"),
        act("b", None, "2", status="error"),
        act("b", None, "3", status="error"),
        act("a", "", "4"),
        act("b", None, "5", status="error"),
    ]
    matches = match_groups(groups, actual, compat=compat)
    assert matches == []
    assert steps_score(groups, matches, compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6])
def test_match_groups_full(compat):
    groups = [[ab("a", "_1"), ab("a", "_2")], [ab("b", "_2")]]
    actual = [
        act("a", "_1", "1"),
        act("a", "_2", "2"),
        act("b", "_2", "3"),
        act("b", None, "4", status="error"),
        act("a", "", "5"),
        act("b", "_1", "6"),
    ]
    matches = match_groups(groups, actual, compat=compat)
    assert steps_score(groups, matches, compat=compat) == 1.0
    assert {(m.group, m.ref): actual[m.actual]["id"] for m in matches}[(1, 0)] == "3"


def test_count_before_score():
    """Most matched first: A→y, B→x (both matched, 0.5) beats A→x alone (0.9)."""
    cands = [[(0, 0.9), (1, 0.2)], [(0, 0.3)]]
    assert optimal_assignment(cands) == {1: (0, 0.3), 0: (1, 0.2)}
    assert optimal_assignment(cands, method="lsa") == {1: (0, 0.3), 0: (1, 0.2)}


# -- fast path vs exhaustive search ---------------------------------------------------------


def _random_candidates(rng: random.Random):
    m, n = rng.randint(1, 6), rng.randint(0, 10)
    values = [0.0, 0.5, 1.0, 1 / 3]
    return [[(j, s) for j in reversed(range(n)) if (s := rng.choice(values)) > 0] for _ in range(m)]


@settings(max_examples=300)
@given(seed=st.integers(0, 2**32 - 1))
def test_lsa_path_equals_exhaustive_search(seed):
    cands = _random_candidates(random.Random(seed))
    assert optimal_assignment(cands, method="lsa") == optimal_assignment(cands, method="exhaustive")


def test_lsa_path_equals_exhaustive_search_bulk():
    rng = random.Random(5)
    for _ in range(1500):
        cands = _random_candidates(rng)
        assert optimal_assignment(cands, method="lsa") == optimal_assignment(
            cands, method="exhaustive"
        ), cands


def _plain_optimum(cands):
    """Every injective choice, scored by the assignment key, written from docs/steps.md."""
    import itertools

    m = len(cands)
    best = None
    for choice in itertools.product(*[[None, *c] for c in cands]):
        js = [c[0] for c in choice if c is not None]
        if len(js) != len(set(js)):
            continue
        pairs = {r: c for r, c in enumerate(choice) if c is not None}
        key = (
            len(pairs),
            round(sum(s for _j, s in pairs.values()), 9),
            min(js, default=-1),
            tuple(pairs[r][0] if r in pairs else -1 for r in reversed(range(m))),
        )
        if best is None or key > best[0]:
            best = (key, pairs)
    return best[1]


def test_search_equals_plain_enumeration():
    rng = random.Random(11)
    for _ in range(800):
        m, n = rng.randint(1, 4), rng.randint(0, 6)
        cands = [
            [(j, s) for j in reversed(range(n)) if (s := rng.choice([0, 0.5, 1.0, 1 / 3])) > 0]
            for _ in range(m)
        ]
        assert optimal_assignment(cands, method="exhaustive") == _plain_optimum(cands), cands


def test_large_groups_use_the_lsa_path():
    cands = [[(j, 1.0) for j in range(40)] for _ in range(8)]  # 41**8 > 10**6
    got = optimal_assignment(cands)
    assert sorted(j for j, _s in got.values()) == list(range(32, 40))
    assert [got[r][0] for r in reversed(range(8))] == list(range(39, 31, -1))
