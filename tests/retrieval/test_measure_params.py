"""Measure parameters are read as trec_eval 10.0 reads them (``atol``/``atof`` on each
comma-separated piece), with a warning whenever text is ignored; what cannot be reproduced
honestly is refused with one line."""

from __future__ import annotations

import pytest

from ragmeter.errors import UsageError
from ragmeter.io.cnum import c_atof, c_atol
from ragmeter.retrieval import parse_measures
from tests.helpers import CONFORMANCE, invoke

TE = CONFORMANCE / "trec_eval"
QRELS, RUN = str(TE / "qrels.test"), str(TE / "results.test")


def _trec(*measures: str):
    args = [a for m in measures for a in ("-m", m)]
    return invoke("trec", *args, QRELS, RUN)


@pytest.mark.parametrize(
    ("text", "atol", "atof"),
    [
        ("1e1", (1, 1), (10.0, 3)),
        ("10x", (10, 2), (10.0, 2)),
        (" 5", (5, 2), (5.0, 2)),
        ("1=0", (1, 1), (1.0, 1)),
        ("nan", (0, 0), None),
        ("inf", (0, 0), (float("inf"), 3)),
        ("1e309", (1, 1), (float("inf"), 5)),
        ("0x10", (0, 1), (16.0, 4)),
        ("-7", (-7, 2), (-7.0, 2)),
        (".5", (0, 0), (0.5, 2)),
        ("1e", (1, 1), (1.0, 1)),
        ("", (0, 0), (0.0, 0)),
        ("99999999999999999999", (2**63 - 1, 20), (1e20, 20)),
        ("-99999999999999999999", (-(2**63), 21), (-1e20, 21)),
    ],
)
def test_c_library_readings(text, atol, atof):
    assert c_atol(text) == atol
    if atof is not None:
        assert c_atof(text) == atof


@pytest.mark.parametrize(
    ("asked", "same_as", "warning"),
    [
        # trec_eval prints recall_1 here (atol("1e1") == 1); ragmeter printed recall_10
        (
            "recall.1e1",
            "recall.1",
            "cutoff '1e1' in 'recall.1e1' is read as 1, as trec_eval reads it (atol stops at 'e1')",
        ),
        (
            "ndcg_cut.10x",
            "ndcg_cut.10",
            "cutoff '10x' in 'ndcg_cut.10x' is read as 10, as trec_eval reads it (atol stops at "
            "'x')",
        ),
        (
            "ndcg_cut.1=0,2=2",
            "ndcg_cut.1,2",
            "cutoff '1=0' in 'ndcg_cut.1=0,2=2' is read as 1, as trec_eval reads it (atol stops "
            "at '=0'); level=gain pairs belong to ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg, rbp",
        ),
        ("P. 5", "P.5", None),
        ("P.5, 10", "P.5,10", None),
        ("P.05", "P.5", None),
        ("recall.3.9", "recall.3", "cutoff '3.9' in 'recall.3.9' is not an integer; using 3"),
        (
            "iprec_at_recall.0.5x",
            "iprec_at_recall.0.5",
            "cutoff '0.5x' in 'iprec_at_recall.0.5x' is read as 0.5, as trec_eval reads it (atof "
            "stops at 'x')",
        ),
    ],
)
def test_cutoffs_read_as_trec_eval_reads_them(asked, same_as, warning):
    got, want = _trec(asked), _trec(same_as)
    assert got.code == 0 and want.code == 0
    assert got.stdout == want.stdout
    lines = [ln for ln in got.stderr.splitlines() if ln]
    assert lines[: 1 if warning else 0] == (
        [f"ragmeter trec: warning: {warning}"] if warning else []
    )


def test_printed_names_follow_trec_eval():
    out = _trec("recall.1e1", "P. 5", "ndcg_cut.1=0,2=2").stdout
    names = [line.split("\t")[0].rstrip() for line in out.splitlines()]
    assert names == ["P_5", "recall_1", "ndcg_cut_1", "ndcg_cut_2"]
    # reals keep the parameter text as typed (trec_eval's printable_params), value read by atof
    w: list[str] = []
    (m,) = parse_measures("utility.1,-1,0,0x", warnings=w)
    assert m.printed() == "utility_1,-1,0,0x" and m.param("coeffs") == (1.0, -1.0, 0.0, 0.0)
    assert w == [
        "parameter '0x' in 'utility.1,-1,0,0x' is read as 0, as trec_eval reads it (atof stops "
        "at 'x')"
    ]
    w = []
    (m,) = parse_measures("ndcg.1=3x,2=9", warnings=w)
    assert m.gains == ((1, 3.0), (2, 9.0)) and len(w) == 1


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        ("P.abc", "bad cutoff 'abc' in 'P.abc' (cutoffs are integers ≥ 1)"),
        ("P.-5", "bad cutoff '-5' in 'P.-5' (cutoffs are integers ≥ 1)"),
        ("P.5,,10", "bad cutoff '' in 'P.5,,10' (cutoffs are integers ≥ 1)"),
        (
            "P.99999999999999999999",
            "bad cutoff '99999999999999999999' in 'P.99999999999999999999' (cutoffs are "
            "integers from 1 to 2147483647)",
        ),
        # ir_measures style has no C reading to reproduce
        ("P@1e1", "bad cutoff '1e1' in 'P@1e1' (cutoffs are integers ≥ 1)"),
        ("P@10x", "bad cutoff '10x' in 'P@10x' (cutoffs are integers ≥ 1)"),
        ("iprec_at_recall.x", "bad cutoff 'x' in 'iprec_at_recall.x' (expected a number)"),
        (
            "iprec_at_recall.inf",
            "bad cutoff 'inf' in 'iprec_at_recall.inf' (expected a finite number)",
        ),
        ("ndcg.1=abc", "bad gain 'abc' in 'ndcg.1=abc' (expected a number)"),
    ],
)
def test_refused_parameters_are_one_line(measure, message):
    res = _trec(measure)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == f"ragmeter trec: {message}\n"
    with pytest.raises(UsageError):
        parse_measures(measure)


def test_registry_refuses_names_that_only_read_as_trec_eval_reads_them():
    # a gate rule or runner config has no warning channel: recall.1e1 must not become recall_1
    from ragmeter.retrieval.names import resolve_one

    assert resolve_one("recall.10").canonical == "R@10"
    with pytest.raises(UsageError, match=r"'recall\.1e1' is ambiguous: cutoff '1e1'"):
        resolve_one("recall.1e1")
