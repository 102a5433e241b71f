"""The extraction tests still call the deprecated entry-point names (``evaluate_ner``, ...), on
purpose: they keep the aliases covered. Their DeprecationWarning is expected here, so it is not
reported; tests/extraction/test_entry_points.py asserts that it is raised."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
_IGNORE = pytest.mark.filterwarnings(r"ignore:evaluate_\w+ is deprecated:DeprecationWarning")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(_IGNORE)
