"""The ledger's totals do not depend on the order in which calls finish."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.judge.ledger import Totals

_COST = st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_infinity=False)


def _row(cost: float | None, hit: bool = False) -> dict:
    return {"cache_hit": hit, "prompt_tokens": 3, "completion_tokens": 2, "cost_usd": cost}


@settings(max_examples=200, deadline=None)
@given(st.lists(_COST, min_size=1, max_size=60), st.randoms(use_true_random=False))
def test_the_cost_is_the_exact_sum_in_any_order(costs, rnd):
    forward, shuffled = Totals(), Totals()
    order = list(costs)
    rnd.shuffle(order)
    for c in costs:
        forward.add(_row(c))
    for c in order:
        shuffled.add(_row(c))
    assert forward.to_dict() == shuffled.to_dict()
    assert forward.usd == math.fsum(costs)  # correctly rounded, not a running sum


def test_a_sum_whose_running_total_depends_on_the_order():
    costs = [1e16, 1.0, -1e16, 1.0] * 5 + [0.1] * 7
    totals = [Totals() for _ in range(2)]
    for t, seq in zip(totals, (costs, sorted(costs)), strict=True):
        for c in seq:
            t.add(_row(c))
    assert sum(costs) != sum(sorted(costs))  # a running sum differs with the order
    assert totals[0].usd == totals[1].usd == math.fsum(costs)


def test_counts_hits_and_unknown_prices():
    t = Totals()
    for row in (_row(0.5), _row(None), _row(0.25, hit=True), _row(0.125)):
        t.add(row)
    assert t.to_dict() == {
        "calls_sent": 3,
        "cache_hits": 1,
        "tokens_in": 9,
        "tokens_out": 6,
        "usd": None,  # one call of unknown price: no total
        "usd_unknown_calls": 1,
    }
