"""DaskExecutor.run: shard order, the first error in input order, one-line internal errors."""

from __future__ import annotations

import pytest

from ragmeter.errors import InputError, UsageError
from ragmeter.executors.dask import DaskExecutor
from ragmeter.executors.settings import ExecutorSettings
from tests.executors.faults import bad_line


@pytest.fixture
def executor(dask_client):
    return DaskExecutor(ExecutorSettings(kind="dask"), command="answers", client=dask_client)


def test_results_come_back_in_shard_order(executor):
    assert list(executor.run(abs, list(range(-20, 0)), label="t")) == list(range(20, 0, -1))


def test_the_first_error_in_input_order_is_reported(executor):
    got = []
    with pytest.raises(InputError) as err:
        for value in executor.run(bad_line, [0, 1, 2, 3, 4], label="t"):
            got.append(value)
    assert got == [0, 1]
    assert str(err.value) == "in.jsonl:20: bad value in shard 2"


def test_an_unexpected_exception_is_one_line(executor):
    with pytest.raises(UsageError) as err:
        list(executor.run(int, ["1", "x"], label="t"))
    assert str(err.value) == (
        "ragmeter answers: internal error in t shard 2 of 2 (ValueError: invalid literal for "
        "int() with base 10: 'x')"
    )
