"""Sign-flip counts over parts of the resample rows add up to the counts over all of them."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.stats._signflip import Patterns
from ragmeter.stats.randomization import pvalues_from_counts, signflip_counts, signflip_pvalues

CUTS = [(0, 1), (1, 700), (700, 2048), (2048, 2049), (2049, 4999)]


@pytest.mark.parametrize("exact", [False, True])
def test_a_row_range_yields_exactly_those_rows_of_the_whole_sequence(exact):
    n = 12 if exact else 130
    pat = Patterns.choose(n, n_resamples=4096 if exact else 4999, exact=exact, seed=7)
    whole = np.concatenate(list(pat.iter_bytes(512)))
    assert whole.shape == (pat.count, pat.nbytes)
    for start, stop in [(0, 3), (5, 1500), (1499, pat.count), (pat.count, pat.count)]:
        parts = list(pat.iter_bytes(333, (start, stop)))
        got = np.concatenate(parts) if parts else np.empty((0, pat.nbytes), np.uint8)
        assert np.array_equal(got, whole[start:stop])
    with pytest.raises(ValueError, match="outside"):
        list(pat.iter_bytes(10, (3, pat.count + 1)))


# columns: 6 (the product path for exact integers), 2 (lookup tables), and float
# differences that are not exact integers at decimals=None (the float path with tolerance)
@pytest.mark.parametrize(
    ("columns", "decimals"), [(6, 4), (2, 4), (5, None)], ids=["product", "tables", "float"]
)
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_counts_of_consecutive_ranges_add_up_to_the_whole(columns, decimals, alternative):
    rng = np.random.default_rng(3)
    d = np.round(rng.random((150, columns)) * 0.4 - 0.19, 4)
    if decimals is None:
        d = d / 3.0  # not representable with few decimals: float sums and the tolerance
    pat = Patterns.choose(150, n_resamples=4999, exact="auto", seed=42)
    kw = {"alternative": alternative, "two_sided": "double", "decimals": decimals}
    whole = signflip_counts(d, pat, **kw)
    summed = {k: np.zeros(columns, np.int64) for k in whole}
    for rows in CUTS:
        part = signflip_counts(d, pat, rows=rows, **kw)
        summed = {k: summed[k] + part[k] for k in summed}
    assert {k: v.tolist() for k, v in summed.items()} == {k: v.tolist() for k, v in whole.items()}
    assert all(0 < v.min() < 4999 for v in whole.values())  # counts that a shift would change
    p = pvalues_from_counts(
        summed, total=4999, exact=False, alternative=alternative, two_sided="double"
    )
    assert p.tolist() == signflip_pvalues(d, pat, **kw).tolist()
