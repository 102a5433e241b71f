"""Input robustness (docs/retrieval.md, "Inputs"; docs/conventions.md): every ugly input gets
one line with the file and line and exit status 2 (CLI), or an InputError with ``path`` and
``line``."""

from __future__ import annotations

import gzip

import pytest

from ragmeter.errors import InputError, UsageError
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.retrieval import evaluate
from tests.helpers import CONFORMANCE, invoke

# every test once per TREC parse path (Arrow, small files, regular files): same output, same errors
pytestmark = pytest.mark.usefixtures("trec_parser")

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
RUN = "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n"
EXPECTED_MAP = "map                   \tall\t1.0000\n"
_NONFINITE = "(NaN and infinity cannot be ranked; drop the line or give a finite score)"


def _cli(*args):
    return invoke("trec", *args)


@pytest.mark.parametrize(
    "run_bytes",
    [
        b"q1\tQ0\td1\t1\t1.0\tr\nq1\tQ0\td2\t2\t0.5\tr\n",  # tabs
        b"q1  Q0   d1 1 1.0 r\nq1 Q0 d2  2 0.5   r\n",  # runs of spaces
        b"  q1 Q0 d1 1 1.0 r  \n\tq1 Q0 d2 2 0.5 r\n",  # leading and trailing whitespace
        b"q1 Q0 d1 1 1.0 r\r\nq1 Q0 d2 2 0.5 r\r\n",  # CRLF
        b"q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r",  # no final newline
        b"\xef\xbb\xbfq1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\n",  # BOM
        b"q1\tQ0\td1\t1\t  1.0\tr\nq1 Q0\td2 2 0.5\tr\n",  # mixed separators, padded fields
        # comments and blank lines
        b"# header comment\n\nq1 Q0 d1 1 1.0 r\n   \n# another\nq1 Q0 d2 2 0.5 r\n",
        b"q1 Q0 d1 1 1.0 r junk more\nq1 Q0 d2 2 0.5 r\n",  # 7 or more fields
        b"q1 Q0 d1 1 1.0 r\x0bx\nq1 Q0 d2 2 0.5 r\x0c\n",  # VT and FF are whitespace
        # a bare CR before an extra field is whitespace, not a CR-only line end
        b"q1 Q0 d1 1 1.0 r\rjunk\nq1 Q0 d2 2 0.5 r\n",
    ],
    ids=[
        "tabs",
        "spaces",
        "lead-trail",
        "crlf",
        "no-final-nl",
        "bom",
        "mixed",
        "comments",
        "extra-fields",
        "vt-ff",
        "stray-cr",
    ],
)
def test_accepted_layouts(run_bytes, write):
    qp = write("qrels.txt", QRELS)
    rp = write("run.txt", run_bytes)
    res = _cli("-m", "map", qp, rp)
    assert res.code == 0, res.stderr
    assert res.stdout == EXPECTED_MAP
    run = read_run(rp)
    assert run.to_table().column("qid").to_pylist() == ["q1", "q1"]
    assert run.to_table().column("docno").to_pylist() == ["d1", "d2"]
    assert run.score.tolist() == [1.0, 0.5]
    assert run.runid == "r"


def test_gzip_input_by_magic_and_stdin(write, tmp_path):
    qp = write("qrels.txt", QRELS)
    gz = tmp_path / "run.anything"
    gz.write_bytes(gzip.compress(RUN.encode()))
    assert _cli("-m", "map", qp, str(gz)).stdout == EXPECTED_MAP
    from tests.helpers import run_cli

    res = run_cli("trec", "-m", "map", qp, "-", stdin=gzip.compress(RUN.encode()))
    assert res.code == 0 and res.stdout == EXPECTED_MAP
    res = run_cli("trec", "-m", "map", qp, "-", stdin=RUN)
    assert res.code == 0 and res.stdout == EXPECTED_MAP


