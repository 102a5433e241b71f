"""The work behind ``ragmeter baseline`` commands that more than one command runs: a BM25 run
with its sidecar notes, entity-linking records, a progress bar (``bm25`` and ``all`` share them;
see docs/baselines.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def progress_bar(total: int, label: str) -> tuple[Any, Any]:
    """A rich progress bar on stderr (only on a terminal): ``(update(done), stop())``."""
    from ragmeter.cli.console import progress_bar as bar

    return bar(total, label, min_total=1000)


def do_bm25(
    corpus: Any,
    queries: list,
    output: Path,
    *,
    k: int,
    preset: str,
    language: str,
    index: Path | None,
    tag: str,
    side: Any,
    **params: Any,
) -> Any:
    from ragmeter.baselines.bm25 import BM25Index
    from ragmeter.baselines.runs import write_run

    command = "ragmeter baseline bm25"
    if index is not None:
        idx = BM25Index.open(index, corpus, preset=preset, language=language, **params)
        if idx.rebuild_reason and idx.rebuild_reason != "no saved index":
            side.warn(f"index {index} rebuilt ({idx.rebuild_reason})", command)
        side.data["index"] = {"path": os.fspath(index), "reused": idx.reused}
    else:
        idx = BM25Index.build(corpus, preset=preset, language=language, **params)
    for w in idx.analyzer.warnings:
        side.warn(w, command)
    side.data["options"].update(idx.params, analyzer=idx.analyzer.settings())
    side.lap("index")
    update, stop = progress_bar(len(queries), "bm25 queries")
    try:
        run = idx.search(queries, k, progress=update)
    finally:
        stop()
    side.lap("search")
    write_run(run, output, tag=tag)
    return run


def link_records(method: str, labels: Path, mentions: Path, **opts: Any) -> tuple:
    """``{mention_id, candidates, nil}`` records, the entity and mention counts, and each
    mention's gold sample (None for plain mention files)."""
    from ragmeter.baselines.inputs import read_labels, read_mentions
    from ragmeter.baselines.linking import ExactLinker, FuzzyLinker

    ents = read_labels(labels)
    ments = read_mentions(mentions)
    if method == "exact":
        linker: Any = ExactLinker(ents, k=opts["k"], fold_accents=opts["fold_accents"])
    else:
        linker = FuzzyLinker(ents, **opts)
    recs = linker.link_all([(m[0], m[1]) for m in ments])
    owners = [m[3] for m in ments]
    return recs, len(ents), len(ments), owners
