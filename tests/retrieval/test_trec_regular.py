"""The numpy parse of regular TREC files: exactly the Arrow parse's ids, scores and grades, or
None (the Arrow parse then reads the file) for anything it does not cover."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.io.trec import read_qrels, read_run
from ragmeter.io.trec.column import BytesColumn, SpanColumn
from ragmeter.io.trec.regular import _numbers, read_qrels_regular, read_run_regular
from ragmeter.retrieval.kernels.codes import _docno_codes, _qid_codes, same_ids
from tests.helpers import CONFORMANCE


def _ids(col) -> list[bytes]:
    return [bytes(v) for v in col.to_pylist()]


def _check_run(path) -> None:
    mine = read_run_regular(str(path), str(path))
    ref = read_run(path, hash_input=False)
    assert mine is not None
    assert _ids(mine.qid) == _ids(ref.qid)
    assert _ids(mine.docno) == _ids(ref.docno)
    assert mine.score.view(np.int64).tolist() == ref.score.view(np.int64).tolist()  # bit for bit
    assert mine.runid == ref.runid


def _check_qrels(path) -> None:
    mine = read_qrels_regular(str(path), str(path))
    ref = read_qrels(path, hash_input=False)
    assert mine is not None
    assert _ids(mine.qid) == _ids(ref.qid)
    assert _ids(mine.docno) == _ids(ref.docno)
    assert mine.grade.tolist() == ref.grade.tolist()


def test_trec_evals_own_test_files_read_as_arrow_reads_them():
    # tabs, then spaces padding the scores: runs of separators
    _check_run(CONFORMANCE / "trec_eval" / "results.test")
    _check_qrels(CONFORMANCE / "trec_eval" / "qrels.test")


SCORES = ["1", "-0.5", "+2.25", ".5", "5.", "-0", "0.0", "1e-05", "1.5E+3", "-2e3"]
SCORES += ["123456789012345678", "0.1000000000000000055511151231257827", "999999999999999.9"]


@pytest.mark.parametrize("sep", [" ", "\t", "  ", " \t "])
@pytest.mark.parametrize("end", ["\n", ""])
def test_scores_of_every_form_and_any_separators(tmp_path, sep, end):
    lines = [
        sep.join(["q1" if i < 7 else "q10", "Q0", f"doc-{i:03d}xyzzy"[: 4 + i], str(i), s, "tag"])
        for i, s in enumerate(SCORES)
    ]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + end)
    _check_run(path)


@pytest.mark.parametrize("text", ["1 0 a 1\n1 0 b 2\n", "1 0 a 1\n1 0 b 2"])
def test_ids_near_the_end_of_the_file(tmp_path, text):
    # a short last line: the ids are read 8 bytes at a time from a padded copy, not the map
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    _check_qrels(path)


def test_grades_as_plain_integers(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 a 0\n1 0 bb -1\n2 0 ccccccccc +1\n2\t0\td 007\n3 0 e 2147483647\n")
    _check_qrels(path)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "q1 Q0 d1 1 1.0 t\n# a comment\nq1 Q0 d2 2 0.5 t\n",
        "q1 Q0 d1 1 1.0 t\n\nq1 Q0 d2 2 0.5 t\n",  # a blank line
        "q1 Q0 d1 1 1.0 t\r\nq1 Q0 d2 2 0.5 t\r\n",
        "q1 Q0 d1 1 1.0 t extra\n",
        "q1 Q0 d1 1 1.0\n",
        "q1 Q0 dé 1 1.0 t\n",
        "q1 Q0 d\x001 1 1.0 t\n",
        "q1 Q0 d\x0b1 1 1.0 t\n",
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 inf t\n",
        "q1 Q0 d1 1 1e999 t\n",  # out of range: refused with its line by the Arrow parse
        "q1 Q0 d1 1 1.0.0 t\n",
        "q1 Q0 d1 1 - t\n",
    ],
)
def test_anything_else_is_left_to_the_arrow_parse(tmp_path, text):
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    assert read_run_regular(str(path), "run.txt") is None


@pytest.mark.parametrize("grade", ["2.0", "1e3", "2147483648", "-2147483649", "x", "1-"])
def test_grades_the_arrow_parse_converts_or_refuses(tmp_path, grade):
    path = tmp_path / "qrels.txt"
    path.write_text(f"1 0 a 1\n1 0 b {grade}\n")
    assert read_qrels_regular(str(path), "qrels.txt") is None


def _buffer(tokens: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    raw = bytearray(b" " + b" ".join(tokens) + b" " * 64)
    starts, at = [], 1
    for t in tokens:
        starts.append(at)
        at += len(t) + 1
    s = np.array(starts, dtype=np.int64)
    return np.frombuffer(raw, dtype=np.uint8), s, s + np.array([len(t) for t in tokens], np.int64)


decimals = st.builds(
    lambda sign, whole, dot, frac: (sign + whole + dot + frac).encode(),
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", max_size=12),
    st.sampled_from(["", "."]),
    st.text("0123456789", max_size=12),
).filter(lambda t: any(c in b"0123456789" for c in t) and (b"." in t or t[-1:].isdigit()))


@settings(max_examples=300, deadline=None)
@given(st.lists(decimals, min_size=1, max_size=40))
def test_decimals_convert_as_strtod_does(tokens):
    buf, starts, ends = _buffer(tokens)
    values, left = _numbers(buf, starts, ends, dot=True)
    exact = [i for i, t in enumerate(tokens) if sum(c in b"0123456789" for c in t) <= 15]
    assert sorted(set(range(len(tokens))) - set(exact)) == left.tolist()
    for i in exact:  # correctly rounded, bit for bit (-0.0 included)
        assert values[i].tobytes() == np.float64(float(tokens[i])).tobytes(), tokens[i]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=40))
def test_integers_convert_exactly(numbers):
    tokens = [str(v).encode() for v in numbers]
    buf, starts, ends = _buffer(tokens)
    values, left = _numbers(buf, starts, ends, dot=False)
    assert left.size == 0
    assert values.tolist() == numbers


def _spans(ids: list[bytes]) -> SpanColumn:
    buf, starts, ends = _buffer(ids)
    return SpanColumn(buf, starts, ends)


ids = st.lists(st.binary(min_size=1, max_size=24).filter(lambda b: b"\x00" not in b), max_size=60)


@settings(max_examples=200, deadline=None)
@given(ids, st.randoms(use_true_random=False))
def test_spans_get_the_codes_and_equalities_of_the_other_layouts(values, rnd):
    spans = _spans(values)
    codes, fit = _docno_codes(spans, exact=True)
    ref_codes, ref_fit = _docno_codes(BytesColumn(values), exact=True)
    assert codes.tolist() == ref_codes.tolist()
    assert fit.tolist() == ref_fit.tolist()
    assert _qid_codes(spans)[0] == _qid_codes(BytesColumn(values))[0]
    assert _qid_codes(spans)[1].tolist() == _qid_codes(BytesColumn(values))[1].tolist()
    other = [v if rnd.random() < 0.5 else rnd.choice(values) for v in values]
    equal = [a == b for a, b in zip(values, other, strict=True)]
    assert same_ids(spans, _spans(other)).tolist() == equal


def test_a_span_take_keeps_the_buffer():
    spans = _spans([b"alpha", b"b", b"gamma-delta-epsilon"])
    taken = spans.take(np.array([2, 0]))
    assert taken.buf is spans.buf
    assert taken.to_pylist() == [b"gamma-delta-epsilon", b"alpha"]
    assert taken[1] == b"alpha"


def test_which_parse_each_input_takes(tmp_path, monkeypatch):
    from ragmeter.io.trec import sizes

    monkeypatch.delenv(sizes.PARSER_ENV, raising=False)
    small = tmp_path / "small.run"
    small.write_text("q1 Q0 d1 1 1.0 t\n")
    medium = tmp_path / "medium.run"
    medium.write_bytes(b"q1 Q0 d1 1 1.0 t\n" * (sizes.SMALL_BYTES // 17 + 1))
    gz = tmp_path / "gzipped.run"
    gz.write_bytes(b"\x1f\x8b" + b"\0" * 20)
    assert sizes.use_plain([str(small), str(medium)])
    assert (sizes.file_parser(str(small)), sizes.file_parser(str(medium))) == ("small", "regular")
    assert not sizes.use_plain([str(small), "-"])  # stdin
    assert not sizes.use_plain([str(small), str(gz)])  # gzip, whatever the name
    monkeypatch.setattr(sizes, "PLAIN_BYTES", medium.stat().st_size - 1)
    assert not sizes.use_plain([str(small), str(medium)])  # too large: the Arrow parse
    monkeypatch.setenv(sizes.PARSER_ENV, "regular")
    assert sizes.use_plain([str(medium)]) and sizes.file_parser(str(small)) == "regular"
    monkeypatch.setenv(sizes.PARSER_ENV, "arrow")
    assert not sizes.use_plain([str(small)])