ERRORS = [
    # (file name, content, which side, expected message after "NAME:")
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\nq1 0 d3 1\n",
        "run",
        "3: 4 fields, expected 6 (qid Q0 docno rank score tag); this looks like a qrels line: "
        "the order is QRELS RUN",
    ),
    ("run.txt", "q1 Q0 d1 1 1.0\n", "run", "1: 5 fields, expected 6 (qid Q0 docno rank score tag)"),
    ("run.txt", "q1 Q0 d1\n", "run", "1: 3 fields, expected 6 (qid Q0 docno rank score tag)"),
    (
        "qrels.txt",
        "q1 Q0 d1 1 1.0 r\n",
        "qrels",
        "1: 6 fields, expected 4 (qid iter docno grade); this looks like a run line: "
        "the order is QRELS RUN",
    ),
    (
        "qrels.tsv",
        "q1\td1\t1\n",
        "qrels",
        "1: 3 fields, expected 4 (qid iter docno grade); for 'query-id corpus-id score' files "
        "use --qrels-format tsv",
    ),
    (
        "qrels.txt",
        "q1 0 d1 1\nq1 0 d1 1 x\nq1 0 d1 1 x y z\n",
        "qrels",
        "2: 5 fields, expected 4 (qid iter docno grade)",
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\n" * 0 + "q1 Q0 d1 1 abc r\n",
        "run",
        "1: score 'abc' is not a number (expected a decimal such as 12.5 or -3e-2)",
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 1.5x r\n",
        "run",
        "2: score '1.5x' is not a number (expected a decimal such as 12.5 or -3e-2)",
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 0x10 r\n",
        "run",
        "1: score '0x10' is not a number (expected a decimal such as 12.5 or -3e-2)",
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\n" * 16 + "q1 Q0 d9 17 nan r\n",
        "run",
        "17: score 'nan' is not finite " + _NONFINITE,
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 inf r\n",
        "run",
        "1: score 'inf' is not finite " + _NONFINITE,
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 -inf r\n",
        "run",
        "1: score '-inf' is not finite " + _NONFINITE,
    ),
    (
        "run.txt",
        "q1 Q0 d1 1 1e999 r\n",
        "run",
        "1: score '1e999' is not finite " + _NONFINITE,
    ),
    (
        "qrels.txt",
        "q1 0 d1 1\n" + "q1 0 d2 0\n" * 0 + "q1 0 d3 1.7\n",
        "qrels",
        "2: grade '1.7' is not an integer (trec_eval would silently use 1)",
    ),
    (
        "qrels.txt",
        "q1 0 d1 x\n",
        "qrels",
        "1: grade 'x' is not an integer (expected an integer such as 0, 1 or 2)",
    ),
    (
        "qrels.txt",
        "q1 0 d1 99999999999\n",
        "qrels",
        "1: grade '99999999999' is outside the 32-bit integer range (expected an integer from "
        "-2147483648 to 2147483647; trec_eval would silently use 99999999999)",
    ),
    # beyond int64: trec_eval's atol clamps to LONG_MAX / LONG_MIN (was an OverflowError)
    (
        "qrels.txt",
        "q1 0 d1 1\nq1 0 d2 99999999999999999999999\n",
        "qrels",
        "2: grade '99999999999999999999999' is outside the 32-bit integer range (expected an "
        "integer from -2147483648 to 2147483647; trec_eval would silently use "
        "9223372036854775807)",
    ),
    (
        "qrels.txt",
        "q1 0 d1 -99999999999999999999999\n",
        "qrels",
        "1: grade '-99999999999999999999999' is outside the 32-bit integer range (expected an "
        "integer from -2147483648 to 2147483647; trec_eval would silently use "
        "-9223372036854775808)",
    ),
    # atol reads the leading integer: nan → 0, inf → 0, 1e309 → 1 (the message said nan/inf)
    (
        "qrels.txt",
        "q1 0 d1 nan\n",
        "qrels",
        "1: grade 'nan' is not an integer (trec_eval would silently use 0)",
    ),
    (
        "qrels.txt",
        "q1 0 d1 -inf\n",
        "qrels",
        "1: grade '-inf' is not an integer (trec_eval would silently use 0)",
    ),
    (
        "qrels.txt",
        "q1 0 d1 1e309\n",
        "qrels",
        "1: grade '1e309' is not an integer (trec_eval would silently use 1)",
    ),
    # CR-only line ends: one physical line of several records (was read as its first record)
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\rq1 Q0 d2 2 0.5 r\r",
        "run",
        "1: a bare CR ends a record and another follows on the same line: the file seems to end "
        "its lines with CR alone (classic Mac); convert the line ends to LF (expected one record "
        "per line: qid Q0 docno rank score tag)",
    ),
    (
        "qrels.txt",
        "q1 0 d0 1\nq1 0 d1 1\rq1 0 d2 0\r",
        "qrels",
        "2: a bare CR ends a record and another follows on the same line: the file seems to end "
        "its lines with CR alone (classic Mac); convert the line ends to LF (expected one record "
        "per line: qid iter docno grade)",
    ),
    # a 10 MB docno: Arrow's "straddling object" had no line
    (
        "run.txt",
        "q1 Q0 d1 1 1.0 r\nq1 Q0 " + "x" * 10_000_000 + " 2 0.5 r\n",
        "run",
        "2: line of 10,000,015 bytes is too long (expected lines under 2 MiB)",
    ),
    (
        "run.txt",
        b"q1 Q0 d1 1 1 r\nq1 Q0 d\xff1 2 0.5 r\n",
        "run",
        "2: docno is not valid UTF-8 (byte 0xff at offset 1)",
    ),
    ("run.txt", b"q\xc3 Q0 d1 1 1 r\n", "run", "1: qid is not valid UTF-8 (byte 0xc3 at offset 1)"),
]


