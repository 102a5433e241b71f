"""A 2-worker Dask LocalCluster on 127.0.0.1, shared by the executor tests of the session."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

# allowed-failures = 1: a shard that kills its worker twice gives up at once (keeps tests short)
ALLOWED_FAILURES = 1


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="ragmeter[dask] is not installed")
    import dask

    from ragmeter.executors.dask import WORKER_ENV, quiet_dask_logs

    quiet_dask_logs()
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit="1GiB",
            silence_logs=logging.ERROR,
            env=WORKER_ENV,
        )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def scheduler(dask_client: Any) -> str:
    """The session cluster's address, for ``--scheduler`` (the connect-to-a-cluster path)."""
    dask_client.wait_for_workers(2, timeout=60)
    return dask_client.scheduler.address
