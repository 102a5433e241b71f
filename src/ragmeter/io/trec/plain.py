"""Reading TREC files without Arrow where it pays (docs/retrieval.md#speed).

:func:`read_run_plain` and :func:`read_qrels_plain` give a small file to the plain-Python parse
and a larger one to the numpy parse of regular files; a file that is not regular is read by
the Arrow path, which accepts every form and names the line of every error.
"""

from __future__ import annotations

from ragmeter.io.files import display_name
from ragmeter.io.trec.containers import Qrels, Run
from ragmeter.io.trec.sizes import file_parser

__all__ = ["read_qrels_plain", "read_run_plain"]


def read_run_plain(path: str) -> Run:
    """A TREC run file, ids as bytes or spans (not hashed)."""
    if file_parser(path) == "small":
        from ragmeter.io.trec.small import read_run_small

        return read_run_small(path)
    from ragmeter.io.trec.regular import read_run_regular

    run = read_run_regular(path, display_name(path))
    if run is not None:
        return run
    from ragmeter.io.trec.readers import read_run

    return read_run(path, hash_input=False)


def read_qrels_plain(path: str) -> Qrels:
    """A TREC qrels file, ids as bytes or spans (not hashed)."""
    if file_parser(path) == "small":
        from ragmeter.io.trec.small import read_qrels_small

        return read_qrels_small(path)
    from ragmeter.io.trec.regular import read_qrels_regular

    qrels = read_qrels_regular(path, display_name(path))
    if qrels is not None:
        return qrels
    from ragmeter.io.trec.readers import read_qrels

    return read_qrels(path, hash_input=False)
