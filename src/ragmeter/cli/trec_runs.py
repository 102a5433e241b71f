"""``ragmeter trec``: evaluating run files and their output.

:func:`evaluate_one` evaluates one run (in memory, streamed, spilled or parsed without Arrow) and
:func:`render` gives its output in the requested format. Several runs large enough to repay
starting interpreters are evaluated in spawned worker processes (:func:`spawn_workers`), each of
which builds the command's evaluator once from its recipe (:func:`worker_init`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.background import Background

# Runs of this many bytes in all repay starting worker interpreters (about 0.3 s of wall for
# the imports and the qrels parse, in parallel): 50 runs of 100k lines are 180 MB.
SPAWN_MIN_BYTES = 32 << 20


def spawn_workers(cfg: dict[str, Any], run_paths: list[str]) -> bool:
    """Whether several runs are evaluated in worker processes rather than threads."""
    from ragmeter.retrieval.multirun import worker_count

    if "-" in run_paths or cfg["spill"] or worker_count(len(run_paths), cfg["threads"]) < 2:
        return False  # stdin is this process's; spilled runs share one spill dir
    try:
        total = sum(os.path.getsize(p) for p in run_paths)
    except OSError:  # a missing run is reported by the thread path, in order
        return False
    return total >= SPAWN_MIN_BYTES


_WORKER: tuple[Any, dict[str, Any], bool] | None = None
_WORKER_ERROR: Exception | None = None


def worker_init(recipe: tuple[Any, ...], cfg: dict[str, Any], hashes: bool) -> None:
    """In a worker process: the command's evaluator, built once from its recipe.

    A bad qrels is kept and raised by every run the worker is given, so that the first run in
    order reports it as the command's one error (an exception here would break the pool).
    """
    global _WORKER, _WORKER_ERROR
    from ragmeter.errors import RagmeterError
    from ragmeter.retrieval.recipe import build_evaluator

    try:
        qrels = None
        if cfg["plain"]:
            from ragmeter.io.trec.plain import read_qrels_plain

            qrels = read_qrels_plain(recipe[0])
        else:  # the workers share the cores: one Arrow thread each
            import pyarrow as pa

            pa.set_cpu_count(1)
            pa.set_io_thread_count(1)
        _WORKER = (build_evaluator(recipe, qrels=qrels), cfg, hashes)
    except RagmeterError as exc:
        _WORKER_ERROR = exc


def worker_evaluate(run_path: str) -> tuple[Any, list[str]]:
    if _WORKER_ERROR is not None:
        raise _WORKER_ERROR
    assert _WORKER is not None, "worker_init runs first"
    evaluator, cfg, hashes = _WORKER
    return evaluate_one(evaluator, cfg, run_path, hashes)


def as_text(out: Any) -> str:
    """Output text: a JSON document (a dict) is serialised, text is returned as it is."""
    if isinstance(out, str):
        return out
    from ragmeter.io.jsonutil import dumps

    return dumps(out, indent=2) + "\n"


def read_coded(run_path: str) -> tuple[Any, Any]:
    """A run read without Arrow, and its codes (for :func:`evaluate_one`'s ``ahead``)."""
    from ragmeter.io.trec.plain import read_run_plain
    from ragmeter.retrieval.engine import run_codes

    run = read_run_plain(run_path)
    return run, run_codes(run)


def evaluate_one(
    evaluator: Any,
    cfg: dict[str, Any],
    run_path: str,
    hashes: bool,
    *,
    ahead: Background[tuple[Any, Any]] | None = None,
) -> tuple[Any, list[str]]:
    """One run's output (text, or the JSON document as a dict) and its warnings. ``ahead``: a
    :class:`~ragmeter.background.Background` :func:`read_coded` of the run (read without
    Arrow)."""
    run = None
    if cfg["spill"]:
        from ragmeter.retrieval.spill_plan import evaluate_spilled

        result, order = evaluate_spilled(evaluator, cfg, run_path, hash_input=hashes)
        return render(cfg, result, None, evaluator, order=order)
    if cfg["plain"]:
        if ahead is not None:
            plain_run, codes = ahead.result()
        else:
            from ragmeter.io.trec.plain import read_run_plain

            plain_run, codes = read_run_plain(run_path), None
        result = evaluator.evaluate_report(plain_run, codes=codes)
    elif cfg["stream"]:
        from ragmeter.retrieval.stream import evaluate_stream_with

        result = evaluate_stream_with(
            evaluator,
            run_path,
            batch_rows=cfg["batch_rows"],
            run_format=cfg["run_format"],
            hash_input=hashes,
        )
    else:
        from ragmeter.io import trec as io_trec

        run = io_trec.read_run(
            run_path,
            format=cfg["run_format"],
            qid_field=cfg["qid_field"],
            ids_field=cfg["ids_field"],
            source_field=cfg["source_field"],
            with_source=cfg["by_source"],
            hash_input=hashes,
        )
        _memory_hint(run_path, cfg)
        # trec_eval's text is printed from the Report: the Arrow-backed result is not needed
        result = (
            evaluator.evaluate_report(run) if cfg["format"] == "trec" else evaluator.evaluate(run)
        )
    order = None if run is None or cfg["format"] != "ultrarag" else _first_appearance(run.qid)
    return render(cfg, result, run, evaluator, order=order)


def render(
    cfg: dict[str, Any],
    result: Any,
    run: Any,
    evaluator: Any,
    *,
    order: list[str] | None = None,
    executor: dict[str, Any] | None = None,
) -> tuple[Any, list[str]]:
    """The output of a result (text, or the JSON document as a dict) and its warnings. ``run``
    is the in-memory run (for --by-source), ``order`` the qids in order of first appearance
    (UltraRAG sums in that order; None for a stream), ``executor`` the metadata of a Dask run
    (JSON output only)."""
    fmt = cfg["format"]
    want_source = cfg["by_source"]
    warns = [] if cfg["quiet"] else list(result.warnings)
    if fmt == "trec":
        from ragmeter.retrieval.textout import format_trec

        text = format_trec(
            result, queries=cfg["per_query"], summary=cfg["summary"], digits=cfg["digits"]
        )
        return text, warns
    if fmt == "ultrarag":
        # pytrec_eval returns queries in the run's order of first appearance, and UltraRAG sums
        # them in that order; a stream is summed in qid order (docs/retrieval.md)
        return result.to_ultrarag(order=order), warns
    if fmt == "csv":
        text = result.to_csv(queries=cfg["per_query"])
        if want_source:
            from ragmeter.retrieval.sources import breakdown_csv

            text += breakdown_csv(run, evaluator.qrels, ks=cfg["ks"] or (1, 5, 10))
        return text, warns
    doc = result.to_document(per_query=cfg["per_query"])
    if want_source:
        from ragmeter.retrieval.sources import breakdown_dict

        doc["by_source"] = breakdown_dict(run, evaluator.qrels, ks=cfg["ks"] or (1, 5, 10))
    if executor is not None:
        doc["executor"] = executor
    return doc, warns


def _first_appearance(qids: Any) -> list[str]:
    """Distinct qids in the order they first appear (pyarrow's unique keeps that order)."""
    from ragmeter.io.arrowutil import call

    return [q.decode("utf-8") for q in call("unique", qids).to_pylist()]


def _memory_hint(run_path: str, cfg: dict[str, Any]) -> None:
    """Suggest --stream when the run file is larger than half of the available memory."""
    if run_path == "-" or cfg["quiet"]:
        return
    try:
        size = os.path.getsize(run_path)
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return
    if avail > 0 and size > avail // 2:
        print(
            f"ragmeter trec: warning: {run_path} is larger than half of the available memory; "
            "--stream evaluates a run grouped by query in bounded memory",
            file=sys.stderr,
        )
