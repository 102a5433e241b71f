"""What a newcomer reads first says what actually happens (issue 17, item 23): the venv to
activate, what ``make test`` installs, which commands print JSON, and no stale "known gaps"."""

from __future__ import annotations

import re

from tests.helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
MAKEFILE = (REPO / "Makefile").read_text(encoding="utf-8")


def _recipe(target: str) -> str:
    """The recipe lines of one Makefile target."""
    m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", MAKEFILE, flags=re.M)
    assert m, target
    return m.group(1)


def test_make_demo_ends_with_the_line_that_activates_the_venv():
    demo = _recipe("demo")
    assert "ragmeter is installed in $(VENV): run '. $(VENV)/bin/activate'" in demo
    assert "activate it (`. .venv/bin/activate`" in README


def test_readme_says_what_make_test_installs():
    assert "PyTorch (the CPU build" in README
    assert "separate Python 3.12 venv" in README


def test_readme_names_the_commands_that_print_json_by_default():
    assert "every command prints a table" not in README.lower()
    assert re.search(
        r"`answers`,\s+`grounded`\s+and\s+`judge`.*print JSON by default", README, re.S
    )


def test_graphrag_eval_known_gaps_do_not_list_what_ships():
    text = (REPO / "docs" / "migrating-from-graphrag-eval.md").read_text(encoding="utf-8")
    gaps = text.split("## Known gaps", 1)[1]
    assert "answer-correctness" not in gaps and "ragmeter.judge" not in gaps
