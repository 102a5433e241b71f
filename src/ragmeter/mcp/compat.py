"""UltraRAG's evaluation tools: ``evaluate``, ``evaluate_trec``, ``evaluate_trec_pvalue``.

Names, parameter names, parameter order and the ``{"eval_res": ...}`` shape are UltraRAG's
(OpenBMB/UltraRAG ``servers/evaluation``); extra parameters come after them and are optional,
so a call written for UltraRAG is valid unchanged. The numbers are ragmeter's library calls:
``ragmeter.answers.evaluate`` (the ``ultrarag`` profile), ``ragmeter.retrieval.evaluate``
(trec_eval 10.0) and ``ragmeter.stats.compare`` (a seeded randomization test). Where UltraRAG
skips or zeroes silently, these raise a one-line error; docs/mcp.md lists every difference.
No SDK module is imported here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from ragmeter._version import __version__
from ragmeter.errors import UsageError
from ragmeter.mcp import progress
from ragmeter.mcp.paths import shown_as
from ragmeter.mcp.settings import Settings
from ragmeter.warnings import renamed_attributes

__all__ = ["TREC_FAMILIES", "CompatTools", "saved_name"]

#: UltraRAG's retrieval metric families, in the order its ``evaluate_trec`` documents them.
TREC_FAMILIES = ("mrr", "map", "recall", "ndcg", "precision")
#: ``evaluate_trec_pvalue``'s default family order (UltraRAG's, with ``mrr`` really included).
PVALUE_FAMILIES = ("recall", "ndcg", "precision", "map", "mrr")
_TREC_NAME = {"mrr": "recip_rank", "map": "map", "ndcg": "ndcg_cut", "precision": "P"}
_TREC_NAME["recall"] = "recall"
_ALIAS = {"ndcg": "ndcg@{k}", "precision": "P@{k}", "recall": "recall@{k}"}

SaveMode = Literal["timestamp", "exact"]


def saved_name(save_path: str, mode: str, stamp: str) -> str:
    """The file name written for ``save_path``: UltraRAG's ``<stem>_<stamp>.json`` or as given.

    >>> saved_name("output/evaluate_results.json", "timestamp", "20260102_030405")
    'output/evaluate_results_20260102_030405.json'
    >>> saved_name("res.json", "exact", "20260102_030405")
    'res.json'
    """
    if mode == "exact":
        return save_path
    base_dir, base_file = os.path.split(save_path)
    name = f"{os.path.splitext(base_file)[0]}_{stamp}.json"
    return os.path.join(base_dir, name) if base_dir else name


def _families(metrics: Sequence[str] | None, default: Sequence[str], tool: str) -> list[str]:
    """UltraRAG family names, lower-cased; ``None`` or ``[]`` is the default list."""
    if not metrics:
        return list(default)
    out: list[str] = []
    for m in metrics:
        name = str(m).strip().lower()
        name = "mrr" if name == "recip_rank" else name
        if name not in TREC_FAMILIES:
            raise UsageError(
                f"{tool}: unknown metric {m!r} (expected mrr, map, recall, ndcg or precision; "
                "the trec tool takes any trec_eval or ir_measures name)",
                command="mcp",
            )
        if name not in out:
            out.append(name)
    return out


def _cutoffs(ks: Sequence[int] | None, tool: str) -> list[int]:
    if ks is None or len(ks) == 0:
        # the default cutoffs of UltraRAG's parameter.yaml: the retrieval grammar's preset
        from ragmeter.retrieval.names import ULTRARAG_KS

        return list(ULTRARAG_KS)
    bad = [k for k in ks if isinstance(k, bool) or not isinstance(k, int) or k < 1]
    if bad:
        raise UsageError(f"{tool}: ks must be integers ≥ 1, not {bad[0]!r}", command="mcp")
    return list(dict.fromkeys(ks))


def _trec_measures(families: Sequence[str], ks: Sequence[int]) -> list[str]:
    """trec_eval names of the families: ``map``, ``recip_rank``, ``ndcg_cut.1,5,...``."""
    cut = ",".join(str(k) for k in ks)
    return [_TREC_NAME[f] if f in ("map", "mrr") else f"{_TREC_NAME[f]}.{cut}" for f in families]


class CompatTools:
    """The three UltraRAG tools, bound to the server's settings (roots, mode, clock)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # -- saving ---------------------------------------------------------------------------

    def _target(self, tool: str, save_path: str | None, mode: str | None) -> tuple[str, Path]:
        """Check ``save_path`` before any work: read-only mode, mode name, roots."""
        s = self.settings
        s.refuse_write(tool, "save_path")
        chosen = mode or ("timestamp" if s.ultrarag else "exact")
        if chosen not in ("timestamp", "exact"):
            raise UsageError(
                f"{tool}: save_path_mode {mode!r} (expected timestamp or exact)", command="mcp"
            )
        name = saved_name(str(save_path), chosen, s.clock().strftime("%Y%m%d_%H%M%S"))
        target = s.roots.resolve(name)
        return name, target

    def _save(
        self, target: tuple[str, Path] | None, eval_res: dict[str, Any], meta: dict[str, Any]
    ) -> None:
        """``eval_res`` as UltraRAG writes it (indent 4, UTF-8 kept), metadata in a sidecar."""
        if target is None:
            return
        from ragmeter.io.files import atomic_write

        name, _ = target
        progress.check()  # a cancelled call writes nothing
        path = self.settings.roots.for_writing(name)
        meta["saved_to"] = name
        side = path.with_name(path.name + ".meta.json")
        with atomic_write(path) as fh:
            fh.write(json.dumps(eval_res, indent=4, ensure_ascii=False, allow_nan=False))
        with atomic_write(side) as fh:
            fh.write(json.dumps(meta, indent=4, ensure_ascii=False, allow_nan=False))

    # -- tools ----------------------------------------------------------------------------

    def evaluate(
        self,
        pred_ls: list[str],
        gt_ls: list[list[str] | str],
        metrics: list[str] | None = None,
        save_path: str | None = None,
        profile: Literal["ultrarag", "squad", "flashrag"] = "ultrarag",
        save_path_mode: SaveMode | None = None,
    ) -> dict[str, Any]:
        """Score generated answers against gold answers (UltraRAG's evaluation.evaluate).

        pred_ls: one predicted answer per sample.
        gt_ls: one gold answer, or a list of acceptable gold answers, per sample.
        metrics: among acc, em, stringem, coverem, f1, rouge-1, rouge-2, rouge-l (default: all).
        save_path: also write eval_res to this JSON file (inside the server's roots).
        profile: normalisation and metric definitions: ultrarag (default), squad or flashrag.
        save_path_mode: timestamp (UltraRAG's <stem>_YYYYmmdd_HHMMSS.json) or exact.
        """
        from ragmeter.answers import evaluate

        target = self._target("evaluate", save_path, save_path_mode) if save_path else None
        if len(pred_ls) != len(gt_ls):
            raise UsageError(
                f"evaluate: pred_ls: {len(pred_ls)} items, gt_ls: {len(gt_ls)} "
                "(expected equal lengths)",
                command="mcp",
            )
        golds = [[g] if isinstance(g, str) else g for g in gt_ls]
        res = evaluate(pred_ls, golds, metrics=list(metrics or []) or None, profile=profile)
        eval_res = res.to_ultrarag_dict()
        meta = eval_res.pop("ragmeter")
        self._save(target, eval_res, meta)
        return {"eval_res": eval_res, "ragmeter": meta}

    def evaluate_trec(
        self,
        run_path: str,
        qrels_path: str,
        metrics: list[str] | None = None,
        ks: list[int] | None = None,
        save_path: str | None = None,
        save_path_mode: SaveMode | None = None,
    ) -> dict[str, Any]:
        """Score a TREC run against qrels with trec_eval 10.0 semantics (UltraRAG's evaluate_trec).

        run_path: TREC run file (qid Q0 docno rank score tag).
        qrels_path: TREC qrels file (qid iter docno grade).
        metrics: families among mrr, map, recall, ndcg, precision (default: all five).
        ks: cutoffs of recall, ndcg and precision (default: 1, 5, 10, 20, 50, 100).
        save_path: also write eval_res to this JSON file (inside the server's roots).
        save_path_mode: timestamp (UltraRAG's <stem>_YYYYmmdd_HHMMSS.json) or exact.
        """
        fams = _families(metrics, TREC_FAMILIES, "evaluate_trec")
        cut = _cutoffs(ks, "evaluate_trec")
        target = self._target("evaluate_trec", save_path, save_path_mode) if save_path else None
        eval_res, result = trec_ultrarag(self.settings, run_path, qrels_path, fams, cut)
        meta = {
            "version": __version__,
            "reference": "trec_eval 10.0",
            "metrics": fams,
            "ks": cut,
            "warnings": list(result.warnings),
        }
        self._save(target, eval_res, meta)
        return {"eval_res": eval_res, "ragmeter": meta}

    def evaluate_trec_pvalue(
        self,
        run_new_path: str,
        run_old_path: str,
        qrels_path: str,
        metrics: list[str] | None = None,
        ks: list[int] | None = None,
        n_resamples: int | None = None,
        save_path: str | None = None,
        seed: int = 42,
        alpha: float = 0.05,
        missing: Literal["fill", "error", "intersect"] = "fill",
        save_path_mode: SaveMode | None = None,
    ) -> dict[str, Any]:
        """Test whether a new TREC run differs from an old one, per metric (UltraRAG's
        evaluate_trec_pvalue): means, difference and a seeded paired randomization p-value.

        run_new_path: the new run (system A).
        run_old_path: the old run (system B).
        qrels_path: TREC qrels file.
        metrics: families among recall, ndcg, precision, map, mrr (default: all five).
        ks: cutoffs of recall, ndcg and precision (default: 1, 5, 10, 20, 50, 100).
        n_resamples: random sign flips (default 9999; exact when 2^n is not larger).
        save_path: also write eval_res to this JSON file (inside the server's roots).
        seed: seed of the random sign flips.
        alpha: significance level of "significant" (uncorrected p-value < alpha).
        missing: a query one run lacks: fill (0.0, UltraRAG's query set), error or intersect.
        save_path_mode: timestamp (UltraRAG's <stem>_YYYYmmdd_HHMMSS.json) or exact.
        """
        from ragmeter.retrieval import evaluate as trec_evaluate
        from ragmeter.stats import compare

        tool = "evaluate_trec_pvalue"
        fams = _families(metrics, PVALUE_FAMILIES, tool)
        cut = _cutoffs(ks, tool)
        n = 9999 if n_resamples is None else n_resamples
        if n < 1:
            raise UsageError(f"{tool}: n_resamples must be ≥ 1, not {n}", command="mcp")
        target = self._target(tool, save_path, save_path_mode) if save_path else None
        aliases: list[tuple[str, str]] = []  # (UltraRAG alias, trec_eval name)
        for f in fams:
            if f in ("map", "mrr"):
                aliases.append((f, _TREC_NAME[f]))
            else:
                aliases += [(_ALIAS[f].format(k=k), f"{_TREC_NAME[f]}.{k}") for k in cut]
        roots = self.settings.roots
        names: dict[Path, str] = {}
        files = {}
        for label, p in (("A", run_new_path), ("B", run_old_path), ("qrels", qrels_path)):
            files[label] = roots.resolve(p)
            names[files[label]] = p
        scores: dict[str, dict[str, dict[str, float]]] = {}
        with shown_as(names):
            for i, label in enumerate(("A", "B")):
                progress.report(i, 3, "scoring runs")
                progress.check()
                res = trec_evaluate(str(files["qrels"]), str(files[label]), [t for _, t in aliases])
                scores[label] = {alias: res.values(t) for alias, t in aliases}
            progress.report(2, 3, "randomization test")
            report = compare(
                scores,
                metrics=[a for a, _ in aliases],
                test="randomization",
                n_resamples=n,
                seed=seed,
                missing=missing,
                fill_value=0.0 if missing == "fill" else None,
                alpha=alpha,
                on_progress=_tests_done,
            )
        progress.report(3, 3, "done")
        eval_res = report.to_ultrarag("A", "B", alpha=alpha)
        meta = {
            "version": __version__,
            "test": "randomization",
            "seed": seed,
            "n_resamples": n,
            "alpha": alpha,
            "missing": missing,
            "A": run_new_path,
            "B": run_old_path,
        }
        self._save(target, eval_res, meta)
        return {"eval_res": eval_res, "ragmeter": meta}


def trec_ultrarag(
    settings: Settings, run_path: str, qrels_path: str, fams: Sequence[str], ks: Sequence[int]
) -> tuple[dict[str, float], Any]:
    """``ragmeter trec -m TREC_FAMILIES --format ultrarag --ks KS`` as a dict, and the result."""
    from ragmeter.retrieval import evaluate as trec_evaluate

    run_file = settings.roots.resolve(run_path)
    qrels_file = settings.roots.resolve(qrels_path)
    with shown_as({run_file: run_path, qrels_file: qrels_path}):
        result = trec_evaluate(
            str(qrels_file), str(run_file), _trec_measures(fams, ks), per_query=False
        )
        return json.loads(result.to_ultrarag()), result


def _tests_done(done: int, total: int) -> None:
    """Between two significance tests: stop a cancelled call; the third step's share is done."""
    progress.check()
    progress.report(2 + done / total, 3, "randomization test")


# UltraRAG's evaluate_trec families, beside PVALUE_FAMILIES; the bare name also names ragmeter's
# own retrieval measure families
__getattr__ = renamed_attributes(__name__, {"FAMILIES": "TREC_FAMILIES"}, globals())
