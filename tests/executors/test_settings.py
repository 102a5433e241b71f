"""Choosing the executor: flags, then RAGMETER_EXECUTOR / RAGMETER_DASK_SCHEDULER, then the
runner's ``executor:`` block."""

from __future__ import annotations

import pytest

from ragmeter.errors import UsageError
from ragmeter.executors import ExecutorSettings, make_executor, resolve_settings
from ragmeter.executors.local import LocalExecutor


def test_default_is_local():
    assert resolve_settings(env={}) == ExecutorSettings(kind="local")


def test_workers_alone_means_a_local_dask_cluster():
    s = resolve_settings(workers=3, env={})
    assert (s.kind, s.workers, s.scheduler) == ("dask", 3, None)


def test_scheduler_implies_dask_and_no_local_workers():
    s = resolve_settings(scheduler="tcp://10.0.0.1:8786", env={})
    assert (s.kind, s.workers, s.scheduler) == ("dask", None, "tcp://10.0.0.1:8786")


def test_environment_is_used_when_no_flag_names_an_executor():
    env = {"RAGMETER_DASK_SCHEDULER": "tcp://h:1"}
    assert resolve_settings(env=env).scheduler == "tcp://h:1"
    assert resolve_settings(env={"RAGMETER_EXECUTOR": "DASK"}).kind == "dask"


def test_flags_win_over_environment_and_environment_over_config():
    env = {"RAGMETER_DASK_SCHEDULER": "tcp://h:1"}
    s = resolve_settings(workers=2, env=env)
    assert (s.scheduler, s.workers) == (None, 2)  # not combined with the env's scheduler
    assert resolve_settings(executor="local", env=env).kind == "local"
    config = {"kind": "dask", "workers": 4, "partitions": 9, "worker_memory": "1GiB"}
    s = resolve_settings(env=env, config=config)
    assert (s.scheduler, s.workers, s.partitions, s.worker_memory) == ("tcp://h:1", None, 9, "1GiB")
    s = resolve_settings(env={}, config=config, partitions=2)
    assert (s.kind, s.workers, s.partitions) == ("dask", 4, 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"executor": "ray"}, "--executor 'ray' is not known (expected local or dask)"),
        ({"executor": "local", "workers": 2}, "--executor local contradicts --workers"),
        ({"scheduler": "tcp://h:1", "workers": 2}, "--scheduler and --workers contradict"),
        ({"workers": 0}, "--workers must be a positive integer, not 0"),
        ({"config": {"kind": "ray"}}, "executor.kind 'ray' is not known"),
        ({"partitions": -1}, "--partitions must be a positive integer, not -1"),
        ({"config": {"plan": "hash"}}, "executor.plan is not supported yet"),
        ({"config": {"keep_work": "yes"}}, "executor.keep_work must be true or false"),
        ({"config": {"nodes": 3}}, "executor.nodes is not a known key"),
        (
            {"config": {"workers": "many"}},
            "executor.workers must be a positive integer, not 'many'",
        ),
        (
            {"env": {"RAGMETER_EXECUTOR": "local", "RAGMETER_DASK_SCHEDULER": "tcp://h:1"}},
            "RAGMETER_EXECUTOR=local contradicts RAGMETER_DASK_SCHEDULER (expected "
            "RAGMETER_EXECUTOR=dask, or no scheduler and no workers)",
        ),
    ],
)
def test_bad_settings_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        resolve_settings(**{"env": {}, **kwargs})


def test_local_executor_runs_shards_in_order():
    ex = make_executor(resolve_settings(env={}))
    assert isinstance(ex, LocalExecutor)
    assert list(ex.run(abs, [-3, 2, -1], label="t")) == [3, 2, 1]
    assert ex.describe() == {"kind": "local"}
