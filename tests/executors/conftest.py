"""A 2-worker Dask LocalCluster on 127.0.0.1, shared by the executor tests of the session."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

# allowed-failures = 1: a shard that kills its worker twice gives up at once (keeps tests short)
ALLOWED_FAILURES = 1


@pytest.fixture(autouse=True)
def _own_cwd(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in a folder of its own: a command's default work dir (.ragmeter/work under the
    current directory) is then never shared with a test running at the same time elsewhere."""
    monkeypatch.chdir(tmp_path)


def _start(distributed: Any, allowed_failures: int = ALLOWED_FAILURES) -> Any:
    import dask

    from ragmeter.executors.dask import WORKER_ENV, quiet_dask_logs

    quiet_dask_logs()
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # the scheduler's health endpoints on a free loopback port (not 8787 on every address)
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            memory_limit="1GiB",
            silence_logs=logging.ERROR,
            env=WORKER_ENV,
        )
    return distributed.Client(cluster)


def _stop(client: Any) -> None:
    cluster = client.cluster
    client.close(timeout=30)
    cluster.close(timeout=30)


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="ragmeter[dask] is not installed")
    client = _start(distributed)
    yield client
    _stop(client)


@pytest.fixture
def own_client() -> Iterator[Callable[..., Any]]:
    """Starts 2-worker clusters of the test's own, for tests that kill or retire workers: the
    session cluster never depends on a nanny bringing a killed worker back in time."""
    distributed = pytest.importorskip("distributed", reason="ragmeter[dask] is not installed")
    started: list[Any] = []

    def start(allowed_failures: int = ALLOWED_FAILURES) -> Any:
        started.append(_start(distributed, allowed_failures))
        return started[-1]

    yield start
    for client in started:
        _stop(client)


@pytest.fixture
def scheduler(dask_client: Any) -> str:
    """The session cluster's address, for ``--scheduler`` (the connect-to-a-cluster path)."""
    dask_client.wait_for_workers(2, timeout=120)
    return dask_client.scheduler.address