@pytest.mark.parametrize(
    ("name", "content", "side", "message"), ERRORS, ids=[e[3][:40] for e in ERRORS]
)
def test_bad_lines(name, content, side, message, write):
    bad = write(name, content)
    good_q = write("good_qrels.txt", QRELS)
    good_r = write("good_run.txt", RUN)
    qp, rp = (bad, good_r) if side == "qrels" else (good_q, bad)
    res = _cli("-m", "map", qp, rp)
    assert res.code == 2
    assert res.stdout == ""
    assert res.stderr == f"{bad}:{message}\n"
    reader = read_qrels if side == "qrels" else read_run
    with pytest.raises(InputError) as exc:
        reader(bad)
    assert str(exc.value) == f"{bad}:{message}"
    assert exc.value.path == bad and exc.value.line == int(message.split(":")[0])


def test_five_field_fixture_prefs_rank20():
    path = str(CONFORMANCE / "trec_eval" / "prefs.rank20")
    res = _cli(str(CONFORMANCE / "trec_eval" / "qrels.test"), path)
    assert res.code == 2
    assert res.stderr == f"{path}:1: 5 fields, expected 6 (qid Q0 docno rank score tag)\n"


@pytest.mark.parametrize(
    ("content", "side", "message"),
    [
        ("", "run", "no data lines (expected lines of 6 fields: qid Q0 docno rank score tag)"),
        (
            "# only a comment\n\n   \n",
            "run",
            "no data lines (expected lines of 6 fields: qid Q0 docno rank score tag)",
        ),
        ("", "qrels", "no data lines (expected lines of 4 fields: qid iter docno grade)"),
        ("\n# x\n", "qrels", "no data lines (expected lines of 4 fields: qid iter docno grade)"),
    ],
)
def test_empty_files(content, side, message, write):
    bad = write("empty.txt", content)
    qp, rp = (bad, write("r.txt", RUN)) if side == "qrels" else (write("q.txt", QRELS), bad)
    res = _cli(qp, rp)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == f"{bad}: {message}\n"


def test_unreadable_and_corrupt_gzip(write, tmp_path):
    qp = write("q.txt", QRELS)
    missing = str(tmp_path / "nope.txt")
    res = _cli(qp, missing)
    assert res.code == 2 and res.stderr == f"{missing}: cannot read (No such file or directory)\n"
    bad = write("run.txt.gz", b"\x1f\x8b\x08\x00garbage")
    res = _cli(qp, bad)
    assert res.code == 2
    assert res.stderr.startswith(f"{bad}: cannot read (not a gzip stream: ")
    assert res.stderr.count("\n") == 1


def test_no_query_in_both_files(write):
    qp = write("qrels.txt", "301 0 d1 1\n302 0 d1 1\n")
    rp = write("run.txt", "q301 Q0 d1 1 1 r\nq302 Q0 d1 1 1 r\n")
    res = _cli(qp, rp)
    assert res.code == 2
    assert res.stderr == (
        f"ragmeter trec: no query is in both {qp} and {rp} (qrels qids look like '301', '302'; "
        "run qids look like 'q301', 'q302')\n"
    )
    with pytest.raises(UsageError):
        evaluate(qp, rp)
    # trec_eval -c prints 0 for every judged query here; ragmeter refuses and says why
    for extra in ((), ("--stream",)):
        res = _cli("-c", *extra, qp, rp)
        assert res.code == 2 and res.stdout == ""
        assert res.stderr == (
            f"ragmeter trec: no query is in both {qp} and {rp} (qrels qids look like '301', "
            "'302'; run qids look like 'q301', 'q302'); trec_eval -c would print 0 for every "
            "judged query, ragmeter refuses: check the qids\n"
        )
    with pytest.raises(UsageError, match="trec_eval -c would print 0"):
        evaluate(qp, rp, complete=True)


