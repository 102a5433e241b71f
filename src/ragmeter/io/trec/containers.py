"""The parsed inputs: :class:`Run` and :class:`Qrels` (immutable; ids in Arrow arrays, or in a
:class:`~ragmeter.io.trec.column.BytesColumn` for a small file) and :class:`Origin`, which names a
row's file and line in messages. Arrow is imported only by the methods that need it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.io.trec.column import BytesColumn
from ragmeter.io.trec.lines import (
    LineOffset,
    _data_lines,
    _iter_raw_lines,
    _split_lines,
    lines_before,
)

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True, eq=False)
class Origin:
    """Where rows came from, to name them in messages (a file's lines or an object's keys).

    Line numbers of file rows are recomputed only when a message needs them, by rescanning the
    input (``data`` for decompressed or stdin input, else ``path``).
    """

    name: str  # display name: a path, "<stdin>", or "run" / "qrels" for objects
    path: str | None = None
    data: bytes | memoryview | None = None  # a memoryview: a segment of a memory-mapped file
    labels: Callable[[int], str] | None = None  # object rows -> "run['q7'][3]"
    lines: np.ndarray | None = None  # physical line of each row, when known
    line_offset: LineOffset = 0  # lines before ``data`` (a chunk of a streamed file)

    def locate(self, rows: Sequence[int]) -> list[InputError]:
        """An empty InputError per row, carrying its path and line (or object location)."""
        if self.labels is not None:
            return [InputError("", location=self.labels(int(r))) for r in rows]
        return [InputError("", path=self.name, line=ln) for ln in self.line_numbers(rows)]

    def where(self, row: int) -> str:
        """``line 17`` or an object location, for "first at …" in messages."""
        err = self.locate([row])[0]
        return err.location if err.location else f"line {err.line}"

    def line_numbers(self, rows: Sequence[int]) -> list[int | None]:
        if self.lines is not None:
            return [int(self.lines[r]) for r in rows]
        if self.data is None and self.path is None:
            return [None for _ in rows]
        wanted = {int(r) for r in rows}
        found: dict[int, int] = {}
        offset = lines_before(self.line_offset)
        source: Iterable[bytes]
        if self.data is not None:
            source = _split_lines(bytes(self.data))  # a copy: messages only
        else:
            assert self.path is not None
            source = _iter_raw_lines(self.path)
        for row, (lineno, _) in enumerate(_data_lines(source, first=offset == 0)):
            if row in wanted:
                found[row] = lineno + offset
                if len(found) == len(wanted):
                    break
        return [found.get(int(r)) for r in rows]


@dataclass(frozen=True, eq=False)
class Run:
    """A retrieval run: (qid, docno, score) rows, pyarrow-backed and immutable.

    ``qid`` and ``docno`` are binary arrays (UTF-8 checked), ``score`` a float64 numpy array.
    ``runid`` is the tag of the last data line. ``source`` holds the per-line tag or a ``source``
    column (docs/retrieval.md#source-breakdown-hybrid-and-graphrag-retrieval) when it was read.
    ``ranked`` is True when the order came from lists (no scores): the scores are then synthetic
    and strictly decreasing.
    """

    qid: Any  # pa.ChunkedArray (dictionary-encoded or plain binary) or BytesColumn
    docno: Any  # pa.ChunkedArray (binary) or BytesColumn
    score: np.ndarray
    runid: str
    origin: Origin
    source: pa.ChunkedArray | None = None
    sha256: str | None = None
    ranked: bool = False
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.score)

    @property
    def name(self) -> str:
        return self.origin.name

    @property
    def num_queries(self) -> int:
        return len(self.qid_values())

    def qid_values(self) -> list[str]:
        """The distinct qids, sorted (byte order equals code-point order for UTF-8)."""
        if isinstance(self.qid, BytesColumn):
            return sorted(v.decode("utf-8", "replace") for v in set(self.qid.values))
        import pyarrow as pa

        from ragmeter.io.arrowutil import lazy_compute as pc
        from ragmeter.io.arrowutil import to_numpy as _to_np

        if pa.types.is_dictionary(self.qid.type):
            used: set[bytes] = set()
            for chunk in self.qid.chunks:
                idx = np.unique(_to_np(chunk.indices))
                dic = chunk.dictionary.to_pylist()
                used.update(dic[i] for i in idx.tolist())
        else:
            used = set(pc.unique(self.qid).to_pylist())
        return sorted(v.decode("utf-8", "replace") for v in used)

    def to_table(self) -> pa.Table:
        """The run as a table (qid, docno as strings; score)."""
        import pyarrow as pa

        from ragmeter.io.arrowutil import from_numpy

        cols = {
            "qid": _plain(_arrow(self.qid)).cast(pa.string()),
            "docno": _arrow(self.docno).cast(pa.string()),
            "score": from_numpy(self.score),
        }
        if self.source is not None:
            cols["source"] = _plain(self.source).cast(pa.string())
        return pa.table(cols)

    def __repr__(self) -> str:
        return f"<Run {self.name!r} runid={self.runid!r} lines={len(self)}>"


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: (qid, docno, grade) rows, pyarrow-backed and immutable."""

    qid: Any  # pa.ChunkedArray (binary) or BytesColumn
    docno: Any
    grade: np.ndarray  # int64
    origin: Origin
    sha256: str | None = None
    warnings: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.grade)

    @property
    def name(self) -> str:
        return self.origin.name

    @property
    def num_topics(self) -> int:
        if isinstance(self.qid, BytesColumn):
            return len(set(self.qid.values))
        from ragmeter.io.arrowutil import lazy_compute as pc

        return len(pc.unique(_plain(self.qid)))

    def to_table(self) -> pa.Table:
        import pyarrow as pa

        from ragmeter.io.arrowutil import from_numpy

        return pa.table(
            {
                "qid": _plain(_arrow(self.qid)).cast(pa.string()),
                "docno": _arrow(self.docno).cast(pa.string()),
                "grade": from_numpy(self.grade),
            }
        )

    def __repr__(self) -> str:
        return f"<Qrels {self.name!r} lines={len(self)}>"


def to_numpy(arr: pa.ChunkedArray | pa.Array, fill: float | int | None = None) -> np.ndarray:
    """A (chunked) numeric Arrow array as numpy, without importing pandas."""
    from ragmeter.io.arrowutil import to_numpy as _to_np

    return _to_np(arr, fill=fill)


def _plain(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A dictionary-encoded column decoded to plain values (cheap for small dictionaries)."""
    if isinstance(arr, BytesColumn):
        return arr
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type):
        return arr.cast(arr.type.value_type)
    return arr


def _arrow(col: Any) -> pa.ChunkedArray:
    """An id column as Arrow (a small file's bytes are converted)."""
    import pyarrow as pa

    if isinstance(col, BytesColumn):
        return pa.chunked_array([pa.array(col.values, type=pa.binary())], type=pa.binary())
    return col
