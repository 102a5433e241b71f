"""ragmeter's pytest plugin: evaluation results and release gates as ordinary tests.

Registered through the ``pytest11`` entry point ``ragmeter`` (``-p no:ragmeter`` disables it).
Until a test uses it the plugin is inert: it prints nothing, writes no file, opens no socket and
sets no environment variable. This module imports only pytest, the standard library and the
light :mod:`ragmeter.testing._context` and :mod:`ragmeter.testing._state`; the
runner and the engines load when a fixture, a helper or a collected config is first used.

- fixtures ``ragmeter_run``, ``ragmeter_runs``, ``ragmeter_result``, ``ragmeter_system``;
- markers ``ragmeter(config=..., system=...)`` and ``ragmeter_requires(...)``;
- ``pytest ragmeter.yaml``: one test per system and gate rule (:mod:`ragmeter.testing.collect`);
- a ``ragmeter`` section in the terminal summary, JUnit properties, ``--ragmeter-json``.

The user guide is docs/pytest.md.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragmeter.testing._context import strict_enabled
from ragmeter.testing._state import CHECKS, STATE, SessionState, option, resolve, session_state

if TYPE_CHECKING:
    from ragmeter.testing.session import RunFactory

__all__ = ["item_checks", "strict_enabled"]

# the item whose test body runs now; ragmeter.testing records its checks there
_CURRENT: list[pytest.Item] = []

FIXTURES = frozenset({"ragmeter_run", "ragmeter_runs", "ragmeter_result", "ragmeter_system"})
_NO_CONFIG = (
    "ragmeter_run needs a config: pass --ragmeter-config PATH or set ragmeter_config in the "
    "pytest configuration"
)


# the state and option helpers live in ragmeter.testing._state so testing never imports this
# module; the old private names stay for anything that reached for them
_State = SessionState
_STATE = STATE
_CHECKS = CHECKS
_option = option
_resolve = resolve
_state = session_state


# -- options ------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragmeter", "ragmeter: evaluation results as tests (docs/pytest.md)")
    group.addoption(
        "--ragmeter-config", metavar="PATH", help="config for ragmeter_run (relative: to rootdir)"
    )
    group.addoption(
        "--ragmeter-store",
        metavar="URL",
        help="results store for evaluated runs (default: a temporary SQLite store)",
    )
    group.addoption(
        "--ragmeter-strict",
        action="store_true",
        default=None,
        help="a metric without a value, or a gate SKIP, fails instead of skipping",
    )
    group.addoption(
        "--ragmeter-summary",
        choices=("full", "short", "none"),
        help="the ragmeter terminal section (default full; short under -q)",
    )
    group.addoption("--ragmeter-json", metavar="PATH", help="write every check as JSON")
    parser.addini("ragmeter_config", "config for ragmeter_run (relative: to rootdir)")
    parser.addini("ragmeter_store", "results store URL (default: a temporary SQLite store)")
    parser.addini("ragmeter_strict", "missing values fail instead of skipping", type="bool")
    parser.addini("ragmeter_summary", "full, short or none", default="")
    parser.addini("ragmeter_json", "write every check as JSON to this path")
    parser.addini(
        "ragmeter_config_files", "glob(s) of configs collected as gate tests", type="args"
    )
    parser.addini(
        "ragmeter_block_network", "block non-loopback sockets for the session", type="bool"
    )
    parser.addini(
        "ragmeter_lock_timeout",
        "how long an xdist worker waits for another's evaluation",
        default="6h",
    )


def _session_config(config: pytest.Config, test_path: Path | None = None) -> Path | None:
    """``--ragmeter-config`` / ``ragmeter_config``; without either, the ``ragmeter_config`` of
    a project nested below the rootdir that holds ``test_path`` (``pytest examples``)."""
    raw = _option(config, "ragmeter_config")
    if raw:
        return _resolve(config, raw)
    if test_path is None:
        return None
    from ragmeter.testing._projects import nested_config

    return nested_config(Path(test_path), config.rootpath, config.inipath)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "ragmeter(config=None, system=None): the config and system of ragmeter_result and "
        "ragmeter_system; added to every test that uses ragmeter",
    )
    config.addinivalue_line(
        "markers",
        "ragmeter_requires(*names): skip unless llm, semantic, spacy or postgres is available "
        "(RAGMETER_REQUIRE=names fails instead)",
    )
    state = _State()
    config.stash[_STATE] = state
    config.pluginmanager.register(_Reporter(config, state), "ragmeter-session")
    if config.getini("ragmeter_block_network"):
        from ragmeter.testing._network import block_network

        state.restore_socket = block_network(lambda: _CURRENT[-1].nodeid if _CURRENT else None)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None and state.restore_socket is not None:
        state.restore_socket()


def item_checks(item: pytest.Item) -> list[dict[str, Any]]:
    """The checks recorded on ``item`` (created on first use)."""
    return item.stash.setdefault(_CHECKS, [])


# -- evaluation, once per session (and once across xdist workers) ------------------------------


def _factory(config: pytest.Config) -> RunFactory:
    from ragmeter.testing.session import RunFactory

    return RunFactory(config)


@pytest.fixture(scope="session")
def ragmeter_runs(pytestconfig: pytest.Config) -> RunFactory:
    """A cached factory: ``ragmeter_runs("other.yaml", systems=[...], tasks=[...])``."""
    return _factory(pytestconfig)


@pytest.fixture(scope="session")
def ragmeter_run(ragmeter_runs: RunFactory, pytestconfig: pytest.Config) -> Any:
    """The session's config (``--ragmeter-config`` / ``ragmeter_config``), evaluated once."""
    path = _session_config(pytestconfig)
    if path is None:
        nested = sorted(_state(pytestconfig).nested)
        if len(nested) > 1:
            pytest.fail(
                "ragmeter_run: the tests belong to projects with different configs ("
                + ", ".join(_shown(pytestconfig, p) for p in nested)
                + "); pass --ragmeter-config PATH or run one project at a time",
                pytrace=False,
            )
        if not nested:
            pytest.fail(_NO_CONFIG, pytrace=False)
        path = nested[0]
    return ragmeter_runs(path)


