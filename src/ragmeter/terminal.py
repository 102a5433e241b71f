"""Terminal output through rich, with every piece of user or data text printed as text.

rich parses ``[...]`` in strings as markup and ``:name:`` as emoji codes by default, so a project
named ``proj [/] x`` crashed ``ragmeter run`` with a ``MarkupError``, a stratum value ``[link=…]``
became a hyperlink and the hint ``pip install 'ragmeter[semantic]'`` lost its extra. Every console
of the command line is made here with markup and emoji codes off; ragmeter's own styling is given
as ``style=`` or :class:`rich.text.Text` pieces, never as markup inside strings.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console
from rich.text import Text

__all__ = ["make_console", "styled"]


def make_console(
    stderr: bool = False, *, pipe_width: int | None = 120, file: IO[str] | None = None, **kw: Any
) -> Console:
    """A console that prints strings as they are: no markup, no emoji codes.

    ``pipe_width`` is the width used when the stream is not a terminal (a pipe or a file), where
    rich would otherwise fall back to 80 columns and wrap tables.
    """
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    isatty = getattr(stream, "isatty", lambda: False)()
    kw.setdefault("width", None if isatty else pipe_width)
    kw.setdefault("soft_wrap", False)
    return Console(file=stream, markup=False, emoji=False, **kw)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from pieces, each a string or ``(string, style)``: ``styled(("x", "bold"), " y")``.

    The strings are never parsed as markup, so user text can be mixed with ragmeter's styles.
    """
    out = Text()
    for part in parts:
        if isinstance(part, tuple):
            out.append(part[0], style=part[1])
        else:
            out.append(part)
    return out
