"""Opening inputs (gzip by magic bytes, stdin), hashing them and writing outputs atomically."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, BinaryIO

from ragmeter.errors import InputError

if TYPE_CHECKING:
    import threading

    from ragmeter.background import Background

__all__ = [
    "GZIP_MAGIC",
    "atomic_write",
    "check_output",
    "check_outputs",
    "check_regular_file",
    "display_name",
    "open_binary",
    "open_text",
    "read_text",
    "sha256_file",
    "sha256_meanwhile",
    "shared_mode",
    "shown_path",
    "stdin_bytes",
]

GZIP_MAGIC = b"\x1f\x8b"
MAX_TEXT_BYTES = 1 << 30
"""Cap of :func:`read_text`, which holds a whole file in memory (configs, JSON documents)."""
# gzip, hashlib, tempfile and pathlib are imported where used: together ~7 ms of the start of
# `ragmeter trec`, which reads plain files and hashes nothing for trec output
PathLike = str | os.PathLike[str]


def display_name(path: PathLike) -> str:
    """The name used in messages: ``-`` is shown as ``<stdin>``, anything else as given."""
    p = os.fspath(path)
    return "<stdin>" if p == "-" else p


def shown_path(path: PathLike) -> str:
    """A path as messages show it: relative to the working directory when that is shorter."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return os.fspath(path)
    return rel if len(rel) < len(os.fspath(path)) else os.fspath(path)


def check_regular_file(name: str, *, allow_pipe: bool = False) -> bool:
    """Refuse a device, socket or directory given as an input file, before opening it.

    ``/dev/zero`` never ends; a regular file has a size. A pipe (``<(zcat run.gz)``, a FIFO) is
    accepted only where ``allow_pipe`` says the caller reads it once; the return value tells the
    caller it is one. A path that does not exist is left to ``open``, which names the error.
    """
    import stat

    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    if stat.S_ISDIR(mode):
        raise InputError("is a directory (expected a file)", path=name)
    if stat.S_ISFIFO(mode) and allow_pipe:
        return True
    if not stat.S_ISREG(mode):
        kind = "a pipe that would be read twice" if stat.S_ISFIFO(mode) else "a device or socket"
        raise InputError(f"not a regular file ({kind}; expected a file, or - for stdin)", path=name)
    return False


_stdin_spool: tuple[object, bytes] | None = None


def stdin_bytes() -> bytes:
    """All of standard input, read once and kept, so ``-`` can be hashed and parsed."""
    global _stdin_spool
    if _stdin_spool is None or _stdin_spool[0] is not sys.stdin:
        _stdin_spool = (sys.stdin, sys.stdin.buffer.read())
    return _stdin_spool[1]


def _open_pipe(name: str) -> BinaryIO:
    # O_NONBLOCK: opening a FIFO nobody writes to would otherwise block forever; reading it
    # (blocking again) then ends at once with no data when there is no writer
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(fd, True)
    return open(fd, "rb")


