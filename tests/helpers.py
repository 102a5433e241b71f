"""Helpers for tests: running the CLI, and the policy for tests that need system components."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
CONFORMANCE = DATA / "conformance"

REQUIRE_SYSTEM_DEPS = os.environ.get("RAGMETER_REQUIRE_SYSTEM_DEPS") == "1"


def require_system(available: bool, reason: str) -> None:
    """Skip (one-line reason) when a system component is missing; fail instead in CI.

    `.ci/run` installs chromium and PostgreSQL and sets RAGMETER_REQUIRE_SYSTEM_DEPS=1, so a
    missing component there is a failure, never a silent skip (docs/architecture.md, "Testing").
    """
    if available:
        return
    if REQUIRE_SYSTEM_DEPS:
        pytest.fail(f"{reason} (RAGMETER_REQUIRE_SYSTEM_DEPS=1)")
    pytest.skip(reason)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(
    *args: str,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> CliResult:
    """Run ``python -m ragmeter ARGS`` in a subprocess, with this checkout's src first."""
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "src"), full_env.get("PYTHONPATH", "")) if p
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def fresh_python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a new interpreter that sees only this checkout's ``src`` (import
    hygiene and start-up tests), with ``env`` added; fails the test if it exits with an error."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", **(env or {})},
        check=True,
    )


def invoke(*args: str) -> CliResult:
    """Run the CLI in this process (fast; for commands that print to sys.stdout/stderr)."""
    from ragmeter.cli.entry import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # a command that exits directly
            code = exc.code if isinstance(exc.code, int) else 1
    return CliResult(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def warns(category: type[Warning], match: str) -> Iterator[list[tuple[str, type[Warning]]]]:
    """``pytest.warns(category, match=...)`` for ragmeter's own warnings, recording the calls to
    ``warnings.warn`` themselves. pytest.warns swaps the process-wide warnings filters, and so
    do other threads of the session (a Dask client's event loop, a judge worker) whenever they
    enter or leave ``warnings.catch_warnings``, which is not thread-safe before Python 3.14:
    one leaving at the wrong moment made pytest.warns miss a warning now and then."""
    seen: list[tuple[str, type[Warning]]] = []

    def record(message: object, category: type[Warning] | None = None, *a: object, **k: object):
        seen.append((str(message), category or UserWarning))

    with mock.patch.object(warnings, "warn", record):
        yield seen
    found = [m for m, c in seen if issubclass(c, category) and re.search(match, m)]
    assert found, f"no {category.__name__} matching {match!r} among {seen}"
