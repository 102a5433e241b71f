"""The refusal of a run that shares no query with the qrels (docs/retrieval.md#decisions)."""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.errors import UsageError

__all__ = ["no_overlap_error"]

_COMMAND = "trec"


def no_overlap_error(
    qrels_name: str,
    run_name: str,
    qrels_qids: Sequence[bytes],
    run_qids: Sequence[bytes],
    *,
    complete: bool,
) -> UsageError:
    """No query in both files: refused, also under ``-c``.

    trec_eval 10.0 with ``-c`` prints 0 for every judged query here; ragmeter refuses, because a
    run that shares no qid with the qrels is almost always a qid mismatch (``q301`` against
    ``301``), and a table of zeros would look like a result (docs/retrieval.md).
    """
    q_examples = ", ".join(f"'{q.decode('utf-8', 'replace')}'" for q in qrels_qids[:2])
    r_examples = ", ".join(f"'{q.decode('utf-8', 'replace')}'" for q in run_qids[:2])
    tail = (
        "; trec_eval -c would print 0 for every judged query, ragmeter refuses: check the qids"
        if complete
        else ""
    )
    return UsageError(
        f"no query is in both {qrels_name} and {run_name} (qrels qids look like "
        f"{q_examples}; run qids look like {r_examples}){tail}",
        command=_COMMAND,
    )
