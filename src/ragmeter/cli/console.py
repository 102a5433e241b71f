"""The command line's one console module: consoles, tables, progress bars, spinners, numbers.

Every command prints through here so that widths, bars and number formats are set in one place.
Consoles come from :func:`ragmeter.terminal.make_console` (markup and emoji codes off: names,
labels and ids are user text and print as written); that factory sits below the runner, which
draws the per-task bars of ``ragmeter run`` and :func:`ragmeter.evaluate` itself and cannot
import the command line.

Commands import it inside the function that prints, as they imported rich before: ``ragmeter
--help`` loads every command module and need not load rich's console.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from io import StringIO
from typing import TYPE_CHECKING, Any

from ragmeter.terminal import make_console, styled

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.progress import Progress, ProgressColumn

__all__ = [
    "MISSING",
    "NO_SCORE",
    "PIPE_WIDTH",
    "WIDEST_PIPE_WIDTH",
    "WIDE_PIPE_WIDTH",
    "decimals",
    "make_console",
    "plain_text",
    "progress_bar",
    "spinner",
    "styled",
    "transient_progress",
]

# Widths used when the output is not a terminal (a pipe or a file), where rich would fall back to
# 80 columns and wrap tables: most tables fit in 120, the split reports and the comparison
# tables are wider.
PIPE_WIDTH = 120
WIDE_PIPE_WIDTH = 160
WIDEST_PIPE_WIDTH = 200

# An undefined value: the run tables print an en dash, the extraction, steps and answers tables an
# em dash (both as they always have, so scripts that read the tables keep working).
MISSING = "–"
NO_SCORE = "—"


def decimals(
    value: Any, digits: int = 4, *, missing: str = MISSING, only_floats: bool = False
) -> str:
    """A number with ``digits`` decimals, ``missing`` for None, a bool as ``true``/``false``.

    ``only_floats`` prints integers and bools as Python writes them (the extraction tables mix
    scores with counts).

    >>> decimals(0.123456), decimals(3), decimals(None), decimals(True), decimals("n/a")
    ('0.1235', '3.0000', '–', 'true', 'n/a')
    >>> decimals(3, only_floats=True), decimals(None, missing=NO_SCORE, only_floats=True)
    ('3', '—')
    """
    if value is None:
        return missing
    if only_floats:
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"{value:.{digits}f}"
    return str(value)


def plain_text(renderable: RenderableType, width: int = 100) -> str:
    """A table (or any renderable) as plain text of ``width`` columns: no colour, no terminal
    codes, for text that goes into a file or a JSON field."""
    buf = StringIO()
    make_console(file=buf, width=width, force_terminal=False, color_system=None).print(renderable)
    return buf.getvalue()


def spinner(message: str) -> contextlib.AbstractContextManager[Any]:
    """A transient spinner on stderr while something slow happens, on a terminal only."""
    if not sys.stderr.isatty():
        return contextlib.nullcontext()
    return make_console(stderr=True).status(message)


def transient_progress(*columns: str | ProgressColumn, console: Console | None = None) -> Progress:
    """A rich progress display on stderr that disappears when it stops (rich's default columns
    unless ``columns`` are given)."""
    from rich.progress import Progress

    return Progress(
        *columns,
        console=console if console is not None else make_console(stderr=True),
        transient=True,
    )


def progress_bar(
    total: int, label: str, *, min_total: int = 0
) -> tuple[Callable[[int], None] | None, Callable[[], None]]:
    """A transient bar on stderr: ``(update(done), stop())``.

    Only on a terminal and for at least ``min_total`` items (a short run would only flicker);
    otherwise ``update`` is None and ``stop`` does nothing.
    """
    if total < min_total or not sys.stderr.isatty():
        return None, lambda: None
    prog = transient_progress()
    task = prog.add_task(label, total=total)
    prog.start()

    def update(done: int) -> None:
        prog.update(task, completed=done)

    return update, prog.stop