def _shown(config: pytest.Config, path: Path) -> str:
    try:
        return path.resolve().relative_to(config.rootpath.resolve()).as_posix()
    except ValueError:
        return str(path)


def _marker_kwargs(node: Any) -> dict[str, Any]:
    """``config`` and ``system`` of the closest ``ragmeter`` markers (test, class, module)."""
    out: dict[str, Any] = {}
    for marker in node.iter_markers("ragmeter"):
        for key, value in marker.kwargs.items():
            out.setdefault(key, value)
    return out


@pytest.fixture
def ragmeter_result(request: pytest.FixtureRequest, ragmeter_runs: RunFactory) -> Any:
    """One system's result, chosen by ``@pytest.mark.ragmeter(config=..., system=...)``."""
    kwargs = _marker_kwargs(request.node)
    path = kwargs.get("config") or _session_config(request.config, request.node.path)
    if path is None:
        pytest.fail(
            f"{request.node.nodeid}: ragmeter_result needs a config: mark the test with "
            "@pytest.mark.ragmeter(config=...) or pass --ragmeter-config PATH",
            pytrace=False,
        )
    system = kwargs.get("system")
    if system is None and "ragmeter_system" in request.fixturenames:
        system = request.getfixturevalue("ragmeter_system")
    from ragmeter.errors import RagmeterError
    from ragmeter.testing._lock import LockTimeout

    try:
        return ragmeter_runs.get(path).system(system)
    except (RagmeterError, LockTimeout, ValueError) as exc:
        prefix = f"{request.node.nodeid}: "
        message = str(exc) if str(exc).startswith(prefix) else prefix + str(exc)
    # outside the except block: the report shows the one line, not a chained exception
    pytest.fail(message, pytrace=False)


class _Problem:
    """A config that could not be read at collection: the test errors with this message."""

    def __init__(self, message: str) -> None:
        self.message = message


@pytest.fixture
def ragmeter_system(request: pytest.FixtureRequest) -> str:
    """The system this instance of the test runs for (the test is parametrized over them)."""
    param = getattr(request, "param", None)
    if isinstance(param, _Problem):
        pytest.fail(f"{request.node.nodeid}: {param.message}", pytrace=False)
    return str(param)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ragmeter_system" not in metafunc.fixturenames:
        return
    config = metafunc.config
    path = _marker_kwargs(metafunc.definition).get("config") or _session_config(
        config, metafunc.definition.path
    )
    if path is None:
        params: list[Any] = [_Problem(_NO_CONFIG.replace("ragmeter_run", "ragmeter_system"))]
        ids = ["no-config"]
    else:
        from ragmeter.errors import RagmeterError

        try:
            cfg = _factory(config).load(_resolve(config, path))
        except RagmeterError as exc:
            params, ids = [_Problem(str(exc))], ["config-error"]
        else:
            params = ids = list(cfg.system_names)
    metafunc.parametrize("ragmeter_system", params, ids=ids, indirect=True)


