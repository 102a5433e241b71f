"""The extraction reports share one ``get``/``to_dict``/``to_json`` (ExtractionReport)."""

from __future__ import annotations

import json
import re

import pytest

from ragmeter.extraction import agreement, evaluate_types, evaluate_types_multilabel
from ragmeter.extraction.report import ExtractionReport


def test_type_report_get_to_dict_to_json() -> None:
    r = evaluate_types(dict(enumerate("MMMAALGM")), dict(enumerate("MMAALLMM")))
    assert isinstance(r, ExtractionReport)
    assert r.get("accuracy") == 0.625
    assert r.get("macro.f1") == r.macro["f1"]
    with pytest.raises(
        KeyError, match=re.escape("no value at 'macro.nope' in the classification report")
    ):
        r.get("macro.nope")
    d = r.to_dict()
    # metrics first, then the trailer in its fixed order
    assert list(d)[-3:] == ["undefined", "reports", "settings"]
    assert next(iter(d)) == "accuracy" and d["n_items"] == 8
    assert json.loads(r.to_json())["accuracy"] == 0.625


def test_multilabel_report_gains_to_json() -> None:
    g = {1: {"M"}, 2: {"M", "A"}, 3: {"L"}, 4: {"A", "R"}}
    p = {1: {"M"}, 2: {"M"}, 3: {"L", "A"}, 4: {"A"}}
    r = evaluate_types_multilabel(g, p)
    assert r.get("subset_accuracy") == 0.25
    with pytest.raises(KeyError, match="in the multi-label report"):
        r.get("micro.f1.x")
    assert json.loads(r.to_json(indent=2))["subset_accuracy"] == 0.25


def test_agreement_report_dict_keeps_its_keys() -> None:
    r = agreement([[0, 0], [1, 1], [0, 1], [1, 1]])
    d = r.to_dict()
    assert list(d)[:5] == ["n_items", "n_raters", "level", "categories", "observed_agreement"]
    assert list(d)[-2:] == ["undefined", "warnings"]
    assert d["n_items"] == 4 and d["observed_agreement"] == 0.75
    assert r.get("observed_agreement") == 0.75
    assert json.loads(r.to_json())["n_raters"] == 2
