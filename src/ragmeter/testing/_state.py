"""The plugin's per-session state and option reading, below both the plugin and ``testing``.

:mod:`ragmeter.pytest_plugin` creates the state at ``pytest_configure``; the run factory in
:mod:`ragmeter.testing.session` reads it. Keeping it here lets the dependency run one way only:
the plugin imports ``testing``, ``testing`` never imports the plugin. Light on purpose (pytest
and the standard library only): the plugin imports it in every session.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHECKS", "STATE", "SessionState", "option", "resolve", "session_state"]


class SessionState:
    """Per-session state (in ``config.stash``; never in environment variables)."""

    def __init__(self) -> None:
        self.runs: dict[str, Any] = {}  # key -> RunSet, for this process
        self.failed: dict[str, BaseException] = {}  # key -> why it could not be evaluated
        self.configs: dict[str, Any] = {}  # resolved path -> loaded config (collection)
        self.checks: list[dict[str, Any]] = []  # every check reported to this process
        self.used = False
        self.nested: set[Path] = set()  # configs of nested projects among the collected tests
        self.restore_socket: Any = None


STATE = pytest.StashKey[SessionState]()
CHECKS = pytest.StashKey[list]()


def session_state(config: pytest.Config) -> SessionState:
    """The state ``pytest_configure`` stored for this session."""
    return config.stash[STATE]


def option(config: pytest.Config, name: str) -> Any:
    """A ``--ragmeter-x`` command-line option, else the ini key of the same name, else None."""
    value = config.getoption(name, None)  # --ragmeter-x is stored as ragmeter_x
    if value is None:
        value = config.getini(name) or None
    return value


def resolve(config: pytest.Config, path: str | os.PathLike[str]) -> Path:
    """A user path, ``~`` expanded, relative to the pytest root directory."""
    p = Path(os.path.expanduser(os.fspath(path)))
    return p if p.is_absolute() else config.rootpath / p
