"""trec_eval 10.0's own expected outputs, reproduced byte for byte (its test suite's files).

The fixtures are copied unmodified from usnistgov/trec_eval (tag v10.0, ``test/``); see
``tests/data/conformance/trec_eval/README.md`` for provenance and licence.
"""

from __future__ import annotations

import hashlib

import pytest

from ragmeter.retrieval import evaluate
from tests.helpers import CONFORMANCE, invoke, run_cli

# every test once per TREC parse path (Arrow, small files, regular files): same output, same errors
pytestmark = pytest.mark.usefixtures("trec_parser")

DATA = CONFORMANCE / "trec_eval"

MEAS_PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"
)

# the "yes" rows of the fixtures' README: expected output, command line
COMMANDS = [
    ("out.test", "qrels.test results.test"),
    ("out.test", "qrels.test.with-comments results.test"),
    ("out.comment.test", "qrels.comment.test results.comment.test"),
    ("out.test.a", "-m all_trec qrels.test results.test"),
    ("out.test.aq", "-m all_trec -q qrels.test results.test"),
    ("out.test.aqc", "-m all_trec -q -c qrels.test results.trunc"),
    ("out.test.aqcM", "-m all_trec -q -c -M100 qrels.test results.trunc"),
    ("out.test.aql", "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test"),
    ("out.test.meas_params", MEAS_PARAMS),
    ("out.test.aqZ", "-q -m all_trec -Z zscores_file qrels.test results.test"),
]


def _argv(cmd: str) -> list[str]:
    out = []
    for tok in cmd.split():
        path = DATA / tok
        out.append(str(path) if path.exists() and not tok.startswith("-") else tok)
    return out


def test_fixture_checksums():
    """The fixtures are byte-identical to upstream (SHA256SUMS from the shared folder)."""
    lines = (DATA / "SHA256SUMS").read_text().splitlines()
    listed = set()
    for line in lines:
        digest, name = line.split()
        listed.add(name)
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name
    present = {p.name for p in DATA.iterdir()} - {"README.md", "SHA256SUMS", ".gitattributes"}
    assert listed == present and len(listed) == 29


@pytest.mark.parametrize(("expected", "cmd"), COMMANDS, ids=[f"{e}:{c[:30]}" for e, c in COMMANDS])
def test_cli_reproduces_trec_eval_output(expected, cmd):
    res = invoke("trec", *_argv(cmd))
    assert res.code == 0, res.stderr
    assert res.stdout == (DATA / expected).read_text()


def test_every_all_trec_measure_is_covered():
    """The ten commands print every measure of all_trec (README's list)."""
    seen = set()
    for expected, _ in COMMANDS:
        for line in (DATA / expected).read_text().splitlines():
            seen.add(line.split("\t")[0].strip().lstrip("Z"))
    families = [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "infAP",
        "gm_bpref",
        "Rprec_mult",
        "utility",
        "11pt_avg",
        "binG",
        "G",
        "ndcg",
        "ndcg_rel",
        "Rndcg",
        "ndcg_cut",
        "map_cut",
        "relative_P",
        "success",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
        "rbp",
        "rbp_resid",
        "unj",
    ]
    for fam in families:
        assert any(s == fam or s.startswith(fam + "_") for s in seen), fam


def test_subprocess_entry_point_matches():
    """The real command line (python -m ragmeter, lean path) gives the same bytes."""
    res = run_cli(
        "trec", "-m", "all_trec", "-q", str(DATA / "qrels.test"), str(DATA / "results.test")
    )
    assert res.code == 0, res.stderr
    assert res.stdout == (DATA / "out.test.aq").read_text()


def test_topic_302_subset_matches_full_run():
    """qrels-302/results-302 print exactly the 302 rows of out.test.aq (README's extra check)."""
    res = invoke(
        "trec", "-m", "all_trec", "-q", str(DATA / "qrels-302.test"), str(DATA / "results-302.test")
    )
    assert res.code == 0
    rows_302 = [ln for ln in res.stdout.splitlines() if "\t302\t" in ln]
    expected = [ln for ln in (DATA / "out.test.aq").read_text().splitlines() if "\t302\t" in ln]
    assert rows_302 == expected and len(rows_302) > 80


@pytest.mark.parametrize(
    ("flag", "value"),
    [("-R", "prefs"), ("-R", "qrels_prefs"), ("-R", "qrels_jg")],
)
def test_out_of_scope_formats_exit_2(flag, value):
    res = invoke(
        "trec",
        "-m",
        "all_prefs",
        "-q",
        flag,
        value,
        str(DATA / "prefs.test"),
        str(DATA / "prefs.results.test"),
    )
    assert res.code == 2
    assert res.stdout == ""
    assert res.stderr == (
        f"ragmeter trec: -R {value} is not supported (ragmeter implements the qrels format only; "
        "preference and judgment-group measures are out of scope)\n"
    )


def test_missing_query_warnings_for_results_trunc():
    skipped = invoke(
        "trec", "-m", "map", "-m", "P.10", str(DATA / "qrels.test"), str(DATA / "results.trunc")
    )
    assert skipped.code == 0
    assert (
        skipped.stdout
        == "map                   \tall\t0.1523\nP_10                  \tall\t0.3000\n"
    )
    assert skipped.stderr == (
        f"ragmeter trec: warning: 1 judged query has no results in {DATA / 'results.trunc'} and "
        "was skipped: 302 (use -c to score missing queries as 0)\n"
    )
    zeroed = invoke(
        "trec",
        "-c",
        "-m",
        "map",
        "-m",
        "P.10",
        "-m",
        "num_q",
        str(DATA / "qrels.test"),
        str(DATA / "results.trunc"),
    )
    assert zeroed.stdout == (
        "num_q                 \tall\t3\n"
        "map                   \tall\t0.1016\n"
        "P_10                  \tall\t0.2000\n"
    )
    assert "and was scored 0 (-c): 302" in zeroed.stderr


def test_python_api_reproduces_out_test_a():
    res = evaluate(DATA / "qrels.test", DATA / "results.test", ["all_trec"])
    assert res.to_trec() == (DATA / "out.test.a").read_text()


def test_headline_values_full_precision():
    """README headline values; rbp is the published definition (= trec_eval's -O0 build)."""
    res = evaluate(
        DATA / "qrels.test",
        DATA / "results.test",
        [
            "map",
            "gm_map",
            "Rprec",
            "bpref",
            "recip_rank",
            "P.10",
            "recall.100",
            "ndcg_cut.10",
            "ndcg",
            "infAP",
            "rbp",
        ],
    )
    expected = {
        "map": 0.1785,
        "gm_map": 0.1051,
        "Rprec": 0.2174,
        "bpref": 0.1981,
        "recip_rank": 0.4064,
        "P_10": 0.3000,
        "recall_100": 0.4980,
        "ndcg_cut_10": 0.3016,
        "ndcg": 0.4021,
        "infAP": 0.1785,
        "rbp": 0.3234,
    }
    for name, value in expected.items():
        assert f"{res.summary[name]:.4f}" == f"{value:.4f}", name


def test_rel_level_headline_values():
    res = evaluate(
        DATA / "qrels.rel_level",
        DATA / "results.test",
        ["map", "ndcg_cut.10", "recip_rank", "P.10", "recall.100"],
    )
    got = {k: f"{v:.4f}" for k, v in res.summary.items()}
    assert got == {
        "map": "0.1774",
        "recip_rank": "0.4064",
        "P_10": "0.3000",
        "recall_100": "0.4897",
        "ndcg_cut_10": "0.2656",
    }
