"""Opening TREC inputs and walking their lines: files, gzip/bz2/zstd, pipes and stdin."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.files import GZIP_MAGIC, display_name, open_binary, sha256_file

_SNIFF = 1 << 16

_WS = b" \t\r\x0b\x0c"

LineOffset = int | Callable[[], int]

"""Lines before a chunk of a streamed file: a count, or a function that counts them, so that
a memory-mapped stream pays for counting only when a message needs a line number."""


def lines_before(offset: LineOffset) -> int:
    return offset() if callable(offset) else offset


_COUNT_STEP = 1 << 26  # bytes copied at a time when a message needs a line number


def count_newlines(buffer: Any, end: int) -> int:
    """Newlines in ``buffer[:end]`` (bytes or an mmap), a bounded slice at a time."""
    return sum(
        buffer[a : min(a + _COUNT_STEP, end)].count(b"\n") for a in range(0, end, _COUNT_STEP)
    )


def newlines_before(path: str, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of the file: the line offset of a chunk that
    starts there, counted when a message needs it (``functools.partial`` of this is a
    :data:`LineOffset`)."""
    if offset <= 0:
        return 0
    import mmap

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return count_newlines(mm, offset)


class _Input:
    """An opened input. (A plain class: a dataclass costs ~1 ms of ``ragmeter trec``'s start.)"""

    def __init__(
        self,
        name: str,
        path: str | None,
        data: bytes | memoryview | None,
        head: bytes,
        line_offset: LineOffset = 0,
    ) -> None:
        self.name = name  # for messages
        self.path = path  # re-readable plain or compressed file
        # decompressed bytes (gzip, stdin) or a segment of a memory-mapped file, else None
        self.data = data
        self.head = head  # the first bytes after decompression, for sniffing
        self.line_offset = line_offset  # lines before ``data`` (a chunk of a streamed file)


def _open_input(path: str | os.PathLike[str], *, allow_stdin: bool) -> _Input:
    name = display_name(path)
    p = os.fspath(path)
    if p == "-":
        if not allow_stdin:
            raise InputError("cannot read qrels from stdin (expected a file path)", path="-")
        with open_binary("-", allow_stdin=True) as fh:
            data = _read_all(fh, name)
        return _Input(name, None, data, data[:_SNIFF])
    from ragmeter.io.files import check_regular_file

    if check_regular_file(p, allow_pipe=True):
        # a pipe (`<(zcat run.gz)`, a FIFO) is read once, into memory, like stdin; the paths
        # below reopen and map the file, which a pipe cannot do (devices are refused above)
        with open_binary(p) as fh:
            data = _read_all(fh, name)
        return _Input(name, None, data, data[:_SNIFF])
    try:
        with open(p, "rb") as fh:
            magic = fh.read(2)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror or exc})", path=name) from None
    if magic == GZIP_MAGIC or p.endswith((".bz2", ".zst")):
        with open_binary(p) as fh:
            if p.endswith((".bz2", ".zst")) and magic != GZIP_MAGIC:
                fh.close()
                codec = "bz2" if p.endswith(".bz2") else "zstd"
                import pyarrow as pa

                try:
                    stream = pa.CompressedInputStream(pa.OSFile(p), codec)
                    data = stream.read()
                except (pa.ArrowException, OSError) as exc:
                    raise InputError(
                        f"cannot read (not a {codec} stream: {exc})", path=name
                    ) from None
            else:
                data = _read_all(fh, name)
        return _Input(name, p, data, data[:_SNIFF])
    with open(p, "rb") as fh:
        head = fh.read(_SNIFF)
    return _Input(name, p, None, head)


def _sha_unless_pipe(path: str | os.PathLike[str]) -> str | None:
    """The file's hash, or ``None`` for a pipe (``<(cmd)``, a FIFO): its bytes were consumed by
    the one read a pipe allows, and hashing would read it a second time (as for stdin's run)."""
    from ragmeter.io.files import check_regular_file

    p = os.fspath(path)
    if p != "-" and check_regular_file(p, allow_pipe=True):
        return None
    return sha256_file(p)


def _read_all(fh: Any, name: str) -> bytes:
    try:
        return fh.read()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read (not a gzip stream: {exc})", path=name) from None


def _iter_raw_lines(path: str) -> Iterator[bytes]:
    with open_binary(path, allow_stdin=False) as fh:
        yield from fh


def _split_lines(data: bytes) -> Iterator[bytes]:
    """Lines of a buffer split at newlines only (CR is whitespace, not a line end)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start : end + 1]
        start = end + 1


def _data_lines(lines: Iterable[bytes], *, first: bool = True) -> Iterator[tuple[int, bytes]]:
    """(physical line number, line) of each data line: not blank, not a comment."""
    for lineno, raw in enumerate(lines, start=1):
        bom = first and lineno == 1 and raw.startswith(b"\xef\xbb\xbf")
        line = raw[3:] if bom else raw
        stripped = line.strip(_WS + b"\n")
        if not stripped or stripped.startswith(b"#"):
            continue
        yield lineno, line


def _numbered_lines(inp: _Input) -> Iterator[tuple[int, bytes]]:
    """(physical line number, raw line) of the whole input, as the error scan counts them."""
    lines: Iterable[bytes]
    if inp.data is not None:
        lines = _split_lines(bytes(inp.data))
    else:
        assert inp.path is not None
        lines = _iter_raw_lines(inp.path)
    yield from enumerate(lines, start=1 + lines_before(inp.line_offset))
