"""``ragmeter trec`` reads qrels and runs from pipes (``<(cmd)``, ``cmd |``): every format, once.

A pipe can be read only once; the readers used to hash the file after parsing it, which read it
a second time (pyarrow's reader failed with ``lseek failed``, the TSV/JSONL readers refused the
pipe). The numbers must equal those of the same bytes read from a regular file.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, invoke

EXAMPLE = REPO / "examples" / "retrieval"
QRELS = EXAMPLE / "qrels.txt"
RUN = EXAMPLE / "bm25.run"


@contextmanager
def pipe(data: bytes) -> Iterator[str]:
    """A ``/dev/fd/N`` path that yields ``data`` once, as bash's process substitution does."""
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        yield f"/dev/fd/{r}"
    finally:
        writer.join()
        os.close(r)


def _qrels_rows() -> list[list[str]]:
    return [ln.split() for ln in QRELS.read_text().splitlines() if ln.strip()]


def _as_tsv(rows: list[list[str]]) -> bytes:
    return (
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in rows)
    ).encode()


def _as_jsonl(rows: list[list[str]]) -> bytes:
    by_q: dict[str, dict[str, int]] = {}
    for q, _, d, g in rows:
        by_q.setdefault(q, {})[d] = int(g)
    return "".join(json.dumps({"qid": q, "gold": g}) + "\n" for q, g in by_q.items()).encode()


@pytest.fixture(scope="module")
def expected() -> str:
    res = invoke("trec", "-c", "-m", "map", "-m", "ndcg_cut.10", str(QRELS), str(RUN))
    assert res.code == 0 and res.stdout.startswith("map"), res.stderr
    return res.stdout


@pytest.mark.parametrize(
    ("flags", "encode"),
    [
        ((), lambda rows: QRELS.read_bytes()),
        (("--qrels-format", "tsv"), _as_tsv),
        (("--qrels-format", "jsonl", "--gold-field", "gold"), _as_jsonl),
    ],
    ids=["trec", "tsv", "jsonl"],
)
def test_qrels_through_a_pipe(expected, flags, encode) -> None:
    data = encode(_qrels_rows())
    with pipe(data) as path:
        res = invoke("trec", "-c", "-m", "map", "-m", "ndcg_cut.10", *flags, path, str(RUN))
    assert (res.code, res.stderr, res.stdout) == (0, "", expected)


def test_jsonl_run_through_a_pipe(expected, tmp_path: Path) -> None:
    by_q: dict[str, list[tuple[float, str]]] = {}
    for ln in RUN.read_text().splitlines():
        q, _, d, _, score, _ = ln.split()
        by_q.setdefault(q, []).append((float(score), d))
    body = "".join(
        json.dumps({"qid": q, "retrieved_ids": [d for _, d in r], "scores": [s for s, _ in r]})
        + "\n"
        for q, r in by_q.items()
    ).encode()
    args = ("trec", "-c", "-m", "map", "-m", "ndcg_cut.10", "--run-format", "jsonl", str(QRELS))
    with pipe(body) as path:
        res = invoke(*args, path)
    assert (res.code, res.stderr, res.stdout) == (0, "", expected)
    # both inputs through pipes at once
    with pipe(QRELS.read_bytes()) as qpath, pipe(body) as rpath:
        res = invoke(*args[:-1], qpath, rpath)
    assert (res.code, res.stdout) == (0, expected), res.stderr
