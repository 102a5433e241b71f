"""The fast sorts and the bucket search give exactly what numpy's stable sorts and searchsorted
give."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.retrieval.kernels.join import _bucket_search
from ragmeter.retrieval.kernels.qrels_index import _by_grade, _pair_directory
from ragmeter.retrieval.kernels.sorting import (
    sort_with_rows,
    stable_argsort,
    unique_first_inverse,
)

U64_MAX = np.iinfo(np.uint64).max


def _codes(rng: np.random.Generator, kind: int, n: int) -> np.ndarray:
    if kind == 0:  # few values, shuffled
        return rng.integers(0, 5, n).astype(np.uint64)
    if kind == 1:  # grouped, as the qids of a qrels sorted by query
        return np.sort(rng.integers(0, 20, n)).astype(np.uint64)
    if kind == 2:  # full 64-bit fingerprints
        return rng.integers(0, U64_MAX, n, dtype=np.uint64, endpoint=True)
    return np.repeat(rng.integers(0, 2**63, max(n // 10, 1), dtype=np.uint64), 10)[:n]


@pytest.mark.parametrize("kind", [0, 1, 2, 3])
def test_unique_first_inverse_is_numpys_unique(kind: int) -> None:
    rng = np.random.default_rng(kind)
    for n in [0, 1, 2, 17, 40, 333, 5000]:
        codes = _codes(rng, kind, n)
        values, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        got = unique_first_inverse(codes)
        assert got[0].dtype == codes.dtype
        assert np.array_equal(got[0], values)
        assert np.array_equal(got[1], first)
        assert np.array_equal(got[2], inverse.ravel())


@pytest.mark.parametrize("high", [3, 1000, 2**40, 2**62])
def test_stable_argsort_is_numpys_stable_argsort(high: int) -> None:
    rng = np.random.default_rng(high % 97)
    for n in [0, 1, 2, 50, 4000]:
        keys = rng.integers(-high, high, n)
        assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("kind", [2, 3])
def test_sort_with_rows_is_the_stable_argsort(kind: int, signed: bool) -> None:
    codes = _codes(np.random.default_rng(kind), kind, 5000)
    if signed:
        codes = codes.view(np.int64)  # negative codes come first
    got = sort_with_rows(codes)
    assert got is not None
    perm = np.argsort(codes, kind="stable")
    assert np.array_equal(got[1], perm)
    assert np.array_equal(got[0], codes[perm])


def test_sort_with_rows_leaves_codes_sharing_their_high_bits_to_an_argsort() -> None:
    # 3 and 5 differ only in the low bits that hold the row of 5 codes: their order is unknown
    assert sort_with_rows(np.array([5, 3, 5, 3, 9], dtype=np.uint64)) is None
    got = sort_with_rows(np.array([5 << 40, 3 << 40, 5 << 40], dtype=np.uint64))
    assert got is not None
    assert got[1].tolist() == [1, 0, 2]


def test_by_grade_is_the_lexsort() -> None:
    rng = np.random.default_rng(7)
    qcode = np.sort(rng.integers(0, 30, 3000))
    for grades in [rng.integers(-1, 4, 3000), rng.integers(-(2**31), 2**31 - 1, 3000)]:
        want = grades[np.lexsort((-grades, qcode))]
        assert np.array_equal(_by_grade(grades, qcode, 30), want)
    empty = np.zeros(0, np.int64)
    assert _by_grade(empty, empty, 0).size == 0


@pytest.mark.parametrize("n", [1, 2, 3, 100, 20000])
def test_bucket_search_finds_what_searchsorted_finds(n: int) -> None:
    rng = np.random.default_rng(n)
    keys = np.unique(rng.integers(0, U64_MAX, n, dtype=np.uint64, endpoint=True))
    ends = np.array([0, U64_MAX], dtype=np.uint64)
    mixes = np.concatenate(
        [keys, rng.integers(0, U64_MAX, n, dtype=np.uint64, endpoint=True), ends]
    )
    rng.shuffle(mixes)
    starts, shift = _pair_directory(keys)
    pos = _bucket_search(keys, starts, shift, mixes)
    want = np.minimum(np.searchsorted(keys, mixes), keys.size - 1)
    found = keys[want] == mixes
    assert np.array_equal(keys[pos] == mixes, found)
    assert np.array_equal(pos[found], want[found])


def test_a_crowded_bucket_ends_in_a_binary_search() -> None:
    # 200 keys in one bucket (their top bits equal): more than the walk's 32 steps
    keys = np.arange(200, dtype=np.uint64) * np.uint64(3)
    keys = np.concatenate([keys, np.array([U64_MAX - 5], dtype=np.uint64)])
    starts, shift = _pair_directory(keys)
    mixes = np.array([0, 3, 150, 597, 598, 1000, U64_MAX - 5, U64_MAX], dtype=np.uint64)
    pos = _bucket_search(keys, starts, shift, mixes)
    assert (keys[pos] == mixes).tolist() == [True, True, True, True, False, False, True, False]
    assert pos[:4].tolist() == [0, 1, 50, 199]


def test_by_query_rank_is_the_lexsort() -> None:
    from ragmeter.retrieval.kernels.ranking import _by_query_rank

    rng = np.random.default_rng(3)
    for n in [0, 1, 500]:
        jq = rng.integers(0, 40, n)
        jrank = rng.integers(1, 1000, n)
        assert np.array_equal(_by_query_rank(jq, jrank), np.lexsort((jrank, jq)))
    ordered = np.arange(100)
    assert np.array_equal(_by_query_rank(ordered // 10, ordered % 10 + 1), ordered)
    huge = np.array([2**40, 1, 2**40], dtype=np.int64)
    assert np.array_equal(_by_query_rank(huge, huge), np.lexsort((huge, huge)))


@pytest.mark.parametrize(
    "values",
    [
        np.array([2, 3, 2, 1001, 7, 2], dtype=np.int64),  # ranks: the table of their range
        np.array([1, 5, 10**9], dtype=np.int64),  # a range too wide for a table
        np.array([2.5, 3.0, 2.5]),  # real arguments (G's cost-adjusted ranks)
    ],
)
def test_log2_table_is_libm_log2_of_each_value(values):
    from ragmeter.retrieval.measures.base import log2_table

    got = log2_table(values)
    assert got.tolist() == [math.log2(float(v)) for v in values.tolist()]
