"""The SPARQL examples of docs/steps.md and the cases graphrag-eval's tests assert."""

from __future__ import annotations

import pytest

from ragmeter.steps import InputError, compare_sparql_results, find_column_mapping
from ragmeter.steps.sparql import canonical_cell, compat_cell, load_result, row_overlap

XSD = "http://www.w3.org/2001/XMLSchema#"
V6, V5 = "graphrag-eval-6", "graphrag-eval-5"


def P(n):
    return {"type": "uri", "value": f"http://example.com/Person/{n}"}


def lit(value, datatype=None, lang=None):
    cell = {"type": "literal", "value": value}
    if datatype:
        cell["datatype"] = XSD + datatype
    if lang:
        cell["xml:lang"] = lang
    return cell


def table(variables, *rows):
    return {
        "head": {"vars": list(variables)},
        "results": {
            "bindings": [
                {v: c for v, c in zip(variables, row, strict=True) if c is not None} for row in rows
            ]
        },
    }


def cmp(ref, act, q=None, ordered=False, ignore_duplicates=True, compat=None):
    return compare_sparql_results(ref, act, q, ordered, ignore_duplicates, compat=compat)


PEOPLE = table(["person", "personName"], [P(1), lit("Alice")], [P(2), lit("Bob")])


# -- the documented examples ----------------------------------------------------------------


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_1_renamed_columns(compat):
    act = table(["x", "y"], [P(1), lit("Alice")], [P(2), lit("Bob")])
    assert cmp(PEOPLE, act, ["person", "personName"], compat=compat) == 1.0
    assert find_column_mapping(PEOPLE, act, ["person", "personName"], compat=compat) == {
        "person": "x",
        "personName": "y",
    }


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_2_broken_association(compat):
    act = table(["x", "y"], [P(2), lit("Alice")], [P(1), lit("Bob")])
    assert cmp(PEOPLE, act, ["person", "personName"], compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_3_row_order(compat):
    act = table(["x", "y"], [P(2), lit("Bob")], [P(1), lit("Alice")])
    assert cmp(PEOPLE, act, ["person", "personName"], compat=compat) == 1.0
    assert cmp(PEOPLE, act, ["person", "personName"], ordered=True, compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_4_subset_of_columns(compat):
    ref = table(
        ["person", "personName", "personAge"],
        [P(1), lit("Alice"), lit("30", "integer")],
        [P(2), lit("Bob"), lit("35", "integer")],
    )
    act = table(
        ["person", "personAge", "gender"],
        [P(2), lit("35", "integer"), lit("m")],
        [P(1), lit("30", "integer"), lit("f")],
    )
    assert cmp(ref, act, ["person", "personAge"], compat=compat) == 1.0
    assert cmp(ref, act, ["person", "personAge"], ordered=True, compat=compat) == 0.0


def test_5_duplicates():
    ref = table(["character"], [P(2)], [P(1)])
    act = table(["x", "z"], [P(1), lit("a")], [P(1), lit("b")], [P(2), lit("c")], [P(2), lit("d")])
    for compat in (None, V6):
        assert cmp(ref, act, ["character"], compat=compat) == 1.0
        assert cmp(ref, act, ["character"], ignore_duplicates=False, compat=compat) == 0.0
        assert cmp(ref, act, ["character"], ordered=True, compat=compat) == 0.0
    assert cmp(ref, act, ["character"], compat=V5) == 0.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_6_one_actual_column_cannot_serve_two(compat):
    one, two = lit("1", "integer"), lit("2", "integer")
    ref = table(["a", "b"], [one, one], [two, two])
    act = table(["x", "y"], [one, lit("9", "integer")], [two, lit("8", "integer")])
    assert cmp(ref, act, ["a", "b"], compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_7_no_concatenation(compat):
    ref = table(["a", "b"], [lit("ab"), lit("c")])
    act = table(["x", "y"], [lit("a"), lit("bc")])
    assert cmp(ref, act, ["a", "b"], compat=compat) == 0.0


@pytest.mark.parametrize(
    ("ref_cell", "act_cell", "default", "compat"),
    [
        ({"type": "uri", "value": "http://x"}, lit("http://x"), 0.0, 1.0),  # 8
        (lit("chat", lang="fr"), lit("chat", lang="en"), 0.0, 1.0),  # 9
        (lit("1", "integer"), lit("1", "decimal"), 1.0, 0.0),  # 10
        (lit("01", "integer"), lit("1"), 0.0, 1.0),  # 11
        (lit("true", "boolean"), lit("1", "boolean"), 1.0, 1.0),  # 12
        (lit("true", "boolean"), lit("True"), 0.0, 1.0),  # 12
        # 14: the default relative tolerance 1e-8 says 0 (8e-6 apart; docs/steps.md,
        # Decisions). Compat: trunc5.
        (lit("1.000009", "double"), lit("1.000001", "double"), 0.0, 1.0),
        (lit("NaN", "double"), lit("NaN", "double"), 1.0, 1.0),  # 14
        (lit("1e3", "double"), lit("1000.0", "double"), 1.0, 1.0),  # 14
    ],
)
def test_8_to_14_cells(ref_cell, act_cell, default, compat):
    ref = table(["a"], [ref_cell])
    act = table(["x"], [act_cell])
    assert cmp(ref, act, ["a"]) == default
    assert cmp(ref, act, ["a"], compat=V6) == compat
    assert cmp(ref, act, ["a"], compat=V5) == compat


def test_14_default_tolerance_is_relative_1e_8():
    ref = table(["a"], [lit("1.0", "double")])
    assert cmp(ref, table(["x"], [lit("1.000000009", "double")])) == 1.0
    assert cmp(ref, table(["x"], [lit("1.00000002", "double")])) == 0.0
    assert cmp(ref, table(["x"], [lit("1.00000002", "double")]), compat=V6) == 1.0  # trunc5
    big = table(["a"], [lit("1000000000000", "integer")])
    assert cmp(big, table(["x"], [lit("1000000000001", "integer")])) == 0.0  # ints: exact


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_13_unbound_is_not_none(compat):
    ref = table(["a", "b"], [lit("x"), None])
    act = table(["x", "y"], [lit("x"), lit("None")])
    assert cmp(ref, act, ["a", "b"], compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6])
def test_15_superset_scores_zero_under_sets(compat):
    ref = table(["a"], [lit("A")])
    act = table(["x"], [lit("A")], [lit("B")])
    assert cmp(ref, act, ["a"], compat=compat) == 0.0


def test_16_empty_required_columns():
    ref = table(["a"], [lit("A")])
    act = table(["x"], [lit("unrelated")])
    assert cmp(ref, act, []) == 0.0
    assert cmp(ref, act, [], compat=V6) == 1.0
    assert cmp(ref, act, [], compat=V5) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_17_both_empty_fewer_columns(compat):
    ref = table(["a", "b"])
    assert cmp(ref, table(["x"]), ["a", "b"], compat=compat) == 0.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_18_ask_vs_other_results(compat):
    ask = {"head": {}, "boolean": True}
    assert cmp(ask, table(["x"], [lit("a")]), compat=compat) == 0.0
    assert cmp(table(["a"], [lit("a")]), ask, ["a"], compat=compat) == 0.0
    assert cmp(ask, '"@prefix ex: <http://x/> ."', compat=compat) == 0.0
    assert cmp(ask, "<http://x> <http://y> <http://z> .", compat=compat) == 0.0


def test_blank_nodes():
    ref = table(["a"], [{"type": "bnode", "value": "b0"}])
    act = table(["x"], [{"type": "bnode", "value": "genid-7"}])
    assert cmp(ref, act) == 1.0  # labels are local to a result set
    assert cmp(ref, act, compat=V6) == 0.0


def test_canonical_cells():
    assert canonical_cell(lit("1", "integer")) == canonical_cell(lit("1.0", "decimal"))
    assert canonical_cell(lit("1e0", "double")) == ("num", 1.0)
    assert canonical_cell(lit("INF", "double")) == canonical_cell(lit("+INF", "float"))
    assert canonical_cell(lit("INF", "double")) != canonical_cell(lit("-INF", "double"))
    assert canonical_cell(lit("yes", "boolean")) != canonical_cell(lit("yes"))
    assert canonical_cell(lit("TRUE", "boolean")) == canonical_cell(lit("1", "boolean"))
    assert canonical_cell(lit("x", "integer")) != canonical_cell(lit("x", "int"))
    assert canonical_cell(7) != canonical_cell("7")
    assert canonical_cell({"type": "bnode", "value": "a"}) == canonical_cell(
        {"type": "bnode", "value": "b"}
    )
    # kind tags cannot collide with payloads
    assert canonical_cell(lit("a", lang="e")) != canonical_cell(lit("1:ea"))
    assert compat_cell(lit("72.50000000001", "double")) == "72.5"
    assert compat_cell(lit("0.1234499999", "double")) == "0.12344"
    assert compat_cell(lit("0.00001", "double")) == "1e-05"
    assert compat_cell(lit("INF", "double")) == "inf"
    assert compat_cell(lit("1", "decimal")) == "1.0"


# -- upstream-asserted cases ----------------------------------------------------------------


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_empty_results(compat):
    assert (
        cmp(PEOPLE, table(["person", "personName"]), ["personName", "person"], compat=compat) == 0
    )
    empty = table(["person", "personName"])
    two = ["personName", "person"]
    assert cmp(empty, table(["x", "y"]), two, compat=compat) == 1.0
    assert cmp(empty, table(["x", "y", "z"]), two, compat=compat) == 1.0
    assert cmp(empty, table(["x"]), two, compat=compat) == 0.0
    assert cmp(empty, table(["x"]), ["person"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_ask(compat):
    def ask(b):
        return {"head": {}, "boolean": b}

    assert [
        cmp(ask(r), ask(a), [], compat=compat)
        for r, a in [(True, True), (False, True), (True, False), (False, False)]
    ] == [1.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("compat", [None, V6, V5])
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("q", [["person", "personName"], ["personName"], []])
def test_identical_and_renamed_tables(compat, ordered, q):
    renamed = table(["x", "y"], [P(1), lit("Alice")], [P(2), lit("Bob")])
    assert cmp(PEOPLE, PEOPLE, q, ordered=ordered, compat=compat) == 1.0
    assert cmp(PEOPLE, renamed, q, ordered=ordered, compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_average_age_decimal(compat):
    ref = table(["average_person_age"], [lit("35", "decimal")])
    act = table(["avg"], [lit("35", "decimal")])
    assert cmp(ref, act, ["average_person_age"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_partially_unbound_rows(compat):
    a, b = lit("A"), lit("B")
    ref = table(["x", "y"], [P(2), b], [P(1), None], [P(3), a], [P(6), None], [P(5), a])
    act = table(["x", "y"], [P(2), None], [P(1), b], [P(3), a], [P(6), None], [P(5), a])
    assert cmp(ref, act, ["x", "y"], compat=compat) == 0.0
    assert cmp(ref, ref, ["x", "y"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_single_required_column_among_many(compat):
    ref = table(["person"], [P(2)], [P(3)])
    act = table(["p", "n"], [P(3), lit("Alice")], [P(2), lit("Bob")])
    assert cmp(ref, act, ["person"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_shuffled_four_row_tables_both_directions(compat):
    rows = [
        [P(1), lit("Luke"), lit("19", "integer")],
        [P(2), lit("Leia"), lit("19", "integer")],
        [P(3), lit("Han"), lit("32", "integer")],
        [P(4), lit("Yoda"), lit("900", "integer")],
    ]
    ref = table(["character", "name", "age"], *rows)
    act = table(
        ["age", "c", "n"], *[[r[2], r[0], r[1]] for r in (rows[2], rows[0], rows[3], rows[1])]
    )
    q = ["character", "name", "age"]
    assert cmp(ref, act, q, compat=compat) == 1.0
    assert cmp(act, ref, ["c", "n", "age"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_float_weights(compat):
    ref = table(["w"], [lit("72.5", "double")], [lit("80.123456789", "double")])
    act = table(["x"], [lit("80.12345678", "double")], [lit("72.50000000001", "double")])
    assert cmp(ref, act, ["w"], compat=compat) == 1.0


@pytest.mark.parametrize("compat", [None, V6, V5])
def test_same_person_two_rows_reversed(compat):
    ref = table(
        ["p", "name", "n"],
        [P(1), lit("Neli"), lit("100", "integer")],
        [P(1), lit("Reni"), lit("101", "integer")],
    )
    act = table(
        ["p", "name", "n"],
        [P(1), lit("Reni"), lit("101", "integer")],
        [P(1), lit("Neli"), lit("100", "integer")],
    )
    assert cmp(ref, act, ["p", "name", "n"], compat=compat) == 1.0


# -- inputs and edge cases ------------------------------------------------------------------


def test_json_text_inputs():
    import json

    assert cmp(json.dumps(PEOPLE), json.dumps(PEOPLE)) == 1.0
    assert cmp(PEOPLE, "not json") == 0.0


def test_invalid_reference_is_an_input_error():
    with pytest.raises(InputError, match="not a SPARQL result"):
        cmp({"head": {"vars": ["a"]}}, PEOPLE)
    with pytest.raises(InputError, match="required column 'nope'"):
        cmp(PEOPLE, PEOPLE, ["nope"])


def test_missing_required_column_in_compat_is_all_unbound():
    act = table(["x", "y"], [P(1), None], [P(2), None])
    assert cmp(PEOPLE, act, ["person", "nope"], compat=V6) == 1.0


def test_actual_without_head_or_results():
    empty = table(["a"])
    assert cmp(empty, {"results": {"bindings": []}}, ["a"]) == 0.0  # no actual columns
    assert cmp(table(["a"], [lit("x")]), {"head": {"vars": ["x"]}}) == 0.0
    assert cmp(table(["a"], [lit("x")]), {"head": "bad"}) == 0.0


def test_row_overlap_diagnostic():
    ref = load_result(table(["a", "b"], [lit("1"), lit("2")], [lit("3"), lit("4")]))
    act = load_result(
        table(["x", "y", "z"], [lit("2"), lit("1"), lit("q")], [lit("9"), lit("3"), lit("q")])
    )
    assert row_overlap(ref, act, None, False, True) == (0.5, 0.5)
    assert row_overlap(ref, load_result(table(["x"], [lit("1")])), None, False, True) is None


def test_large_tables_are_fast_enough_to_run_here():
    """Not a timing test: B2's shape (10 columns × 10,000 rows, shuffled) decides correctly."""
    import random

    rng = random.Random(3)
    cols = [f"c{i}" for i in range(10)]
    rows = [[lit(f"{c}-{r}") for c in cols] for r in range(10_000)]
    ref = table(cols, *rows)
    perm = list(range(10))
    rng.shuffle(perm)
    shuffled = [[row[i] for i in perm] for row in rows]
    rng.shuffle(shuffled)
    act = table([f"x{i}" for i in perm], *shuffled)
    assert cmp(ref, act) == 1.0
    shuffled[0][0], shuffled[1][0] = shuffled[1][0], shuffled[0][0]
    assert cmp(ref, table([f"x{i}" for i in perm], *shuffled)) == 0.0