# -- collection ---------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # before -m selects: every test that evaluates carries the ragmeter marker
    state = _state(config)
    explicit = _session_config(config) is not None
    for item in items:
        uses = FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses and not explicit:  # the nested projects ragmeter_run may have to choose from
            nested = _session_config(config, item.path)
            if nested is not None:
                state.nested.add(nested)
        if (uses or getattr(item, "ragmeter_collected", False)) and item.get_closest_marker(
            "ragmeter"
        ) is None:
            item.add_marker("ragmeter")


_TOP_KEY = re.compile(r"^(systems|tasks)\s*:", re.MULTILINE)


def _named_on_command_line(config: pytest.Config, path: Path) -> bool:
    here = Path(config.invocation_params.dir)
    target = path.resolve()
    for arg in config.args:
        candidate = Path(str(arg).split("::", 1)[0])
        candidate = candidate if candidate.is_absolute() else here / candidate
        if candidate.resolve() == target:
            return True
    return False


def _matches_glob(config: pytest.Config, path: Path) -> bool:
    patterns = config.getini("ragmeter_config_files")
    if not patterns:
        return False
    try:
        rel = path.resolve().relative_to(config.rootpath.resolve()).as_posix()
    except ValueError:
        rel = path.as_posix()
    return any(
        fnmatch.fnmatch(rel, p) or ("/" not in p and fnmatch.fnmatch(path.name, p))
        for p in patterns
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    config = parent.config
    if not _matches_glob(config, file_path):
        if not _named_on_command_line(config, file_path):
            return None
        try:  # named explicitly: claimed only if it looks like a ragmeter config
            keys = set(_TOP_KEY.findall(file_path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            return None
        if keys != {"systems", "tasks"}:
            return None
    from ragmeter.testing.collect import ConfigFile

    return ConfigFile.from_parent(parent, path=file_path)


# -- running ------------------------------------------------------------------------------------


def _check_requirements(item: pytest.Item) -> None:
    markers = list(item.iter_markers("ragmeter_requires"))
    if not markers:
        return
    from ragmeter.testing._requires import missing_requirement

    for marker in markers:
        for name in marker.args:
            reason = missing_requirement(str(name), _option(item.config, "ragmeter_store"))
            if reason is None:
                continue
            from ragmeter.testing._context import required

            if str(name).lower() in required():
                pytest.fail(f"{reason} (RAGMETER_REQUIRE={name})", pytrace=False)
            # reported at the test's own location, as skip markers are
            raise pytest.skip.Exception(reason, _use_item_location=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    _check_requirements(item)  # before any fixture runs
    # fixtures run in setup: an error they raise names this item, never an enclosing session's
    # (a pytester session runs inside another test's body, in the same process)
    stack = _CURRENT
    stack.append(item)
    try:
        return (yield)
    finally:
        stack.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    stack = _CURRENT
    stack.append(item)
    try:
        return (yield)
    finally:
        stack.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    checks = item.stash.get(_CHECKS, None)
    used = checks is not None or item.get_closest_marker("ragmeter") is not None
    if used and (call.when == "call" or report.outcome != "passed"):
        # travels with the report: pytest-xdist serialises it from workers to the controller
        report.ragmeter_checks = list(checks or [])
        if checks:
            checks.clear()
    exc = call.excinfo.value if call.excinfo is not None else None
    if type(exc).__name__ == "MetricAssertionError" and hasattr(report.longrepr, "reprcrash"):
        crash = report.longrepr.reprcrash
        if crash is not None:  # JUnit's message attribute and -ra show the first line only
            crash.message = crash.message.split("\n", 1)[0]
    return report


class _Reporter:
    """Per-session hooks that need the session's config (registered in pytest_configure)."""

    def __init__(self, config: pytest.Config, state: _State) -> None:
        self.config = config
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # on the controller under xdist, the reports of every worker arrive here
        checks = getattr(report, "ragmeter_checks", None)
        if checks is None:
            return
        self.state.used = True
        for check in checks:
            self.state.checks.append({**check, "nodeid": report.nodeid})

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = _option(self.config, "ragmeter_json")
        if not path or hasattr(self.config, "workerinput"):
            return
        from ragmeter.testing.report import write_json

        write_json(_resolve(self.config, path), self.state.checks)


# -- reporting ----------------------------------------------------------------------------------


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or not state.used:
        return
    mode = _option(config, "ragmeter_summary") or (
        "short" if config.get_verbosity() < 0 else "full"
    )
    if mode == "none":
        return
    from ragmeter.testing.report import summary_lines

    lines = summary_lines(
        state.checks,
        mode=mode,
        store=_option(config, "ragmeter_store") or "temporary",
        cwd=str(config.invocation_params.dir),
    )
    terminalreporter.write_sep("=", "ragmeter")
    for text, markup in lines:
        terminalreporter.write_line(text, **markup)
