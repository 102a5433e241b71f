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

from ragmeter.errors import InputError
from ragmeter.io.trec.checks import QRELS_FIELDS as QRELS_FIELDS
from ragmeter.io.trec.checks import RUN_FIELDS as RUN_FIELDS
from ragmeter.io.trec.containers import Origin as Origin
from ragmeter.io.trec.containers import Qrels, Run
from ragmeter.io.trec.containers import _plain as _plain
from ragmeter.io.trec.containers import to_numpy as to_numpy
from ragmeter.io.trec.lines import LineOffset as LineOffset
from ragmeter.io.trec.lines import _Input as _Input
from ragmeter.io.trec.lines import lines_before as lines_before
from ragmeter.io.trec.objects import as_qrels, as_run
from ragmeter.io.trec.readers import read_qrels, read_run
from ragmeter.io.trec.readers import run_from_input as run_from_input

# The package's modules: lines (opening inputs), containers (Run, Qrels, Origin), checks (line
# validation and messages), parse (the columnar parse), readers (TREC files), formats (TSV and
# JSONL), objects (Python inputs). The names imported "as" themselves are for the engine, the
# stream and the executors.
__all__ = [
    "InputError",
    "Qrels",
    "Run",
    "as_qrels",
    "as_run",
    "read_qrels",
    "read_run",
]
