"""Fixtures of the pytest plugin's tests: the mini project, and the plugin made loadable.

The inner pytest sessions (pytester) must find the plugin through its ``pytest11`` entry point,
the way a user's installation does. So that this works whether or not this checkout is
installed in the running environment, a session fixture writes a minimal ``.dist-info`` that
declares the entry point and puts it on ``sys.path`` (in-process runs) and ``PYTHONPATH``
(subprocess runs). When the real package is installed too, pytest loads the name once.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import DATA, REPO

MINI = DATA / "pytest_plugin"

ENTRY_POINTS = "[pytest11]\nragmeter = ragmeter.pytest_plugin\n"


@pytest.fixture(scope="session")
def entry_point_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("entry-point")
    info = root / "ragmeter_plugin_under_test-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ragmeter-plugin-under-test\nVersion: 0.0\n"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    sys.path.insert(0, str(root))
    import importlib

    importlib.invalidate_caches()
    yield root
    sys.path.remove(str(root))


@pytest.fixture(scope="session")
def warm_imports(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Evaluate the mini project once in this process before any in-process inner session.

    pytester restores ``sys.modules`` after each inner run, and numpy refuses to be imported a
    second time in one process; modules imported here survive every inner run.
    """
    import ragmeter.pytest_plugin
    import ragmeter.testing.collect
    import ragmeter.testing.regression
    import ragmeter.testing.report  # noqa: F401
    from ragmeter.runner.config import load_config
    from ragmeter.runner.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("warm")
    shutil.copytree(MINI, root, dirs_exist_ok=True)
    run_pipeline(load_config(root / "ragmeter.yaml"), cache_dir=None).save(
        f"sqlite:///{root / 'store.db'}", results_dir=root / "results"
    )


@pytest.fixture
def inner(
    pytester: pytest.Pytester,
    entry_point_dir: Path,
    warm_imports: None,
    monkeypatch: pytest.MonkeyPatch,
) -> pytest.Pytester:
    """A pytester directory holding a copy of the mini project, offline, no judge configured."""
    for name in ("RAGMETER_LLM_BASE_URL", "RAGMETER_LLM_MODEL", "RAGMETER_REQUIRE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(
            p for p in (str(REPO / "src"), str(entry_point_dir), os.environ.get("PYTHONPATH")) if p
        ),
    )
    shutil.copytree(MINI, pytester.path, dirs_exist_ok=True)
    # An inner session reads ``importlib.metadata`` through the ``importlib`` package's
    # attribute. Once, in a full-suite run, that attribute was missing in an xdist worker
    # (AttributeError while pytest loaded its plugins), after earlier in-process sessions had
    # had their ``sys.modules`` restored; re-binding it keeps inner sessions independent of what
    # ran before them in the worker.
    import importlib
    import importlib.metadata

    monkeypatch.setattr(importlib, "metadata", sys.modules["importlib.metadata"], raising=False)
    return pytester
