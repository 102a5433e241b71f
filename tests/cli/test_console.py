"""The command line's one console module: every console, bar and spinner is made there, with
rich markup off, and the number formats print exactly what the tables always printed."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from rich.table import Table

from ragmeter.cli import console as con

CLI = Path(con.__file__).parent


def _calls(path: Path) -> set[str]:
    """Names of the rich objects a module builds or asks for (``Progress(``, ``.status(``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            fn = node.func
            name = (
                fn.id
                if isinstance(fn, ast.Name)
                else fn.attr
                if isinstance(fn, ast.Attribute)
                else ""
            )
            if name in {"Progress", "Console", "status"}:
                found.add(name)
        if isinstance(node, ast.ImportFrom) and node.module == "ragmeter.terminal":
            found.add("ragmeter.terminal")
    return found


def test_consoles_bars_and_spinners_are_made_in_the_console_module_only():
    made = {
        str(p.relative_to(CLI)): _calls(p)
        for p in sorted(CLI.rglob("*.py"))
        if p.name != "console.py"
    }
    assert {name: calls for name, calls in made.items() if calls} == {}


def test_every_console_prints_user_text_as_written():
    buf = io.StringIO()
    c = con.make_console(file=buf)
    assert (c._markup, c._emoji) == (False, False)
    c.print("proj [/] x :smile: [link=https://evil.example]y")
    assert buf.getvalue() == "proj [/] x :smile: [link=https://evil.example]y\n"


def test_a_pipe_gets_the_fixed_widths():
    assert con.make_console(file=io.StringIO()).width == con.PIPE_WIDTH == 120
    wide = con.make_console(file=io.StringIO(), pipe_width=con.WIDE_PIPE_WIDTH)
    assert wide.width == 160
    assert con.WIDEST_PIPE_WIDTH == 200


def test_number_formats_of_the_tables():
    # run tables: en dash, every number with 4 decimals, bools as JSON writes them
    assert [con.decimals(v) for v in (0.5, 2, None, False, "x")] == [
        "0.5000",
        "2.0000",
        "–",
        "false",
        "x",
    ]
    assert con.decimals(0.12345, 3) == "0.123"
    # extraction tables: em dash, counts and flags as Python prints them
    extraction = [
        con.decimals(v, missing=con.NO_SCORE, only_floats=True) for v in (0.5, 2, None, True)
    ]
    assert extraction == ["0.5000", "2", "—", "True"]


def test_plain_text_has_no_terminal_codes():
    table = Table("metric", "mean")
    table.add_row("em [b]x[/b]", con.decimals(0.25))
    text = con.plain_text(table, width=40)
    assert "\x1b" not in text
    assert "em [b]x[/b]" in text and "0.2500" in text
    assert max(len(line) for line in text.splitlines()) <= 40


def test_no_bar_or_spinner_off_a_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    update, stop = con.progress_bar(10_000, "scoring", min_total=5000)
    assert update is None
    stop()
    with con.spinner("loading"):
        pass
    assert err.getvalue() == ""


def test_a_bar_below_its_threshold_is_not_drawn(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    update, stop = con.progress_bar(999, "bm25 queries", min_total=1000)
    assert update is None
    stop()
    assert err.getvalue() == ""
    update, stop = con.progress_bar(1000, "bm25 queries", min_total=1000)
    assert update is not None
    update(1000)
    stop()
    assert "bm25 queries" in err.getvalue()
