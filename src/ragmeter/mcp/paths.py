"""The roots rule: every file a tool reads or writes lies inside one of the server's roots.

A relative path is taken relative to the first root; the result is normalised with symlinks
resolved, so neither ``..`` nor a link can lead outside. Parent folders of a write are created
only after the target has been checked (docs/mcp.md, "Files and roots").
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ragmeter.errors import RagmeterError, UsageError

__all__ = ["Roots", "shown_as"]


class Roots:
    """The directories tools may read and write, with the spelling the operator gave them."""

    def __init__(self, dirs: Sequence[str | os.PathLike[str]] = (".",)) -> None:
        if not dirs:
            dirs = (".",)
        self.shown = [os.fspath(d) for d in dirs]
        self.paths = [Path(d).expanduser().resolve() for d in dirs]
        for shown, path in zip(self.shown, self.paths, strict=True):
            if not path.is_dir():
                raise UsageError(f"--root {shown}: no such directory", command="mcp")

    @property
    def first(self) -> Path:
        """Where relative paths start, and where ``results/`` and the default store live."""
        return self.paths[0]

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """``path`` made absolute and checked against the roots, or a one-line refusal.

        >>> import tempfile
        >>> roots = Roots([tempfile.mkdtemp()])
        >>> roots.resolve("a/b.txt") == roots.first / "a" / "b.txt"
        True
        >>> roots.resolve("../x")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ragmeter.errors.UsageError: ragmeter mcp: path '../x' is outside the allowed roots (...)
        """
        text = os.fspath(path)
        candidate = Path(text).expanduser()
        if not candidate.is_absolute():
            candidate = self.first / candidate
        resolved = candidate.resolve()  # symlinks resolved, '..' removed
        if not any(resolved == r or resolved.is_relative_to(r) for r in self.paths):
            raise UsageError(
                f"path {text!r} is outside the allowed roots ({', '.join(self.shown)})",
                command="mcp",
            )
        return resolved

    def for_writing(self, path: str | os.PathLike[str]) -> Path:
        """Like :meth:`resolve`; the parent folders are created, inside a root only."""
        target = self.resolve(path)
        if target.is_dir():
            raise UsageError(f"{os.fspath(path)}: is a directory (expected a file name)")
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def display(self, path: Path) -> str:
        """``path`` relative to the first root when it lies there (how results name files)."""
        with contextlib.suppress(ValueError):
            return path.relative_to(self.first).as_posix()
        return str(path)


@contextlib.contextmanager
def shown_as(names: Mapping[Path, str]) -> Iterator[None]:
    """Name files in error messages as the client spelled them, not by their resolved path."""
    try:
        yield
    except RagmeterError as exc:
        text = str(exc)
        new = text
        for resolved, original in sorted(names.items(), key=lambda kv: -len(str(kv[0]))):
            new = new.replace(str(resolved), original)
        if new == text:
            raise
        raise _Renamed(new, exc) from None


class _Renamed(RagmeterError):
    """A ragmeter error whose message names the files as the client gave them."""

    def __init__(self, message: str, original: RagmeterError) -> None:
        super().__init__(message)
        self.exit_status = original.exit_status
        self.original = original
