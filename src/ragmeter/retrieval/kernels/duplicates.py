"""Duplicate (qid, docno) lines of a run: found by a sort of 64-bit keys, confirmed on the bytes;
refused, or dropped under ``--dedupe``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter.background import Background
from ragmeter.errors import InputError
from ragmeter.io.trec.containers import Run
from ragmeter.retrieval.kernels.codes import _MIX, _docno_codes, row_bytes, take_rows


def _dup_keys(run: Run, run_qcode: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit mix of (query, docno code) per row; equal rows have equal keys.

    ``codes`` (the docno codes, consumed: mixed in place) saves recomputing them."""
    keys = codes if codes is not None else _docno_codes(run.docno)[0]
    step = 1 << 20
    with np.errstate(over="ignore"):
        for a in range(0, keys.size, step):  # in place, a block at a time: no n-sized temporary
            block = keys[a : a + step]
            block *= _MIX
            block += run_qcode[a : a + step].astype(np.uint64)
    return keys


def find_duplicates(
    run: Run, run_qcode: np.ndarray, codes: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Exact (first row, later row) pairs of one (qid, docno) appearing twice, in file order.

    Candidates come from a sort of 64-bit (query, docno) codes; each is confirmed on the bytes.
    """
    keys = _dup_keys(run, run_qcode, codes)
    keys.sort()  # in place: one 8-byte array for the whole run
    dupvals = keys[1:][keys[1:] == keys[:-1]]  # sorted: unique without np.unique (numpy.ma)
    if dupvals.size > 1:
        dupvals = dupvals[np.concatenate(([True], dupvals[1:] != dupvals[:-1]))]
    del keys
    if dupvals.size == 0:
        return []
    rows = np.flatnonzero(np.isin(_dup_keys(run, run_qcode), dupvals))
    docs = take_rows(run.docno, rows).to_pylist()
    first: dict[tuple[int, bytes], int] = {}
    pairs: list[tuple[int, int]] = []
    for r, d in zip(rows.tolist(), docs, strict=True):
        k = (int(run_qcode[r]), d)
        if k in first:
            pairs.append((first[k], r))
        else:
            first[k] = r
    return pairs


def duplicate_error(
    run: Run, run_qids: Sequence[bytes], run_qcode: np.ndarray, pair: tuple[int, int]
) -> InputError:
    a, b = pair
    doc = row_bytes(run.docno, b).decode("utf-8", "replace")
    qid = run_qids[int(run_qcode[b])].decode("utf-8", "replace")
    loc = run.origin.locate([b])[0]
    return InputError(
        f"document '{doc}' appears twice for query '{qid}' (first at {run.origin.where(a)}); "
        "use --dedupe first or --dedupe max to keep one",
        path=loc.path,
        line=loc.line,
        location=loc.location,
    )


def dedupe_rows(run: Run, pairs: list[tuple[int, int]], policy: str) -> np.ndarray:
    """Rows to drop under ``--dedupe first|max`` (max: highest score, first among equals)."""
    groups: dict[int, list[int]] = {}
    for a, b in pairs:
        groups.setdefault(a, [a]).append(b)
    drop: list[int] = []
    for rows in groups.values():
        if policy == "first":
            drop += rows[1:]
        else:
            best = max(rows, key=lambda r: (run.score[r], -r))
            drop += [r for r in rows if r != best]
    return np.asarray(sorted(drop), dtype=np.int64)


class DuplicateCheck:
    """The run's duplicate check, started on a worker thread for a large run (numpy's sort
    releases the GIL)."""

    def __init__(
        self,
        run: Run,
        run_qcode: np.ndarray,
        *,
        codes: np.ndarray | None = None,
        background: bool = True,
    ) -> None:
        self._work: Background[list[tuple[int, int]]] | None = None
        self._result: list[tuple[int, int]] = []
        if background and len(run) > 200_000:
            self._work = Background(find_duplicates, run, run_qcode, codes)
        else:
            self._result = find_duplicates(run, run_qcode, codes)

    def result(self) -> list[tuple[int, int]]:
        if self._work is not None:
            self._result = self._work.result()
            self._work = None
        return self._result
