"""Reading TREC files without Arrow where it pays (docs/retrieval.md#speed).

:func:`read_run_plain` and :func:`read_qrels_plain` give a small file to the plain-Python parse
and a larger one to the numpy parse of regular files; a file that is not regular is read by
the Arrow path, which accepts every form and names the line of every error.
"""

from __future__ import annotations

from typing import Any

from ragmeter.io.files import display_name
from ragmeter.io.trec.containers import Qrels, Run
from ragmeter.io.trec.sizes import file_parser

__all__ = ["read_qrels_plain", "read_run_plain"]


def read_run_plain(path: str) -> Run:
    """A TREC run file, ids as bytes or spans (not hashed)."""
    run: Run = _read(path, "run")
    return run


def read_qrels_plain(path: str) -> Qrels:
    """A TREC qrels file, ids as bytes or spans (not hashed)."""
    qrels: Qrels = _read(path, "qrels")
    return qrels


def _read(path: str, kind: str) -> Any:
    """``kind`` ("run" or "qrels") read by the parse its size and form call for."""
    if file_parser(path) == "small":
        from ragmeter.io.trec import small

        return getattr(small, f"read_{kind}_small")(path)
    from ragmeter.io.trec import regular

    parsed = getattr(regular, f"read_{kind}_regular")(path, display_name(path))
    if parsed is not None:
        return parsed
    from ragmeter.io.trec import readers

    return getattr(readers, f"read_{kind}")(path, hash_input=False)
