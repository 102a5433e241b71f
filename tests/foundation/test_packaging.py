"""What the distribution declares: licence, typing marker, classifiers; no test oracle as an
extra."""

from __future__ import annotations

import re

from tests.helpers import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own TOML reader
    import tomli as tomllib

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def test_the_license_file_is_the_apache_2_text_the_metadata_declares():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["license"] == "Apache-2.0"
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(re.findall(r"^\s+\d\. [A-Z]", text, flags=re.M)) == 9  # sections 1-9


def test_the_package_ships_its_type_hints_and_a_changelog():
    assert (REPO / "src" / "ragmeter" / "py.typed").is_file()
    # the wheel takes the whole package folder (py.typed included)
    assert PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/ragmeter"]
    assert "Typing :: Typed" in PROJECT["classifiers"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    from ragmeter import __version__

    assert f"## {__version__} - " in changelog and "## Unreleased" in changelog


def test_classifiers_cover_requires_python_at_both_ends():
    assert PROJECT["requires-python"] == ">=3.10"
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in PROJECT["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    for prefix in ("Development Status ::", "Intended Audience ::", "Operating System ::"):
        assert any(c.startswith(prefix) for c in PROJECT["classifiers"]), prefix
    # PEP 639: the SPDX expression replaces licence classifiers (build backends reject both)
    assert not any(c.startswith("License ::") for c in PROJECT["classifiers"])
    # `make compat` checks exactly the two ends
    assert "COMPAT_PYTHONS ?= 3.10 3.13" in (REPO / "Makefile").read_text(encoding="utf-8")


def test_test_oracles_are_a_dependency_group_not_an_extra():
    extras = PROJECT["optional-dependencies"]
    assert "dev" not in extras
    dev = PYPROJECT["dependency-groups"]["dev"]
    names = {re.split(r"[<>=!\[ ]", r, maxsplit=1)[0] for r in dev}
    assert {"pytest", "hypothesis", "pytrec-eval-terrier", "ranx", "seqeval"} <= names
    oracles = {"pytrec-eval-terrier", "ir_measures", "ranx", "rouge-score", "rouge", "seqeval"}
    oracles |= {"nervaluate", "statsmodels", "krippendorff", "playwright", "pytest", "ruff"}
    assert oracles <= names
    for requirements in extras.values():
        assert not oracles & {re.split(r"[<>=!\[ ]", r, maxsplit=1)[0] for r in requirements}
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--group dev" in makefile
