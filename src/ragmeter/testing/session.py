"""Evaluating configs for a pytest session: once per session, and once across xdist workers.

:class:`RunFactory` is the ``ragmeter_runs`` fixture and serves ``ragmeter_run``,
``ragmeter_result`` and collected configs alike, so one config is evaluated once however it is
asked for. Results go under the session's base temp directory; the store is the session's
(``--ragmeter-store``) or a temporary SQLite file there.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragmeter.testing import _state as plugin_state

__all__ = ["RunFactory"]


class RunFactory:
    """``ragmeter_runs(config_path, *, systems=None, tasks=None) -> RunSet``, cached."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def __call__(
        self,
        config_path: str | os.PathLike[str],
        *,
        systems: Sequence[str] | None = None,
        tasks: Sequence[str] | None = None,
    ) -> Any:
        __tracebackhide__ = True
        from ragmeter.errors import RagmeterError
        from ragmeter.testing._lock import LockTimeout

        try:
            return self.get(config_path, systems=systems, tasks=tasks)
        except (RagmeterError, LockTimeout, ValueError) as exc:
            message = str(exc)
        # outside the except block: the report shows the one line, not a chained exception
        pytest.fail(message, pytrace=False)

    def load(self, path: Path) -> Any:
        from ragmeter.testing.runset import load_config_checked

        state = plugin_state.session_state(self.config)
        key = str(path)
        if key not in state.configs:
            state.configs[key] = load_config_checked(_shorter(path))
        return state.configs[key]

    def get(
        self,
        config_path: str | os.PathLike[str],
        *,
        systems: Sequence[str] | None = None,
        tasks: Sequence[str] | None = None,
    ) -> Any:
        state = plugin_state.session_state(self.config)
        state.used = True
        path = plugin_state.resolve(self.config, config_path)
        cfg = self.load(path)
        args = [str(path.resolve()), cfg.hash, list(systems or []) or None, tasks and list(tasks)]
        key = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:16]
        if key in state.runs:
            return state.runs[key]
        if key in state.failed:  # every test that asks gets the error, evaluated once
            raise state.failed[key]
        try:
            state.runs[key] = self._evaluate(cfg, key, systems, tasks)
        except Exception as exc:
            state.failed[key] = exc
            raise
        return state.runs[key]

    def _evaluate(
        self, cfg: Any, key: str, systems: Sequence[str] | None, tasks: Sequence[str] | None
    ) -> Any:
        from ragmeter.testing._lock import evaluate_once, parse_duration
        from ragmeter.testing.runset import RunSet, evaluate_config

        tmp = _tmp_factory(self.config)
        root = tmp.getbasetemp() / "ragmeter"
        store_opt = plugin_state.option(self.config, "ragmeter_store")
        store = store_opt or f"sqlite:///{root / 'store.db'}"
        cache_dir = None
        if store_opt:  # a persistent store: reuse unchanged task results, like ragmeter run
            from ragmeter.runner.cache import DEFAULT_CACHE_DIR

            cache_dir = plugin_state.resolve(self.config, DEFAULT_CACHE_DIR)

        def compute() -> Any:
            return evaluate_config(
                cfg,
                results_root=root,
                store=store,
                cache_dir=cache_dir,
                systems=systems,
                tasks=tasks,
            )

        worker = getattr(self.config, "workerinput", None)
        if worker is not None:  # pytest-xdist: one evaluation for every worker of this run
            uid = hashlib.sha256(f"{worker.get('testrunuid')}:{key}".encode()).hexdigest()[:16]
            timeout = parse_duration(self.config.getini("ragmeter_lock_timeout"))
            evaluation, _ = evaluate_once(tmp.getbasetemp().parent, uid, compute, timeout=timeout)
        else:
            evaluation = compute()
        return RunSet(
            evaluation, results_dir=(evaluation.saved or {}).get("results_dir"), store=store
        )


def _shorter(path: Path) -> str:
    """The path as messages show it: relative to the working directory when shorter."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if len(rel) < len(str(path)) else str(path)


def _tmp_factory(config: pytest.Config) -> pytest.TempPathFactory:
    # the tmp_path plugin's factory: the same base temp dir as tmp_path_factory, also for
    # collected config items, which cannot request fixtures
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:  # -p no:tmpdir
        factory = pytest.TempPathFactory.from_config(config, _ispytest=True)
        config._tmp_path_factory = factory  # type: ignore[attr-defined]
    return factory
