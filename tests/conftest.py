"""Settings and fixtures shared by every test module (helpers live in tests/helpers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import require_system
from tests.postgres import PgCluster, pg_bindir

# pytester runs inner pytest sessions for the pytest plugin's tests (tests/pytest_plugin/); it
# must be declared in this top-level conftest, not in a sub-directory's.
pytest_plugins = ["pytester"]

# Shared CI machines are noisy: hypothesis must never fail a test for being slow.
settings.register_profile(
    "ragmeter", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ragmeter"))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    bindir = pg_bindir()
    require_system(bindir is not None, "PostgreSQL server binaries (initdb, pg_ctl) not found")
    try:
        import psycopg  # noqa: F401
    except ModuleNotFoundError:
        require_system(False, "psycopg (ragmeter[postgres]) is not installed")
    cluster = PgCluster(bindir)  # type: ignore[arg-type]
    try:
        cluster.start()
    except Exception as exc:
        cluster.stop()
        require_system(False, f"could not start a throwaway PostgreSQL cluster: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> str:
    """A fresh, empty PostgreSQL database for one test."""
    return pg_cluster.new_database()
