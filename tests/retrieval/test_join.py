"""The join of run rows with judgments: (query, docno) pairs, fingerprints confirmed on bytes."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.io.trec import as_qrels
from ragmeter.retrieval import evaluate
from ragmeter.retrieval.kernels import _docno_codes, build_qrels_index

# 30-byte ids that differ only in byte 8, which none of the fingerprint's words covers
A = "AAAAAAAA" + "x" + "B" * 21
B = "AAAAAAAA" + "y" + "B" * 21


def test_the_two_ids_share_a_fingerprint():
    import pyarrow as pa

    codes, exact = _docno_codes(pa.chunked_array([pa.array([A.encode(), B.encode()])]), exact=True)
    assert codes[0] == codes[1]
    assert not exact.any()


def test_a_fingerprint_match_with_other_bytes_is_not_judged():
    qrels = {"q1": {A: 1, "d2": 0}}
    run = {"q1": {B: 3.0, A: 2.0, "d2": 1.0}}
    res = evaluate(qrels, run, ["P.1", "P.2", "map", "num_rel_ret", "num_nonrel_judged_ret"])
    # B (rank 1) is unjudged: P@1 = 0, A is found at rank 2
    assert res.summary["P_1"] == 0.0
    assert res.summary["P_2"] == 0.5
    assert res.summary["map"] == 0.5
    assert res.summary["num_rel_ret"] == 1
    assert res.summary["num_nonrel_judged_ret"] == 1


def test_qrels_whose_judged_ids_share_a_fingerprint_are_joined_on_the_bytes():
    index = build_qrels_index(as_qrels({"q1": {A: 1, B: 0}}))
    assert index.code_filter is None  # the byte join takes over
    res = evaluate({"q1": {A: 1, B: 0}}, {"q1": {B: 3.0, A: 2.0}}, ["P.1", "map"])
    assert res.summary == {"P_1": 0.0, "map": 0.5}


@pytest.mark.parametrize("width", [8, 12])
def test_documents_judged_for_other_queries_are_unjudged_here(width):
    # every document of the run is judged, but for another query than the one retrieving it
    docs = [f"{i:0{width}d}" for i in range(40)]
    qrels = {"1": dict.fromkeys(docs[:20], 1), "2": dict.fromkeys(docs[20:], 1)}
    run = {"1": {d: float(40 - i) for i, d in enumerate(docs[10:30])}}
    res = evaluate(qrels, run, ["num_rel_ret", "P.10", "P.20"])
    # rows docs[10:20] are judged for query 1 (ranks 1-10); docs[20:30] only for query 2
    assert res.summary["num_rel_ret"] == 10
    assert res.summary["P_10"] == 1.0
    assert res.summary["P_20"] == 0.5


def test_the_pair_filter_passes_few_rows_when_most_documents_are_judged():
    from ragmeter.io.trec import as_run
    from ragmeter.retrieval.kernels import _join_codes, _qid_codes, join_run

    rng = np.random.default_rng(5)
    qrels = {
        str(q): {f"D{d:07d}": 1 for d in rng.choice(2000, 150, replace=False)} for q in range(100)
    }
    run_dict = {
        str(q): {f"D{d:07d}": float(-i) for i, d in enumerate(rng.choice(2000, 200, replace=False))}
        for q in range(100)
    }
    run = as_run(run_dict)
    index = build_qrels_index(as_qrels(qrels))
    qids, qcode = _qid_codes(run.qid)
    remap = np.array([index.qid_lookup().get(q, -1) for q in qids], dtype=np.int32)
    codes, exact = _docno_codes(run.docno, exact=True)
    judged_anywhere = {d for docs in qrels.values() for d in docs}
    in_any = sum(d in judged_anywhere for docs in run_dict.values() for d in docs)
    truth = sum(d in qrels[q] for q, docs in run_dict.items() for d in docs)
    assert in_any > 0.99 * len(run)  # a docno filter would let almost every row through
    rows, _, _ = _join_codes(codes, exact, qcode, remap, index, run)
    assert rows.size == truth
    assert truth == 1507  # 100 queries × 200 rows × 150/2000 judged, about 1500
    joined = join_run(run, index, (qids, qcode), _docno_codes(run.docno, exact=True))
    assert joined.judged_rows.size == truth


def test_fixed_length_ids_get_the_codes_of_the_general_layout():
    import pyarrow as pa

    ids = [f"FBIS3-{i * 7919 % 1000003:06d}x{i}".encode()[:14].ljust(14, b"z") for i in range(300)]
    fixed = pa.chunked_array([pa.array(ids[:150]).slice(5), pa.array(ids[155:], pa.binary())])
    mixed = pa.chunked_array([pa.array([*ids[5:150], b"short", *ids[155:]])])
    codes, exact = _docno_codes(fixed, exact=True)
    general, _ = _docno_codes(mixed, exact=True)
    assert not exact.any()
    assert np.array_equal(codes, np.delete(general, 145))
    assert np.unique(codes).size == len(fixed)


@pytest.mark.parametrize("share", [0.02, 0.6])  # chunk by chunk, and the whole column copied
def test_take_rows_of_a_chunked_column_keeps_the_order_asked_for(share):
    import pyarrow as pa

    from ragmeter.retrieval.kernels.codes import take_rows

    ids = [f"doc-{i:06d}".encode() for i in range(1000)]
    col = pa.chunked_array([pa.array(ids[a : a + 300], pa.binary()) for a in range(0, 1000, 300)])
    rows = np.random.default_rng(7).permutation(1000)[: int(1000 * share)]
    taken = take_rows(col, rows)
    assert taken.to_pylist() == [ids[r] for r in rows]


def test_the_pair_filter_holds_exactly_the_bits_of_the_judged_pairs():
    from ragmeter.retrieval.kernels.codes import _pair_hash

    rng = np.random.default_rng(3)
    qrels = {
        f"q{q}": {f"DOC-{d:07d}": int(rng.integers(0, 3)) for d in rng.choice(10**6, 300)}
        for q in range(40)
    }
    index = build_qrels_index(as_qrels(qrels))
    assert index.code_filter is not None and index.line_code is not None
    h = _pair_hash(index.line_code, index.line_q, index.filter_shift)
    expected = np.zeros_like(index.code_filter)
    np.bitwise_or.at(expected, (h >> np.uint64(3)).astype(np.intp), 1 << (h & np.uint64(7)))
    assert np.array_equal(index.code_filter, expected)
