"""What ``ragmeter compare`` tests: the per-sample scores of each system, read from
per-sample files or computed from TREC runs (in this process or one task per run file on an
executor)."""

from __future__ import annotations

import sys
from typing import Any

from ragmeter.errors import UsageError

__all__ = ["per_sample_scores", "trec_scores", "ultrarag_metrics"]

COMMAND = "compare"


def ultrarag_metrics() -> list[tuple[str, str]]:
    """(UltraRAG output key, retrieval metric) of UltraRAG's ``evaluate_trec_pvalue`` preset:
    MAP, MRR, then nDCG, precision and recall at each cutoff of the retrieval grammar's
    ``ultrarag`` preset (1, 5, 10, 20, 50 and 100)."""
    # imported here: the command line starts without the retrieval engine's grammar
    from ragmeter.retrieval.names import ULTRARAG_KS

    out = [("map", "map"), ("mrr", "recip_rank")]
    for k in ULTRARAG_KS:
        out += [
            (f"ndcg@{k}", f"ndcg_cut.{k}"),
            (f"P@{k}", f"P.{k}"),
            (f"recall@{k}", f"recall.{k}"),
        ]
    return out


def _pick_metric(requested: str, available: list[str], path: str, task: str | None) -> str:
    if requested in available:
        return requested
    folded = [m for m in available if m.lower() == requested.lower()]
    if len(folded) == 1:
        return folded[0]
    from ragmeter import registry

    if task is not None:
        try:
            canonical = registry.resolve(requested, task=task).canonical
        except registry.UnknownMetricError:
            canonical = None
        if canonical in available:
            return canonical
    hint = registry.suggest(requested, available)
    extra = f"; did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
    from ragmeter.errors import InputError

    raise InputError(
        f"no metric {requested!r} (the file has: {', '.join(available[:12])}"
        + (", ..." if len(available) > 12 else "")
        + f"){extra}",
        path=path,
    )


def per_sample_scores(
    paths: list[str], systems: list[str], metrics: list[str], id_key: str
) -> tuple[dict[str, dict[str, dict[str, float]]], list[str], dict[str, Any]]:
    from ragmeter.io.per_sample import read_per_sample

    files = [read_per_sample(p, id_key=id_key) for p in paths]
    if not metrics:
        common = [m for m in files[0].metrics if all(m in f.values for f in files[1:])]
        if not common:
            raise UsageError(
                "the files share no metric name (name the metrics with -m)", command=COMMAND
            )
        metrics = common
    scores: dict[str, dict[str, dict[str, float]]] = {}
    unscored: dict[str, Any] = {}
    for system, f in zip(systems, files, strict=True):
        per: dict[str, dict[str, float]] = {}
        for m in metrics:
            key = _pick_metric(m, f.metrics, f.path, f.task)
            per[m] = f.values[key]
            if f.unscored.get(key):
                unscored.setdefault(system, {})[m] = f.unscored[key]
        scores[system] = per
    info = {
        "mode": "per_sample",
        "layouts": {s: f.layout for s, f in zip(systems, files, strict=True)},
    }
    if unscored:
        info["unscored"] = unscored
    return scores, metrics, info


def trec_scores(
    qrels_path: str,
    run_paths: list[str],
    systems: list[str],
    metrics: list[str],
    *,
    ultrarag: bool,
    relevance_level: int,
    session: Any = None,
) -> tuple[dict[str, dict[str, dict[str, float]]], list[str], dict[str, Any]]:
    import importlib

    try:
        retrieval = importlib.import_module("ragmeter.retrieval")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ragmeter"):
            raise UsageError(
                "TREC runs need the retrieval engine, which is not part of this build "
                "(compare per-sample files with --per-sample)",
                command=COMMAND,
            ) from None
        raise
    from ragmeter import registry

    if ultrarag and not metrics:
        pairs = ultrarag_metrics()
    else:
        names = metrics or [m.name for m in registry.get_task("retrieval").metrics if m.default]
        if not names:
            raise UsageError("name the metrics with -m (e.g. -m nDCG@10 -m RR)", command=COMMAND)
        pairs = [(n, n) for n in names]
    resolved = []
    for shown, name in pairs:
        try:
            resolved.append((shown, registry.resolve(name, task="retrieval").canonical))
        except registry.UnknownMetricError as exc:
            raise UsageError(str(exc), command=COMMAND) from None
    canonical = list(dict.fromkeys(c for _, c in resolved))
    scores: dict[str, dict[str, dict[str, float]]] = {}
    import warnings

    from ragmeter.retrieval.multirun import map_runs
    from ragmeter.warnings import RagmeterWarning

    if session is not None:  # one task per run file, on the command's executor
        from ragmeter.executors.retrieval import evaluate_run_files

        done = evaluate_run_files(session, qrels_path, run_paths, canonical, relevance_level)
        for system, out in zip(systems, done, strict=True):
            for w in out["warnings"]:
                print(f"ragmeter {COMMAND}: warning: {w}", file=sys.stderr)
            scores[system] = {shown: out["values"][c] for shown, c in resolved}
    else:
        # the engine's warnings are printed as the command's own lines, not as Python warnings
        # located in typer's source; the qrels are parsed once and the runs evaluated in
        # parallel, and a bad run stops the command before anything is printed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagmeterWarning)
            evaluator = retrieval.Evaluator(qrels_path, canonical, relevance_level=relevance_level)
            results = map_runs(evaluator.evaluate, run_paths)
        for result in results:
            for w in result.warnings:
                print(f"ragmeter {COMMAND}: warning: {w}", file=sys.stderr)
        for system, result in zip(systems, results, strict=True):
            scores[system] = {shown: result.values(c) for shown, c in resolved}
    info = {
        "mode": "trec",
        "qrels": qrels_path,
        "runs": dict(zip(systems, run_paths, strict=True)),
        "measures": dict(resolved),
        "relevance_level": relevance_level,
    }
    return scores, [shown for shown, _ in resolved], info