def test_duplicate_in_run_names_both_lines(write):
    lines = [f"301 Q0 D{i:04d} {i} {100 - i} r\n" for i in range(1, 1204)]
    lines[1202] = "301 Q0 D0017 1203 -5 r\n"  # line 1203 repeats line 17's document
    rp = write("run.txt", "".join(lines))
    qp = write("qrels.txt", "301 0 D0001 1\n")
    res = _cli(qp, rp)
    assert res.code == 2
    assert res.stderr == (
        f"{rp}:1203: document 'D0017' appears twice for query '301' (first at line 17); use "
        "--dedupe first or --dedupe max to keep one\n"
    )


def test_duplicate_in_qrels_and_dedupe(write):
    qp = write(
        "qrels.txt",
        "301 0 D0001 0\n" + "".join(f"301 0 X{i} 0\n" for i in range(10)) + "301 0 D0001 2\n",
    )
    rp = write("run.txt", "301 Q0 D0001 1 1 r\n")
    res = _cli(qp, rp)
    assert res.code == 2
    assert res.stderr == (
        f"{qp}:12: document 'D0001' is judged twice for query '301' (first at line 1); use "
        "--dedupe first or --dedupe max to keep one\n"
    )
    first = _cli("--dedupe", "first", "-m", "num_rel", qp, rp)
    assert first.stdout == "num_rel               \tall\t0\n"
    assert "dropped 1 duplicate judgment" in first.stderr
    best = _cli("--dedupe", "max", "-m", "num_rel", qp, rp)
    assert best.stdout == "num_rel               \tall\t1\n"


def test_dedupe_max_keeps_highest_score(write):
    qp = write("qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    rp = write("run.txt", "q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq1 Q0 d1 3 3.0 r\n")
    assert _cli("-m", "recip_rank", "--dedupe", "max", qp, rp).stdout.endswith("\t1.0000\n")
    assert _cli("-m", "recip_rank", "--dedupe", "first", qp, rp).stdout.endswith("\t0.5000\n")


def test_duplicates_with_long_ids_are_exact(write):
    """40-byte ids share prefixes and suffixes; only true duplicates are reported."""
    ids = [f"msmarco_v2.1_doc_00_{i:09d}#0_000000000000" for i in range(300)]
    body = "".join(f"q1 Q0 {d} {i} {1000 - i} r\n" for i, d in enumerate(ids))
    qp = write("qrels.txt", f"q1 0 {ids[5]} 1\n")
    assert _cli("-m", "recip_rank", qp, write("run.txt", body)).stdout.endswith("\t0.1667\n")
    res = _cli(qp, write("run2.txt", body + f"q1 Q0 {ids[123]} 301 -1 r\n"))
    assert res.code == 2 and f"document '{ids[123]}' appears twice" in res.stderr
    assert "(first at line 124)" in res.stderr


@pytest.mark.parametrize(
    ("measure", "message"),
    [
        (
            "NDCG10",
            "ragmeter trec: unknown measure 'NDCG10'; did you mean 'nDCG@10' or 'ndcg_cut.10'?",
        ),
        ("P.0", "ragmeter trec: bad cutoff '0' in 'P.0' (cutoffs are integers ≥ 1)"),
        ("ERR@10", "ragmeter trec: 'ERR@10' is not supported by ragmeter.retrieval"),
        ("prefs_simp", "ragmeter trec: 'prefs_simp' is not supported by ragmeter.retrieval"),
        (
            "nDCG(rel=2)@10",
            "ragmeter trec: nDCG takes no rel= parameter (nDCG uses graded gains and ignores the "
            "relevance level, as trec_eval does); use gains={…} to change the gain of a grade",
        ),
        (
            "ndcg@10-l2",
            "ragmeter trec: 'ndcg@10-l2' uses ranx's relevance suffix; ragmeter's nDCG ignores the "
            "relevance level (as trec_eval does), use nDCG(gains={1:0})@10 to give grade 1 no gain",
        ),
    ],
)
def test_measure_errors(measure, message, write):
    res = _cli("-m", measure, write("q.txt", QRELS), write("r.txt", RUN))
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == message + "\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-D", "1"],
            "ragmeter trec: -D is not supported "
            "(trec_eval's debug output has no ragmeter equivalent)",
        ),
        (["-l", "x"], "ragmeter trec: -l needs an integer, not 'x'"),
        (["-M0"], "ragmeter trec: -M needs an integer ≥ 1, not 0"),
        (
            ["--format", "xml"],
            "ragmeter trec: --format takes trec, json, csv or ultrarag, not 'xml'",
        ),
        (["--by-source"], "ragmeter trec: --by-source needs --format json or --format csv"),
        (["--bogus"], "ragmeter trec: option --bogus not recognized (see ragmeter trec --help)"),
        (
            ["-T", "trec_results_old"],
            "ragmeter trec: -T trec_results_old is not supported (ragmeter implements the "
            "trec_results format only; use --run-format jsonl for JSONL traces)",
        ),
    ],
)
def test_usage_errors(args, message, write):
    res = _cli(*args, write("q.txt", QRELS), write("r.txt", RUN))
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == message + "\n"


