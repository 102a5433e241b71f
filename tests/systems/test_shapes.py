"""What a method may return: every wrong shape has a reason, every right one a plain form."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from ragmeter.systems.shapes import ShapeError, check_result

K = {"k": 3}


def test_numpy_numbers_are_numbers() -> None:
    import numpy as np

    ranked = check_result("retrieve", [("d1", np.float32(2.5)), ("d2", np.int64(1))], K)
    assert ranked == [["d1", 2.5], ["d2", 1.0]]
    assert all(type(score) is float for _, score in ranked)
    spans = check_result(
        "extract_entities", [{"start": np.int64(0), "end": np.int32(3), "type": "LOC"}],
        {"text": "Rome"},
    )  # fmt: skip
    assert spans == [{"start": 0, "end": 3, "type": "LOC", "text": "Rom"}]
    assert type(spans[0]["start"]) is int
    with pytest.raises(ShapeError) as err:
        check_result("retrieve", [("d1", np.float64("nan"))], K)
    assert str(err.value) == "retrieve returned score NaN for doc 'd1'"


@pytest.mark.parametrize(
    ("method", "value", "args", "expected"),
    [
        ("retrieve", [("d1", 2), {"id": "d2", "score": 1.5}], K, [["d1", 2.0], ["d2", 1.5]]),
        ("retrieve", [], K, []),
        ("answer", "Paris", {}, {"answer": "Paris"}),
        ("answer", None, {}, {"answer": None}),
        (
            "answer",
            {"answer": "x", "citations": ["d1"], "contexts": ["t", {"id": "d2", "text": "u"}]},
            {},
            {
                "answer": "x",
                "citations": ["d1"],
                "contexts": [{"text": "t"}, {"id": "d2", "text": "u"}],
            },
        ),
        (
            "extract_entities",
            [{"start": 0, "end": 3, "type": "LOC"}],
            {"text": "Rome is old"},
            [{"start": 0, "end": 3, "type": "LOC", "text": "Rom"}],
        ),
        ("classify", "M", {}, {"primary_type": "M", "secondary_types": []}),
        (
            "classify",
            {"primary_type": "M", "secondary_types": ["A"]},
            {},
            {"primary_type": "M", "secondary_types": ["A"]},
        ),
        (
            "link",
            ["Q1", {"kb_id": "Q2", "score": 0.5}],
            {},
            {"candidates": [{"kb_id": "Q1"}, {"kb_id": "Q2", "score": 0.5}]},
        ),
        ("link", {"candidates": [], "nil": True}, {}, {"candidates": [], "nil": True}),
    ],
)
def test_good_shapes(method: str, value: object, args: dict, expected: object) -> None:
    assert check_result(method, value, args) == expected


@pytest.mark.parametrize(
    ("method", "value", "args", "reason"),
    [
        ("retrieve", [("d7", math.nan)], K, "retrieve returned score NaN for doc 'd7'"),
        ("retrieve", [("d7", math.inf)], K, "retrieve returned score inf for doc 'd7'"),
        (
            "retrieve",
            [(7, 1.0)],
            K,
            "retrieve returned doc id 7 at position 0 (expected a non-empty string without spaces)",
        ),
        (
            "retrieve",
            [("d1", "high")],
            K,
            "retrieve returned score 'high' for doc 'd1' (expected a number)",
        ),
        ("retrieve", [("d1", 1), ("d1", 0.5)], K, "retrieve returned doc 'd1' twice"),
        (
            "retrieve",
            [("a", 1), ("b", 1), ("c", 1), ("d", 1)],
            K,
            "retrieve returned 4 documents (expected at most k=3)",
        ),
        ("retrieve", "d1", K, "retrieve returned str (expected a list of (doc_id, score))"),
        ("answer", 42, {}, "answer returned int (expected a string or a mapping)"),
        (
            "answer",
            {"text": "x"},
            {},
            "answer returned key 'text' (expected answer, citations, contexts)",
        ),
        (
            "answer",
            {"answer": "x", "citations": [1]},
            {},
            "answer returned citations [1] (expected a list of strings)",
        ),
        (
            "extract_entities",
            [{"start": 2, "end": 9, "type": "X"}],
            {"text": "abc"},
            "extract_entities returned span 2-9 outside the text (expected 0 <= start < end <= 3)",
        ),
        (
            "extract_entities",
            [{"start": "0", "end": 1, "type": "X"}],
            {"text": "abc"},
            "extract_entities returned start '0' at position 0 (expected an integer)",
        ),
        ("classify", 3, {}, "classify returned label 3 (expected a non-empty string)"),
        (
            "classify",
            {"primary_type": None},
            {},
            "classify returned label None (expected a non-empty string)",
        ),
        (
            "link",
            [{"kb_id": 5}],
            {},
            "link returned kb_id 5 at position 0 (expected a non-empty string)",
        ),
        (
            "link",
            {"candidates": [], "nil": "no"},
            {},
            "link returned nil 'no' (expected true or false)",
        ),
        (
            "link",
            [{"kb_id": "Q1", "score": math.nan}],
            {},
            "link returned score NaN for candidate 'Q1'",
        ),
    ],
)
def test_wrong_shapes(method: str, value: object, args: dict, reason: str) -> None:
    with pytest.raises(ShapeError) as err:
        check_result(method, value, args)
    assert str(err.value) == reason


class _Broken(Sequence):  # type: ignore[type-arg]
    """A list-like value that fails when read."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: object) -> object:
        raise TypeError("cannot read row")


def test_a_value_that_cannot_be_checked_is_that_inputs_failure() -> None:
    from ragmeter.errors import InputError
    from ragmeter.systems.cache import CallCache
    from ragmeter.systems.calls import ErrorBudget, run_method
    from ragmeter.systems.loader import load_live_system

    class Odd:
        def classify(self, text: str) -> object:
            return "M" if text == "ok" else _Broken()

        def extract_entities(self, text: str) -> object:
            return _Broken()

    live = load_live_system("odd", obj=Odd(), error=lambda k, m: InputError(m))
    with CallCache(None) as cache:
        inputs = {"u1": {"text": "ok"}, "u2": {"text": "bad"}}
        results, errors, stats = run_method(live, "extract_entities", inputs, cache, ErrorBudget(5))
        assert results == {} and stats.errors == 2
        assert errors["u1"] == (
            "extract_entities returned a value that could not be checked "
            "(TypeError: cannot read row)"
        )
        results, errors, stats = run_method(live, "classify", inputs, cache, ErrorBudget(5))
        assert results == {"u1": {"primary_type": "M", "secondary_types": []}}
        assert errors["u2"].startswith("classify returned label <")
        assert cache.count("odd") == 1  # only the good result was stored
