"""Task functions that run on workers (module-level, so Dask pickles them by reference).

Each reads its shard's part of the input from the file and calls the same engine functions as
the in-process path. Results are per-unit values only; the driver aggregates.
"""

from __future__ import annotations

import pickle
from functools import lru_cache, partial
from typing import Any


@lru_cache(maxsize=8)
def _load_paired(path: str, digest: str) -> dict[Any, Any]:
    """A work-dir payload of ``compare`` (a metric's paired data, or a group's differences),
    read once per worker process (keyed by path and digest)."""
    import hashlib

    with open(path, "rb") as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise RuntimeError(f"{path} changed after it was written (digest mismatch)")
    return pickle.loads(data)


def run_test_block(shard: Any) -> bytes:
    """Run one block of paired tests with the function :func:`ragmeter.stats.compare` runs
    in-process; returns the pickled ``{(metric, i, j): TestResult}``. Each test draws its own
    seeded sign patterns, so a test's p-value does not depend on the block it is in."""
    from ragmeter.stats.compare import _run_tests

    paired = _load_paired(shard.path, shard.digest)
    block = {key: paired[key] for key in shard.keys}
    results = _run_tests(block, **dict(shard.settings))
    return pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)


def count_signflips(shard: Any) -> dict[str, Any]:
    """Count one row range of a group of randomization tests: the exact integer counts that
    :func:`ragmeter.stats.randomization.signflip_pvalues` makes over all rows in-process."""
    from ragmeter.stats.randomization import signflip_counts

    d, decimals = _load_paired(shard.path, shard.digest)
    return signflip_counts(
        d, shard.patterns, decimals=decimals, rows=shard.rows, **dict(shard.settings)
    )


@lru_cache(maxsize=2)
def _evaluator(recipe: tuple[Any, ...]) -> Any:
    """The command's evaluator, built once per worker process from the qrels file."""
    from ragmeter.retrieval.recipe import build_evaluator

    return build_evaluator(recipe)


def trec_run_shard(shard: Any) -> dict[str, Any] | None:
    """Parse, join and rank one query-aligned byte range of a run (as one ``--stream``
    batch). Returns the ranked judged rows and the counts the driver merges, or None for a
    range without data lines; ``grouped`` is False when a query is not contiguous."""
    import numpy as np

    from ragmeter.io.trec import _Input, run_from_input
    from ragmeter.io.trec.lines import newlines_before
    from ragmeter.retrieval import kernels as K

    evaluator = _evaluator(shard.recipe)
    with open(shard.path, "rb") as fh:
        fh.seek(shard.start)
        data = fh.read(shard.end - shard.start)
    line_offset = partial(newlines_before, shard.path, shard.start)
    inp = _Input(shard.name, None, data, data[: 1 << 16], line_offset)
    run = run_from_input(inp, allow_empty=True)
    if run is None:
        return None
    qids, codes = K._qid_codes(run.qid)
    starts = np.concatenate(([0], np.flatnonzero(codes[1:] != codes[:-1]) + 1))
    order = [qids[c] for c in codes[starts].tolist()]
    if len(set(order)) != len(order):
        return {"grouped": False}
    piece, dropped, joined = evaluator._piece(run, require_overlap=False)
    return {
        "grouped": True,
        "piece": piece,
        "dropped": dropped,
        "unjudged": sorted(joined.unjudged_qids),
        "qids": order,
        "rows": len(run),
        "runid": run.runid,
    }


def _visible(given: str, absolute: str) -> str:
    """The path as the user gave it when it names the same file here (messages then read the
    same as in-process), else the absolute path."""
    import os

    try:
        if os.path.samefile(given, absolute):
            return given
    except OSError:
        pass
    return absolute


@lru_cache(maxsize=2)
def _run_file_evaluator(qrels: tuple[str, str], measures: tuple[str, ...], level: int) -> Any:
    """One evaluator per worker for the qrels of a leaderboard (qrels read once)."""
    from ragmeter.retrieval.engine import Evaluator

    return Evaluator(_visible(*qrels), list(measures), relevance_level=level)


def evaluate_run_file(shard: Any) -> dict[str, Any]:
    """Evaluate one whole run file (the ``file`` plan): what
    :func:`ragmeter.retrieval.evaluate` returns for it, reduced to the per-query values of
    the requested measures and the warnings."""
    import warnings

    from ragmeter.warnings import RagmeterWarning

    evaluator = _run_file_evaluator(shard.qrels, shard.measures, shard.level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagmeterWarning)
        result = evaluator.evaluate(_visible(*shard.run))
    return {
        "warnings": list(result.warnings),
        "values": {m: result.values(m) for m in shard.measures},
    }


def call_payload(shard: Any) -> Any:
    """Call ``shard.func`` on the arguments the driver wrote to the work dir."""
    import hashlib
    import importlib

    module, _, name = shard.func.partition(":")
    if module != "ragmeter" and not module.startswith("ragmeter."):
        raise RuntimeError(f"{shard.func} is not a ragmeter function")
    with open(shard.path, "rb") as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != shard.digest:
        raise RuntimeError(f"{shard.path} changed after it was written (digest mismatch)")
    args = pickle.loads(data)
    if shard.coordinator is None:
        return getattr(importlib.import_module(module), name)(*args)
    from ragmeter.judge import coordinator

    coordinator.install(shard.coordinator)
    try:
        return getattr(importlib.import_module(module), name)(*args)
    finally:
        coordinator.install(None)


def judge_shard(shard: Any) -> dict[str, Any]:
    """Judge one shard's samples with the judge's own asyncio runtime, under the run's
    coordinator; returns every ``(sample, metric, repeat)`` outcome with its call stats and
    the ledger rows."""
    import asyncio
    import dataclasses
    import hashlib
    import os

    from ragmeter.judge import coordinator
    from ragmeter.judge.engine import aevaluate

    with open(shard.path, "rb") as fh:
        data = fh.read()
    if hashlib.sha256(data).hexdigest() != shard.digest:
        raise RuntimeError(f"{shard.path} changed after it was written (digest mismatch)")
    samples, metrics, config, options = pickle.loads(data)
    key = os.environ.get(config.api_key_env or "")
    if key:
        config = dataclasses.replace(config, api_key=key)
    outcomes: dict[tuple[str, str, int], Any] = {}

    def keep(sid: str, pipe: str, repeat: int, outcome: Any, stats: Any) -> None:
        outcomes[(sid, pipe, repeat)] = (outcome, stats)

    from ragmeter.errors import UsageError
    from ragmeter.judge.client import FatalJudgeError

    coordinator.install(shard.coordinator)
    try:
        result = asyncio.run(aevaluate(samples, metrics, config=config, on_outcome=keep, **options))
    except FatalJudgeError as exc:  # 401, 403, 404, quota: the in-process message, exit 2
        raise UsageError(str(exc), command="judge") from None
    finally:
        coordinator.install(None)
    versions = (result.metadata.get("judge") or {}).get("prompt_versions") or {}
    return {"outcomes": outcomes, "ledger": list(result.ledger_rows), "prompts": versions}
