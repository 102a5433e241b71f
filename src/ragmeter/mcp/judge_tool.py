"""The ``judge`` tool: LLM-judged metrics with the server's endpoint and the server's budget.

The endpoint, model, key, concurrency and limits come only from the server side (environment
variables and the ``judge:`` block of ``--config``), never from tool arguments, so a
prompt-injected client can neither send data to an endpoint of its choice nor spend on a model
of its choice. A client may lower the budget (``max_cost_usd``), never raise it above
``--judge-max-cost``. Without an endpoint the samples are ``needs_llm`` and the hint is in
``warnings``, exactly as ``ragmeter judge`` prints them. No SDK module is imported here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import UsageError
from ragmeter.mcp import progress
from ragmeter.mcp.paths import shown_as
from ragmeter.mcp.settings import Settings

__all__ = ["JudgeTool"]


class JudgeTool:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _config(self, budget: float, repeats: int) -> Any:
        from ragmeter.judge.cache import is_cache_url
        from ragmeter.judge.config import load_config_file, resolve_config

        s = self.settings
        loaded = load_config_file(s.config) if s.config is not None else None
        cfg = resolve_config(
            {"repeats": repeats, "max_cost_usd": budget},
            settings=loaded.settings if loaded else None,
        )
        if (
            cfg.cache_path is not None
            and not is_cache_url(cfg.cache_path)
            and not Path(cfg.cache_path).is_absolute()
        ):
            # the judge cache lives under the first root, like every file the server writes
            cfg = dataclasses.replace(cfg, cache_path=str(s.roots.first / cfg.cache_path))
        return cfg

    def judge(
        self,
        input_path: str,
        metrics: list[str],
        max_cost_usd: float | None = None,
        dry_run: bool = False,
        repeats: int = 1,
        format: Literal["ragmeter", "graphrag"] = "ragmeter",
        keys: list[str] | None = None,
        include_samples: bool = False,
        reference_path: str | None = None,
    ) -> dict[str, Any]:
        """LLM-as-judge metrics (faithfulness, answer relevance and correctness, context
        precision and recall...) with the server's configured endpoint (ragmeter judge).

        input_path: JSONL samples (id, question, answer, contexts, reference), or with
            format graphrag graphrag-eval per-question records (YAML, JSON or JSONL).
        metrics: judge metric names, e.g. faithfulness, answer_correctness, context_recall
            (empty with format graphrag: graphrag-eval's judged metrics).
        max_cost_usd: spend at most this much; capped at the server's --judge-max-cost.
        dry_run: only estimate calls, tokens and cost; send nothing.
        repeats: judge every sample this many times.
        format: ragmeter (judge samples) or graphrag (graphrag-eval records and aggregates).
        keys: field names of the input as FIELD=KEY pairs (question=query, ...).
        include_samples: add the per-sample records (capped at the server's row limit).
        reference_path: graphrag-eval reference templates joined to a responses file
            (format graphrag only).
        """
        import asyncio

        from ragmeter.judge.client import FatalJudgeError
        from ragmeter.judge.engine import aevaluate, plan_metrics

        s = self.settings
        if not dry_run:
            s.refuse_write("judge", "judging (the request cache)")
        if max_cost_usd is not None and max_cost_usd < 0:
            raise UsageError(f"max_cost_usd must be ≥ 0, not {max_cost_usd}", command="judge")
        if repeats < 1:
            raise UsageError(f"repeats must be ≥ 1, not {repeats}", command="judge")
        if format not in ("ragmeter", "graphrag"):
            raise UsageError(f"format {format!r} (expected ragmeter or graphrag)", command="judge")
        if format != "graphrag" and reference_path is not None:
            raise UsageError("reference_path needs format graphrag", command="judge")
        if format == "graphrag" and keys:
            raise UsageError("keys apply to format ragmeter only", command="judge")
        cap = s.judge_max_cost
        budget = cap if max_cost_usd is None else min(cap, max_cost_usd)
        cfg = self._config(budget, repeats)
        if format == "graphrag" and not metrics:
            from ragmeter.judge.graphrag import DEFAULT_METRICS

            metrics = list(DEFAULT_METRICS)
        plan = plan_metrics(metrics, cfg.rubrics)
        groups, gr = self._groups(input_path, reference_path, format, metrics, plan, cfg, keys)
        _check_price(cfg)
        if dry_run:
            from ragmeter.judge.estimate import estimate, merge_estimates

            ests = [estimate(g, m, config=cfg, cache=None) for g, m in groups]
            est = ests[0] if len(ests) == 1 else merge_estimates(ests, cfg)
            out = est.to_dict()
            out["budget_usd"] = budget
            return out

        total = sum(len(g) for g, _ in groups) or 1
        offset = [0]

        def on_progress(p: dict[str, Any]) -> None:
            progress.check()
            # every group reports its own done/total; the client sees one bar over all samples
            share = p["done"] / max(p["total"], 1)
            progress.report(offset[0] + share * len(current[0]), total, "judge")

        current: list[Any] = [()]

        async def run_all() -> list[Any]:
            out = []
            for samples, group_metrics in groups:
                current[0] = samples
                out.append(
                    await aevaluate(samples, group_metrics, config=cfg, on_progress=on_progress)
                )
                offset[0] += len(samples)
            return out

        try:
            results = asyncio.run(run_all())
        except FatalJudgeError as exc:
            raise UsageError(str(exc), command="judge") from None
        if gr is not None:
            from ragmeter.judge.graphrag import graphrag_output

            summary, records = graphrag_output(gr, results)
        else:
            (result,) = results
            summary, records = result.summary_json(), result.records
        out = dict(summary)
        out["warnings"] = list(dict.fromkeys(w for r in results for w in r.warnings))
        out["budget_usd"] = budget
        if include_samples:
            from ragmeter.mcp.tools import OwnTools

            out["samples"] = list(records)
            OwnTools(s)._cap(out, "samples", "judge")
        return out

    def _groups(
        self,
        input_path: str,
        reference_path: str | None,
        format: str,
        metrics: list[str],
        plan: Any,
        cfg: Any,
        keys: list[str] | None,
    ) -> tuple[list[tuple[Any, list[str]]], Any]:
        """``(samples, metrics)`` groups to judge, and the graphrag-eval input (or None)."""
        roots = self.settings.roots
        path = roots.resolve(input_path)
        shown = {path: input_path}
        if format == "graphrag":
            from ragmeter.judge.graphrag import judge_groups, read_graphrag

            ref = roots.resolve(reference_path) if reference_path is not None else None
            if ref is not None and reference_path is not None:
                shown[ref] = reference_path
            with shown_as(shown):
                gr = read_graphrag(path, reference=ref, pipelines=plan.pipelines)
            return judge_groups(gr, plan.pipelines), gr
        from ragmeter.io.judge import parse_key_map, read_samples, required_inputs

        with shown_as(shown):
            samples = read_samples(
                path,
                key_map=parse_key_map(keys or ()),
                required=required_inputs(plan.pipelines, {r.name: r.inputs for r in cfg.rubrics}),
            )
        return [(samples, metrics)], None


def _check_price(cfg: Any) -> None:
    """A budget needs a price: a remote model without one is refused, as ``ragmeter judge``
    refuses ``--max-cost`` without one (a local endpoint costs nothing)."""
    from ragmeter.judge.engine import llm_installed

    if not (cfg.configured and llm_installed(cfg)):
        return
    from ragmeter.judge.config import is_local_endpoint
    from ragmeter.judge.ledger import PriceTable

    table = PriceTable(cfg.prices, price_in=cfg.price_in, price_out=cfg.price_out)
    if table.resolve(cfg.model, local=is_local_endpoint(cfg.effective_base_url)) is None:
        raise UsageError(
            f"the server's judge budget needs a price for model {cfg.model!r} (price_in and "
            "price_out in the judge: block of the server's --config)",
            command="judge",
        )
