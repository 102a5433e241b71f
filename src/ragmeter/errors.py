"""Error types shared by every ragmeter module.

Every error a user can cause is reported as one line, ``FILE:LINE: what is wrong (what was
expected)``, and the command line turns it into exit status 2 with no traceback
(docs/conventions.md, "Errors and exit codes"). Library code raises these exceptions; only
:mod:`ragmeter.cli` prints them.
"""

from __future__ import annotations

import os

__all__ = ["InputError", "Interrupted", "MissingDependencyError", "RagmeterError", "UsageError"]


class RagmeterError(Exception):
    """Base class of every error ragmeter raises on purpose."""

    exit_status = 2


class InputError(RagmeterError, ValueError):
    """Bad input data: a file, a line of it, or a location inside a Python object.

    ``str(err)`` is the one-line message the command line prints:

    >>> str(InputError("score 'abc' is not a number", path="run.txt", line=17))
    "run.txt:17: score 'abc' is not a number"
    >>> str(InputError("missing key 'id'", path="gold.jsonl", location="sample 'q7'"))
    "gold.jsonl: sample 'q7': missing key 'id'"
    >>> str(InputError("bad value", location="run['q7'][3]"))
    "run['q7'][3]: bad value"
    >>> str(InputError("not valid JSON", path="-", line=1))
    '<stdin>:1: not valid JSON'

    It subclasses :class:`ValueError` so that code written against the reference libraries,
    which raise ``ValueError``, keeps catching it.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        line: int | None = None,
        location: str | None = None,
    ) -> None:
        self.message = message
        # `-` means stdin on every command line; a message names it the way Python and the
        # readers in ragmeter.io do, whichever reader raised it
        self.path = os.fspath(path) if path is not None else None
        if self.path == "-":
            self.path = "<stdin>"
        self.line = line
        self.location = location
        super().__init__(self._format())

    def _format(self) -> str:
        prefix = ""
        if self.path is not None:
            prefix = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        if self.location:
            prefix += f"{self.location}: "
        return prefix + self.message


class UsageError(RagmeterError, ValueError):
    """A bad option, metric name or combination of arguments.

    The command line prefixes the message with ``ragmeter COMMAND:``:

    >>> str(UsageError("unknown measure 'NDCG10'", command="trec"))
    "ragmeter trec: unknown measure 'NDCG10'"
    """

    def __init__(self, message: str, *, command: str | None = None) -> None:
        self.message = message
        self.command = command
        super().__init__(f"ragmeter {command}: {message}" if command else message)


class MissingDependencyError(RagmeterError, ImportError):
    """An optional dependency is not installed; the message names the extra that brings it.

    >>> str(MissingDependencyError("to_pandas() needs pandas", extra="pandas"))
    "to_pandas() needs pandas (pip install 'ragmeter[pandas]')"

    It subclasses :class:`ImportError`, which code that probes optional features catches.
    """

    def __init__(self, message: str, *, extra: str) -> None:
        self.message = message
        self.extra = extra
        super().__init__(f"{message} (pip install 'ragmeter[{extra}]')")


class Interrupted(RagmeterError):
    """Ctrl-C, reported with what was kept (exit status 130, the shell's convention for SIGINT)."""

    exit_status = 130
