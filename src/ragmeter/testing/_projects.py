"""The ``ragmeter_config`` of a project nested below pytest's rootdir.

pytest reads one configuration file: the one it finds from the common ancestor of its arguments
upwards. ``pytest examples`` from a repository root therefore uses the repository's
``pyproject.toml`` and never sees ``examples/heritage/pytest.ini``, although ``pytest
examples/heritage`` does. So that both commands evaluate the same config, a test whose session
has no ``--ragmeter-config`` / ``ragmeter_config`` takes the ``ragmeter_config`` of the nearest
pytest configuration file between its own folder and the rootdir, resolved against that file's
folder (docs/pytest.md, "Nested projects"). Standard library only.
"""

from __future__ import annotations

import configparser
from functools import lru_cache
from pathlib import Path

__all__ = ["nested_config"]

# pytest's own order of precedence within one folder
_INI_FILES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("tox.ini", "pytest"),
              ("setup.cfg", "tool:pytest"))  # fmt: skip


def nested_config(test_path: Path, rootdir: Path, inipath: Path | None) -> Path | None:
    """``ragmeter_config`` of the nearest configuration file from ``test_path``'s folder up to
    ``rootdir`` (the session's own ``inipath`` excluded: it was read already), or None."""
    folder = test_path.resolve()
    if not folder.is_dir():
        folder = folder.parent
    root = rootdir.resolve()
    if folder != root and root not in folder.parents:
        return None
    skip = inipath.resolve() if inipath is not None else None
    while True:
        found = _in_folder(folder, skip)
        if found is not None:
            return found
        if folder == root:
            return None
        folder = folder.parent


@lru_cache(maxsize=256)
def _in_folder(folder: Path, skip: Path | None) -> Path | None:
    for name, section in _INI_FILES:
        path = folder / name
        if path.is_file() and path != skip:
            value = _ini_value(path, section)
            if value:
                return folder / value
    path = folder / "pyproject.toml"
    if path.is_file() and path != skip:
        value = _toml_value(path)
        if value:
            return folder / value
    return None


def _ini_value(path: Path, section: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None  # pytest itself reports a broken configuration file
    if not parser.has_section(section):
        return None
    return parser.get(section, "ragmeter_config", fallback=None) or None


def _toml_value(path: Path) -> str | None:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10 without tomli
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    pytest_table = data.get("tool", {}).get("pytest", {})
    for table in (pytest_table.get("ini_options", {}), pytest_table):
        value = table.get("ragmeter_config") if isinstance(table, dict) else None
        if isinstance(value, str) and value:
            return value
    return None
