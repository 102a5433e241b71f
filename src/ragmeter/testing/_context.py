"""Where a check goes: the running pytest item (when the plugin is active), else nowhere.

Light on purpose (standard library only): the plugin's hooks run in every test of a session
that has ragmeter installed, and must not load anything heavy for tests that never use it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["current_item", "in_pytest", "record", "required", "session_strict", "strict_enabled"]

PROPERTY_PREFIX = "ragmeter"


def current_item() -> Any:
    """The pytest item whose test body is running, if the ragmeter plugin is active."""
    plugin = sys.modules.get("ragmeter.pytest_plugin")
    stack = getattr(plugin, "_CURRENT", None)
    return stack[-1] if stack else None


def in_pytest() -> bool:
    """True inside a running pytest test (helpers then skip/fail the pytest way)."""
    return "pytest" in sys.modules and "PYTEST_CURRENT_TEST" in os.environ


def strict_enabled(config: Any) -> bool:
    """``--ragmeter-strict`` or the ini key ``ragmeter_strict`` of a pytest config.

    Lives here, below the plugin, so the gate items ``testing.collect`` builds need not import
    the plugin module back (the plugin depends on ``testing``, never the other way round).
    """
    return bool(config.getoption("ragmeter_strict", None) or config.getini("ragmeter_strict"))


def session_strict() -> bool:
    """``--ragmeter-strict`` or ``ragmeter_strict = true`` of the running session."""
    item = current_item()
    if item is None:
        return False
    return strict_enabled(item.config)


def required() -> set[str]:
    """Requirements named in ``RAGMETER_REQUIRE`` (``llm,semantic``): their skips fail."""
    raw = os.environ.get("RAGMETER_REQUIRE", "")
    return {part.strip().lower() for part in raw.split(",") if part.strip()}


def record(check: dict[str, Any]) -> None:
    """Attach one check to the running item: three JUnit properties and the full record."""
    item = current_item()
    if item is None:
        return
    check = {"nodeid": item.nodeid, **check}
    base = f"{PROPERTY_PREFIX}.{check['system']}.{check['metric']}"
    value = check.get("value")
    item.user_properties.append((base, "" if value is None else repr(value)))
    item.user_properties.append((f"{base}.expected", check.get("expected") or ""))
    item.user_properties.append((f"{base}.verdict", check["verdict"]))
    plugin = sys.modules["ragmeter.pytest_plugin"]
    plugin.item_checks(item).append(check)
