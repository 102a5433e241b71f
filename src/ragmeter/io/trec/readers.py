"""TREC run and qrels files: :func:`read_run`, :func:`read_qrels`, and the parser of one chunk
of a streamed run."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import call, release_unused
from ragmeter.io.files import display_name, sha256_file
from ragmeter.io.trec.checks import (
    _INT32,
    _no_data,
    _nonfinite_message,
    _parse_grade,
    _raise_row,
    _scan_errors,
)
from ragmeter.io.trec.containers import Origin, Qrels, Run, to_numpy
from ragmeter.io.trec.formats import _read_qrels_jsonl, _read_qrels_tsv, _read_run_jsonl
from ragmeter.io.trec.lines import _Input, _open_input
from ragmeter.io.trec.parse import _check_utf8, _combine_runid, _drop_comment_rows, _parse_lines


def read_run(
    path: str | os.PathLike[str],
    *,
    format: str = "trec",
    qid_field: str = "qid",
    ids_field: str = "retrieved_ids",
    source_field: str | None = None,
    with_source: bool = False,
    hash_input: bool = True,
) -> Run:
    """Read a run file (TREC 6-column, or JSONL traces), gzip-compressed or not; ``-`` is stdin.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = p.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.5 bm25\\n")
    >>> run = read_run(p)
    >>> run.runid, len(run), run.score.tolist()
    ('bm25', 2, [2.5, 1.5])
    """
    if format == "jsonl":
        return _read_run_jsonl(
            path, qid_field=qid_field, ids_field=ids_field, source_field=source_field
        )
    if format != "trec":
        raise InputError(
            f"unknown run format '{format}' (expected trec or jsonl)", path=display_name(path)
        )
    inp = _open_input(path, allow_stdin=True)
    run = run_from_input(inp, with_source=with_source)
    assert run is not None
    if hash_input and inp.path is not None:
        run = Run(**{**run.__dict__, "sha256": sha256_file(inp.path)})
    return run


_RUN_TYPES: dict[str, pa.DataType] = {
    "qid": pa.dictionary(pa.int32(), pa.binary()),
    "docno": pa.binary(),
    "score": pa.float64(),  # Arrow's parser is correctly rounded, like strtod
}

_TAG_TYPE = pa.dictionary(pa.int32(), pa.binary())


def _last_tag(inp: _Input) -> str:
    """The tag of the last data line (the run's runid), read from the end of the input."""
    size = len(inp.data) if inp.data is not None else os.path.getsize(inp.path)  # type: ignore[arg-type]
    window = 1 << 16
    while True:
        start = max(0, size - window)
        if inp.data is not None:
            tail = bytes(inp.data[start:size])
        else:
            with open(inp.path, "rb") as fh:  # type: ignore[arg-type]
                fh.seek(start)
                tail = fh.read(size - start)
        lines = tail.split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first piece may be a partial line
        for line in reversed(lines):
            fields = line.split()
            if fields and not fields[0].startswith(b"#") and len(fields) >= 6:
                return fields[5].decode("utf-8", "replace")
        if start == 0:
            return ""
        window *= 4


def run_from_input(
    inp: _Input, *, with_source: bool = False, allow_empty: bool = False, trim: bool = True
) -> Run | None:
    """Parse an opened TREC run input (a whole file or one chunk of a stream).

    ``trim=False`` keeps the parse's freed buffers in the process for the next chunk of a
    stream to reuse (trimming after every chunk cost ~3.5 s of page faults on 100M lines).
    """
    types = {**_RUN_TYPES, "tag": _TAG_TYPE} if with_source else _RUN_TYPES
    table = _parse_lines(
        inp,
        names=["qid", "iter", "docno", "rank", "score", "tag"],
        types=types,
        min_fields=6,
        exact_fields=False,
        check=lambda: _scan_errors(inp, "run"),
        allow_empty=allow_empty,
    )
    if table is not None:
        table = _drop_comment_rows(table)
    origin = Origin(
        inp.name,
        path=inp.path if inp.data is None else None,
        data=inp.data,
        line_offset=inp.line_offset,
    )
    if table is None or table.num_rows == 0:
        if allow_empty:
            return None
        raise InputError(_no_data(6), path=inp.name)
    _check_utf8(table.column("qid"), "qid", origin)
    _check_utf8(table.column("docno"), "docno", origin)
    score = to_numpy(table.column("score"), fill=math.nan)
    if not np.isfinite(score).all():
        _scan_errors(inp, "run")  # raises with the line and the score as written
        row = int(np.argmin(np.isfinite(score)))  # pragma: no cover - the scan always finds it
        _raise_row(origin, row, _nonfinite_message(repr(float(score[row]))))
    if with_source:
        tag = table.column("tag")
        runid = _combine_runid(tag)
    else:
        tag = None
        runid = _last_tag(inp)
    qid, docno = table.column("qid"), table.column("docno")
    del table
    if trim:
        release_unused()  # the parse's transient buffers set the peak memory otherwise
    return Run(qid=qid, docno=docno, score=score, runid=runid, origin=origin, source=tag)


def read_qrels(
    path: str | os.PathLike[str],
    *,
    format: str = "trec",
    qid_field: str = "qid",
    gold_field: str = "gold_citations",
    hash_input: bool = True,
) -> Qrels:
    """Read judgments: TREC qrels (4 columns), BEIR-style TSV, or JSONL gold citations.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = p.write_text("q1 0 d1 1\\n# a comment\\nq1 0 d2 0\\n")
    >>> qrels = read_qrels(p)
    >>> len(qrels), qrels.grade.tolist()
    (2, [1, 0])
    """
    if format == "jsonl":
        return _read_qrels_jsonl(path, qid_field=qid_field, gold_field=gold_field)
    if format == "tsv":
        return _read_qrels_tsv(path)
    if format != "trec":
        raise InputError(
            f"unknown qrels format '{format}' (expected trec, tsv or jsonl)",
            path=display_name(path),
        )
    inp = _open_input(path, allow_stdin=False)
    types: dict[str, pa.DataType] = {
        "qid": pa.binary(),
        "docno": pa.binary(),
        "grade": pa.string(),
    }
    table = _parse_lines(
        inp,
        names=["qid", "iter", "docno", "grade"],
        types=types,
        min_fields=4,
        exact_fields=True,
        check=lambda: _scan_errors(inp, "qrels"),
    )
    table = _drop_comment_rows(table)
    origin = Origin(inp.name, path=inp.path if inp.data is None else None, data=inp.data)
    if table.num_rows == 0:
        raise InputError(_no_data(4), path=inp.name)
    _check_utf8(table.column("qid"), "qid", origin)
    _check_utf8(table.column("docno"), "docno", origin)
    grade = _grades_to_int(table.column("grade"), origin)
    sha = sha256_file(inp.path) if hash_input and inp.path is not None else None
    return Qrels(table.column("qid"), table.column("docno"), grade, origin, sha)


def _grades_to_int(col: pa.ChunkedArray, origin: Origin) -> np.ndarray:
    try:
        from pyarrow._compute import CastOptions

        ints = call("cast", col, options=CastOptions.safe(pa.int64()))
    except pa.ArrowInvalid:
        ints = None
    if ints is not None:
        arr = to_numpy(ints)
        bad = (arr < _INT32[0]) | (arr > _INT32[1])
        if bad.any():
            row = int(np.argmax(bad))
            loc = origin.locate([row])[0]
            _parse_grade(col[row].as_py(), loc.path, loc.line, loc.location)
        return arr.astype(np.int64)
    values = col.to_pylist()
    out = np.empty(len(values), dtype=np.int64)
    for i, text in enumerate(values):
        try:
            value = int(text)
            if not _INT32[0] <= value <= _INT32[1]:
                raise ValueError(text)  # reported with its line below
            out[i] = value
        except ValueError:
            try:
                real = float(text)
            except ValueError:
                real = math.nan
            if math.isfinite(real) and real == int(real) and _INT32[0] <= real <= _INT32[1]:
                out[i] = int(real)
            else:
                loc = origin.locate([i])[0]
                _parse_grade(text, loc.path, loc.line, loc.location)
    return out
