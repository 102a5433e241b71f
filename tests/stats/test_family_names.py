"""The families a correction runs over are ``CORRECTION_FAMILIES``; "families" alone names the
retrieval measure families, so the old name ``FAMILIES`` still works here but warns."""

from __future__ import annotations

import importlib

import pytest

from ragmeter.stats_choices import CORRECTION_FAMILIES
from tests.helpers import warns


@pytest.mark.parametrize(
    "module", ["ragmeter.stats_choices", "ragmeter.stats.dispatch", "ragmeter.stats.compare"]
)
def test_the_old_name_warns_and_gives_the_same_tuple(module):
    mod = importlib.import_module(module)
    assert mod.CORRECTION_FAMILIES == CORRECTION_FAMILIES == ("per_metric", "all")
    with warns(DeprecationWarning, rf"^{module}\.FAMILIES is deprecated: use "):
        assert mod.FAMILIES is CORRECTION_FAMILIES
    assert "FAMILIES" not in mod.__all__
    with pytest.raises(AttributeError):
        _ = mod.NO_SUCH_NAME


def test_compare_rejects_an_unknown_family_naming_the_tuple():
    from ragmeter.stats import compare

    scores = {"a": {"m": {"q1": 0.1, "q2": 0.2}}, "b": {"m": {"q1": 0.3, "q2": 0.1}}}
    with pytest.raises(ValueError, match=r"^family='x' \(expected one of per_metric, all\)$"):
        compare(scores, family="x")