def test_wrong_number_of_files(write):
    res = _cli(write("q.txt", QRELS))
    assert (
        res.code == 2
        and res.stderr
        == "ragmeter trec: expected 2 or more files (QRELS RUN [RUN ...]), got 1: "
        f"{write('q.txt', QRELS)}\n"
    )


def test_object_locations_in_python_errors():
    with pytest.raises(InputError) as exc:
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": float("nan")}})
    assert exc.value.location == "run['q1']['d1']" and "is not finite" in str(exc.value)
    with pytest.raises(InputError) as exc:
        evaluate({"q1": {"d1": 1.5}}, {"q1": {"d1": 1.0}})
    assert (
        str(exc.value)
        == "qrels['q1']['d1']: grade '1.5' is not an integer (trec_eval would silently use 1)"
    )
    with pytest.raises(InputError) as exc:
        evaluate({"q1": {"d1": 1}}, {"q1": {"d1": "abc"}})
    assert (
        str(exc.value) == "run['q1']['d1']: score 'abc' is not a number (expected a finite number)"
    )


def test_bz2_and_zstd_inputs(tmp_path, write):
    import bz2

    import pyarrow as pa

    qp = write("q.txt", QRELS)
    b = tmp_path / "run.txt.bz2"
    b.write_bytes(bz2.compress(RUN.encode()))
    assert _cli("-m", "map", qp, str(b)).stdout == EXPECTED_MAP
    z = tmp_path / "run.txt.zst"
    with pa.CompressedOutputStream(str(z), "zstd") as out:
        out.write(RUN.encode())
    assert _cli("-m", "map", qp, str(z)).stdout == EXPECTED_MAP


@pytest.mark.parametrize("segment", [4096, 16384])
def test_memory_mapped_segments_parse_like_the_whole_file(monkeypatch, segment, write):
    """Large files are parsed through a memory map a segment at a time: same result."""
    import ragmeter.io.trec.parse as trec_io

    whole = invoke(
        "trec",
        "-q",
        "-m",
        "all_trec",
        str(CONFORMANCE / "trec_eval" / "qrels.test"),
        str(CONFORMANCE / "trec_eval" / "results.test"),
    )
    monkeypatch.setattr(trec_io, "_SEGMENT", segment)
    mapped = invoke(
        "trec",
        "-q",
        "-m",
        "all_trec",
        str(CONFORMANCE / "trec_eval" / "qrels.test"),
        str(CONFORMANCE / "trec_eval" / "results.test"),
    )
    assert mapped.stdout == whole.stdout == (CONFORMANCE / "trec_eval" / "out.test.aq").read_text()
    body = "".join(f"q1 Q0 d{i} {i} {1000 - i} r\n" for i in range(3000)) + "q1 Q0 dz 1 abc r\n"
    bad = write("big.txt", body)
    res = invoke("trec", write("q.txt", "q1 0 d5 1\n"), bad)
    assert res.code == 2 and res.stderr.startswith(f"{bad}:3001: score 'abc' is not a number")
