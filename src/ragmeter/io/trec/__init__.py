"""TREC runs and qrels: fast columnar readers, other formats, and Python inputs.

``read_run`` and ``read_qrels`` return immutable, pyarrow-backed :class:`Run` and :class:`Qrels`
objects (docs/retrieval.md#inputs). The TREC line format is parsed by ``pyarrow.csv`` on a
single-byte delimiter sniffed from the first 64 KiB (the fast path, multi-threaded); files with
runs of whitespace, comment lines or ragged extra fields are first normalised with numpy (the
general path). Errors are found by a line-by-line rescan that runs only when something is wrong,
so every message names the physical line: ``run.txt:17: score 'abc' is not a number (…)``.

:func:`as_run` and :func:`as_qrels` accept every input docs/retrieval.md#inputs lists: paths,
dicts, lists, pandas and pyarrow tables, and ir_measures ``ScoredDoc``/``Qrel`` tuples.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError

if TYPE_CHECKING:  # the names as mypy sees them; at run time each loads on first use
    from ragmeter.io.trec.checks import QRELS_FIELDS as QRELS_FIELDS
    from ragmeter.io.trec.checks import RUN_FIELDS as RUN_FIELDS
    from ragmeter.io.trec.containers import Origin as Origin
    from ragmeter.io.trec.containers import Qrels as Qrels
    from ragmeter.io.trec.containers import Run as Run
    from ragmeter.io.trec.containers import _plain as _plain
    from ragmeter.io.trec.containers import to_numpy as to_numpy
    from ragmeter.io.trec.lines import LineOffset as LineOffset
    from ragmeter.io.trec.lines import _Input as _Input
    from ragmeter.io.trec.lines import lines_before as lines_before
    from ragmeter.io.trec.objects import as_qrels as as_qrels
    from ragmeter.io.trec.objects import as_run as as_run
    from ragmeter.io.trec.readers import read_qrels as read_qrels
    from ragmeter.io.trec.readers import read_run as read_run
    from ragmeter.io.trec.readers import run_from_input as run_from_input

# The package's modules: lines (opening inputs), column (ids as bytes, for small files),
# containers (Run, Qrels, Origin), checks (line validation and messages), small (the parse of
# small files, without Arrow), parse (the columnar Arrow parse), readers (TREC files), formats
# (TSV and JSONL), objects (Python inputs). Names load lazily: the Arrow-side modules cost a
# third of ``ragmeter trec``'s start, and a small file never needs them.
_LAZY = {
    "QRELS_FIELDS": "checks",
    "RUN_FIELDS": "checks",
    "Origin": "containers",
    "Qrels": "containers",
    "Run": "containers",
    "_plain": "containers",
    "to_numpy": "containers",
    "LineOffset": "lines",
    "_Input": "lines",
    "lines_before": "lines",
    "as_qrels": "objects",
    "as_run": "objects",
    "read_qrels": "readers",
    "read_run": "readers",
    "run_from_input": "readers",
}

__all__ = [
    "InputError",
    "Qrels",
    "Run",
    "as_qrels",
    "as_run",
    "read_qrels",
    "read_run",
]


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'ragmeter.io.trec' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"ragmeter.io.trec.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