def open_binary(path: PathLike, *, allow_stdin: bool = True) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip transparently (detected by magic).

    ``-`` is standard input (read once, kept for a second reader such as the input hash). A
    device is refused; a pipe is read as it comes. Raises :class:`InputError` (``FILE: cannot
    read (...)``) for a missing or unreadable file.
    """
    name = os.fspath(path)
    if name == "-":
        if not allow_stdin:
            raise InputError("cannot read from stdin here (expected a file path)", path="-")
        raw: BinaryIO = io.BytesIO(stdin_bytes())  # type: ignore[assignment]
    else:
        pipe = check_regular_file(name, allow_pipe=True)
        try:
            raw = _open_pipe(name) if pipe else open(name, "rb")  # noqa: SIM115 - caller closes
        except OSError as exc:
            raise InputError(f"cannot read ({exc.strerror or exc})", path=name) from None
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[arg-type]
    if buffered.peek(2)[:2] == GZIP_MAGIC:
        import gzip

        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    return buffered


class _Utf8Text(io.TextIOWrapper):
    """A UTF-8 text stream whose undecodable bytes are :class:`InputError` with the line number.

    The stream decodes with ``surrogateescape`` and checks each line as it is handed out
    (``for line in fh``, ``readline``, the csv module, ``read``): decoding happens a chunk
    ahead of the reader, so a strict decoder would fail on a line the reader has not reached
    and could not say which line holds the bad byte.
    """

    def __init__(self, raw: BinaryIO, name: str) -> None:
        super().__init__(raw, encoding="utf-8-sig", errors="surrogateescape", newline="")
        self._display = name
        self._lines = 0

    def _check(self, text: str) -> str:
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(
                    f"not valid UTF-8 (byte 0x{ord(text[exc.start]) - 0xDC00:02x}; "
                    "expected UTF-8 text)",
                    path=self._display,
                    line=self._lines + 1 + text.count("\n", 0, exc.start),
                ) from None
        return text

    # iteration (``for line in fh``, csv) goes through readline: TextIOWrapper's __next__ calls
    # the method of a subclass
    def readline(self, size: int | None = -1, /) -> str:
        line = self._check(super().readline(-1 if size is None else size))
        self._lines += line.endswith("\n")
        return line

    def read(self, size: int | None = -1, /) -> str:
        text = self._check(super().read(size))
        self._lines += text.count("\n")
        return text


def open_text(path: PathLike, *, allow_stdin: bool = True) -> IO[str]:
    """Open ``path`` as UTF-8 text (BOM dropped, newlines kept as written, gzip transparent).

    Bytes that are not UTF-8 raise :class:`InputError` naming the line (when read line by line).
    """
    return _Utf8Text(open_binary(path, allow_stdin=allow_stdin), display_name(path))


def read_text(path: PathLike, *, allow_stdin: bool = True) -> str:
    """The whole of ``path`` as UTF-8 text (BOM dropped, gzip transparent).

    Bytes that are not UTF-8 are an :class:`InputError` naming the line and the byte, never a
    ``UnicodeDecodeError`` traceback.
    """
    name = display_name(path)
    with open_binary(path, allow_stdin=allow_stdin) as fh:
        # one byte past the cap tells "too large" from "exactly at the cap" (a gzip bomb or an
        # endless stdin would otherwise end in MemoryError)
        data = fh.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise InputError(
            f"larger than {MAX_TEXT_BYTES:,} bytes (expected a smaller file)",
            path=name,
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x}; expected UTF-8 text)",
            path=name,
            line=data.count(b"\n", 0, exc.start) + 1,
        ) from None


def sha256_file(
    path: PathLike, *, chunk_size: int = 1 << 20, stop: threading.Event | None = None
) -> str:
    """Hex SHA-256 of the file's bytes as stored (compressed files hash compressed).

    ``stop``: a :class:`threading.Event` that ends the read early (the result is then "")."""
    import hashlib

    digest = hashlib.sha256()
    if os.fspath(path) == "-":
        digest.update(stdin_bytes())
        return digest.hexdigest()
    check_regular_file(os.fspath(path))
    # one buffer, read into: a new 1 MiB bytes per read is a fresh mapping whose pages fault
    # in again (a 4.3 GB run: 0.43 s of system time against 0.49-0.91 s)
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    try:
        with open(os.fspath(path), "rb", buffering=0) as fh:
            while n := fh.readinto(buffer):
                if stop is not None and stop.is_set():
                    return ""
                digest.update(view[:n])
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=os.fspath(path)) from None
    return digest.hexdigest()


@contextlib.contextmanager
def sha256_meanwhile(path: str, wanted: bool = True) -> Iterator[Background[str] | None]:
    """The file's SHA-256 (the JSON output reports it), read on a thread of this process while
    the caller's shards run (hashlib releases the GIL) instead of after them (3 s for 4 GB),
    and stopped early when the block is left before it ends (its result is then "")."""
    if not wanted:
        yield None
        return
    import functools
    import threading

    from ragmeter.background import Background

    stop = threading.Event()
    try:
        yield Background(functools.partial(sha256_file, path, stop=stop))
    finally:
        stop.set()


def _what(option: str | None) -> str:
    return f" for {option}" if option else ""


def check_output(path: PathLike, *, option: str | None = None, folder: bool = False) -> None:
    """Refuse an output path that cannot be written: a folder where a file goes (or a file
    where a folder goes), or a path below something that is not a folder.

    Raises :class:`InputError` naming the path, so that the command stops before it has read or
    computed anything (rather than with ``IsADirectoryError`` after all the work).
    """
    name = os.fspath(path)
    if name == "-":
        return
    if folder:
        if os.path.exists(name) and not os.path.isdir(name):
            raise InputError(f"is a file (expected a folder{_what(option)})", path=name)
    elif os.path.isdir(name):
        raise InputError(f"is a folder (expected a file path{_what(option)})", path=name)
    parent = os.path.dirname(os.path.abspath(name))
    while parent and not os.path.exists(parent):
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    if not os.path.isdir(parent):
        raise InputError(
            f"cannot be created: {parent} is not a folder (expected a path inside a folder"
            f"{_what(option)})",
            path=name,
        )


def _same_file(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` are one file: the same path, a symlink or a hard link to it."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they would point
        return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(
    outputs: dict[str, PathLike | None],
    inputs: list[PathLike],
    *,
    folders: frozenset[str] = frozenset(),
) -> None:
    """The one check every command runs on its output paths before it reads anything.

    ``outputs`` maps an option (``--output``) to its path (``None`` or ``-``: not written);
    ``folders`` names the options whose path is a folder. An output that is a folder, lies
    below a file, resolves to one of ``inputs`` (the same path, a symlink or a hard link), or is
    also given to another output option is an :class:`InputError`: writing it would fail after
    the work was done, or would destroy an input.
    """
    seen: dict[str, str] = {}
    for option, value in outputs.items():
        if value is None or os.fspath(value) in ("", "-"):
            continue
        name = os.fspath(value)
        check_output(name, option=option, folder=option in folders)
        for source in inputs:
            if os.fspath(source) not in ("", "-") and _same_file(name, os.fspath(source)):
                raise InputError(
                    f"{option} would overwrite an input of this command "
                    f"(expected a path that is not an input)",
                    path=name,
                )
        for other, other_name in seen.items():
            if _same_file(name, other_name):
                raise InputError(
                    f"{option} and {other} name the same file (expected one path each)",
                    path=name,
                )
        seen[option] = name


def _umask() -> int:
    """The process umask (read by setting it and setting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def shared_mode(path: PathLike, *, folder: bool = False) -> None:
    """Give a file (``0o666``) or folder (``0o777``) the permissions the umask allows.

    Temporary files and folders are created private (``0600``/``0700``); an output renamed from
    one would stay private whatever the user's umask says, so a report could not be shared.
    """
    os.chmod(path, (0o777 if folder else 0o666) & ~_umask())


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", *, encoding: str = "utf-8") -> Iterator[IO]:
    """Write ``path`` through a temporary file in the same folder, renamed on success.

    Readers never see a half-written file, and a failure leaves the old file (or none) in place.
    A new file gets the permissions the umask allows (not the temporary file's ``0600``); a
    replaced file keeps its own. A path that is a folder or lies below a file is an
    :class:`InputError`.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_write(target) as fh:
    ...     _ = fh.write("done")
    >>> target.read_text()
    'done'
    """
    import tempfile
    from pathlib import Path

    target = Path(path)
    check_output(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        kept = target.stat().st_mode & 0o7777 if target.exists() else None
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", path=os.fspath(path)) from None
    try:
        # an existing file keeps its permissions; a new one gets what the umask allows
        if kept is None:
            shared_mode(tmp)
        else:
            os.chmod(tmp, kept)
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": ""}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
