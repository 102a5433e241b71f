"""``--dry-run``: calls, tokens and USD before anything is sent (docs/judge.md).

For every metric: the samples, the number of calls (exact for fixed stages, a range for stages
whose size depends on an earlier reply, such as the statements of faithfulness), how many
first-stage calls are already in the cache, the estimated prompt and output tokens, the USD
range and whether ``--max-cost`` would stop the run. Cached calls cost nothing and are left
out of the USD range. Nothing is sent.

The stages counted here (prompts, first stages, batch sizes) are the pipelines' own
declarations (:mod:`ragmeter.judge.metrics.plan`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judge import prompts
from ragmeter.judge.config import JudgeConfig, is_local_endpoint
from ragmeter.judge.ledger import Price, PriceTable, count_text_tokens, estimate_prompt_tokens
from ragmeter.judge.metrics._common import Sample, blank, texts
from ragmeter.judge.metrics.plan import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCE,
    CONTEXT_ENTITY_RECALL,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_UTILIZATION,
    FAITHFULNESS,
    MAX_STATEMENTS,
    RUBRIC,
    Stage,
    StatementStages,
)
from ragmeter.judge.schemas import (
    claims_spec,
    entities_spec,
    questions_spec,
    rubric_score_spec,
    statements_spec,
    verdicts_spec,
)

__all__ = ["Estimate", "MetricEstimate", "estimate", "format_estimate", "merge_estimates"]

_SENTENCE = re.compile(r"[.!?。]+(?:\s|$)")


@dataclass
class _Planned:
    prompt_id: str
    lo: int
    hi: int
    prompt_tokens: int  # per call
    output_tokens: int  # per call
    first_stage: bool = False
    messages: list[dict[str, str]] | None = None  # exact messages (fixed stages)
    schema: dict[str, Any] | None = None


@dataclass
class MetricEstimate:
    metric: str
    samples: int = 0
    calls_lo: int = 0
    calls_hi: int = 0
    first_stage_calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    usd_lo: float | None = 0.0
    usd_hi: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "samples": self.samples,
            "calls": [self.calls_lo, self.calls_hi],
            "first_stage_calls": self.first_stage_calls,
            "cached": self.cached,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "usd": None
            if self.usd_lo is None
            else [round(self.usd_lo, 6), round(self.usd_hi or 0, 6)],
        }


@dataclass
class Estimate:
    metrics: list[MetricEstimate] = field(default_factory=list)
    total: MetricEstimate = field(default_factory=lambda: MetricEstimate("total"))
    model: str | None = None
    price: Price | None = None
    max_cost_usd: float | None = None

    @property
    def would_stop(self) -> bool | None:
        if self.max_cost_usd is None or self.total.usd_hi is None:
            return None
        return self.total.usd_hi > self.max_cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": [m.to_dict() for m in self.metrics],
            "total": self.total.to_dict(),
            "model": self.model,
            "price": None
            if self.price is None
            else {
                "input_per_mtok": self.price.input_per_mtok,
                "output_per_mtok": self.price.output_per_mtok,
                "as_of": self.price.as_of,
                "source": self.price.source,
            },
            "max_cost_usd": self.max_cost_usd,
            "would_stop": self.would_stop,
        }


def _sentences(text: str) -> int:
    return max(1, len(_SENTENCE.findall(text.strip() + " ")))


def _call(
    stage: Stage,
    values: dict[str, Any],
    *,
    items: int = 0,
    lo: int = 1,
    hi: int = 1,
    exact: bool = True,
    schema: dict[str, Any] | None = None,
) -> _Planned:
    prompt = prompts.get(stage.prompt_id)
    messages = prompt.render(values)
    return _Planned(
        stage.prompt_id,
        lo,
        hi,
        estimate_prompt_tokens(messages),
        prompt.estimate_output(values, items),
        stage.first,
        messages if exact else None,
        schema,
    )


def _statement_stages(
    stages: StatementStages,
    values: dict[str, Any],
    text: str,
    contexts: Sequence[str],
    extra: dict[str, Any],
) -> list[_Planned]:
    out = [_call(stages.extract, values, schema=statements_spec(MAX_STATEMENTS).schema)]
    if contexts:
        # the statement count is only known from the first reply: one sentence each at least,
        # two at most, within the extraction's limit
        m = _sentences(text)
        m_hi = min(MAX_STATEMENTS, 2 * m)
        batch = stages.verify.batch or 1
        stmt_tokens = count_text_tokens(text)
        ctx_block = prompts.Raw(
            "\n".join(prompts.block("context", c, n=i + 1) for i, c in enumerate(contexts))
        )
        probe = {**extra, "contexts": ctx_block, "statements": prompts.Raw("")}
        p2 = _call(stages.verify, probe, items=m, exact=False, lo=1, hi=math.ceil(m_hi / batch))
        p2.prompt_tokens += stmt_tokens + 12 * m
        out.append(p2)
    return out


def plan_calls(
    pipe: str, s: Sample, config: JudgeConfig, rubric_steps: dict[str, Sequence[str]]
) -> list[_Planned]:
    q = s.question or ""
    chunks = texts(s.contexts)
    per_chunk = config.per_chunk
    if pipe == "answer_correctness":
        if blank(s.reference) or blank(s.answer):
            return []
        return [
            _call(
                ANSWER_CORRECTNESS,
                {"question": q, "reference": s.reference, "answer": s.answer},
                schema=claims_spec().schema,
            )
        ]
    if pipe == "answer_relevance":
        if blank(s.answer) or blank(q):
            return []
        n = config.relevance_questions
        if config.independent:
            return [
                _call(
                    ANSWER_RELEVANCE,
                    {"answer": s.answer, "n": 1},
                    items=1,
                    lo=n,
                    hi=n,
                    exact=False,
                )
            ]
        return [
            _call(
                ANSWER_RELEVANCE,
                {"answer": s.answer, "n": n},
                items=n,
                schema=questions_spec(n).schema,
            )
        ]
    if pipe == "faithfulness":
        if blank(s.answer):
            return []
        return _statement_stages(
            FAITHFULNESS,
            {"question": q, "answer": s.answer},
            str(s.answer),
            chunks,
            {},
        )
    if pipe in ("context_precision", "context_utilization"):
        target = s.answer if pipe == "context_utilization" else s.reference
        key = "answer" if pipe == "context_utilization" else "reference"
        if not chunks or blank(target):
            return []
        stage = CONTEXT_UTILIZATION if pipe == "context_utilization" else CONTEXT_PRECISION
        size = 1 if per_chunk else stage.batch or 1
        out = []
        for start in range(0, len(chunks), size):
            sent = chunks[start : start + size]
            out.append(
                _call(
                    stage,
                    {"question": q, key: target, "chunks": prompts.numbered("chunk", sent)},
                    items=len(sent),
                    schema=verdicts_spec("usefulness", len(sent)).schema,
                )
            )
        return out
    if pipe == "context_recall":
        if blank(s.reference):
            return []
        return _statement_stages(
            CONTEXT_RECALL,
            {"question": q, "reference": s.reference},
            str(s.reference),
            chunks,
            {"question": q},
        )
    if pipe == "context_entity_recall":
        if blank(s.reference):
            return []
        entities = CONTEXT_ENTITY_RECALL
        out = [_call(entities.reference, {"text": s.reference}, schema=entities_spec().schema)]
        if chunks:
            if per_chunk:
                out.extend(
                    _call(entities.contexts, {"text": c}, schema=entities_spec().schema)
                    for c in chunks
                )
            else:
                out.append(
                    _call(
                        entities.contexts,
                        {"text": "\n".join(chunks)},
                        schema=entities_spec().schema,
                    )
                )
        return out
    if pipe in ("retrieval_answer", "retrieval_context"):
        ref = (
            s.reference
            if pipe == "retrieval_answer"
            else ("\n".join(texts(s.reference_contexts)) if s.reference_contexts else None)
        )
        if blank(ref):
            return []
        ref_sample = Sample(s.id, question=q, reference=ref, contexts=s.contexts)
        return plan_calls("context_recall", ref_sample, config, rubric_steps) + plan_calls(
            "context_precision", ref_sample, config, rubric_steps
        )
    if pipe.startswith("rubric:"):
        name = pipe.split(":", 1)[1]
        rubric = {r.name: r for r in config.rubrics}[name]
        for inp in rubric.inputs:
            if (inp == "contexts" and not chunks) or (inp != "contexts" and blank(getattr(s, inp))):
                return []
        steps = rubric.steps or tuple(rubric_steps.get(name) or ("step",) * 4)
        from ragmeter.judge.metrics.rubric import _inputs, _levels

        values = {
            "name": rubric.name,
            "steps": "\n".join(f"{i}. {t}" for i, t in enumerate(steps, 1)),
            "levels": _levels(rubric),
            "min": rubric.scale[0],
            "max": rubric.scale[1],
            "inputs": _inputs(rubric, s) or prompts.Raw(""),
        }
        return [
            _call(
                RUBRIC.score,
                values,
                items=len(steps),
                exact=bool(rubric.steps),
                schema=rubric_score_spec(len(steps), *rubric.scale).schema,
            )
        ]
    raise KeyError(pipe)


def estimate(
    samples: Sequence[Sample],
    metrics: Sequence[str],
    *,
    config: JudgeConfig,
    cache: Any = None,
    prices: PriceTable | None = None,
) -> Estimate:
    """The dry-run estimate; ``cache`` (a :class:`JudgeCache`) counts first-stage hits."""
    from ragmeter.judge.engine import plan_metrics
    from ragmeter.judge.runtime import Ctx, JudgeRuntime

    plan = plan_metrics(metrics, config.rubrics)
    prices = prices or PriceTable(
        config.prices, price_in=config.price_in, price_out=config.price_out
    )
    price = prices.resolve(config.model, local=is_local_endpoint(config.effective_base_url))
    rt = None
    if cache is not None:
        from ragmeter.judge.negotiation import Negotiation

        client = _NoClient(config.model or "", Negotiation.start(config.structured))
        rt = JudgeRuntime(config, client, cache=cache, prices=prices)
    est = Estimate(model=config.model, price=price, max_cost_usd=config.max_cost_usd)
    total = est.total

    def usd(pt: int, ot: int) -> float | None:
        if price is None:
            return None
        return pt * price.input_per_mtok / 1e6 + ot * price.output_per_mtok / 1e6

    for pipe in plan.pipelines:
        me = MetricEstimate(pipe)
        pt_lo = ot_lo = pt_hi = ot_hi = 0
        repeats = max(1, config.repeats)
        for s in samples:
            me.samples += 1
            for c in plan_calls(pipe, s, config, {}):
                cached = 0
                if c.first_stage:
                    me.first_stage_calls += c.hi * repeats
                    if rt is not None and c.messages is not None:
                        for r in range(repeats):
                            key, _ = rt._key(
                                c.messages,
                                rt.base_params(config.max_tokens),
                                c.schema,
                                prompts.get(c.prompt_id).ref,
                                Ctx(s.id, pipe, r),
                            )
                            if cache.get(key) is not None:
                                cached += 1
                me.cached += cached
                me.calls_lo += c.lo * repeats
                me.calls_hi += c.hi * repeats
                paid_lo = c.lo * repeats - cached
                paid_hi = c.hi * repeats - cached
                pt_lo += paid_lo * c.prompt_tokens
                ot_lo += paid_lo * c.output_tokens
                pt_hi += paid_hi * c.prompt_tokens
                ot_hi += paid_hi * c.output_tokens
        if pipe.startswith("rubric:"):
            rubric = {r.name: r for r in config.rubrics}[pipe.split(":", 1)[1]]
            if not rubric.steps:  # RUBRIC.steps: generated once per run, not per sample
                me.calls_lo += 1
                me.calls_hi += 1
        me.prompt_tokens, me.output_tokens = pt_hi, ot_hi
        me.usd_lo, me.usd_hi = usd(pt_lo, ot_lo), usd(pt_hi, ot_hi)
        est.metrics.append(me)
        total.samples = max(total.samples, me.samples)
        for attr in (
            "calls_lo",
            "calls_hi",
            "first_stage_calls",
            "cached",
            "prompt_tokens",
            "output_tokens",
        ):
            setattr(total, attr, getattr(total, attr) + getattr(me, attr))
        if total.usd_lo is not None and me.usd_lo is not None:
            total.usd_lo += me.usd_lo
            total.usd_hi = (total.usd_hi or 0.0) + (me.usd_hi or 0.0)
        else:
            total.usd_lo = total.usd_hi = None
    return est


class _NoClient:
    """Stands in for a client when only cache keys are computed: it never sends anything."""

    def __init__(self, model: str, negotiation: Any) -> None:
        self.model = model
        self.negotiation = negotiation

    async def complete(self, req: Any) -> Any:  # pragma: no cover - never called
        raise RuntimeError("the dry run sends nothing")

    async def aclose(self) -> None:
        return None


def merge_estimates(ests: Sequence[Estimate], config: JudgeConfig) -> Estimate:
    """One estimate from several groups (``--format graphrag``: questions and step families)."""
    out = Estimate(model=ests[0].model, price=ests[0].price, max_cost_usd=config.max_cost_usd)
    t = out.total
    for e in ests:
        out.metrics.extend(e.metrics)
        t.samples += e.total.samples
        for attr in (
            "calls_lo",
            "calls_hi",
            "first_stage_calls",
            "cached",
            "prompt_tokens",
            "output_tokens",
        ):
            setattr(t, attr, getattr(t, attr) + getattr(e.total, attr))
        if t.usd_lo is not None and e.total.usd_lo is not None:
            t.usd_lo += e.total.usd_lo
            t.usd_hi = (t.usd_hi or 0.0) + (e.total.usd_hi or 0.0)
        else:
            t.usd_lo = t.usd_hi = None
    return out


def _calls(m: MetricEstimate) -> str:
    return str(m.calls_lo) if m.calls_lo == m.calls_hi else f"{m.calls_lo}-{m.calls_hi}"


def _usd(m: MetricEstimate) -> str:
    if m.usd_lo is None:
        return "unknown"
    hi_v = m.usd_hi or 0.0
    digits = 2 if hi_v >= 0.1 else 6  # small runs still show what they cost
    lo, hi = f"{m.usd_lo:.{digits}f}", f"{hi_v:.{digits}f}"
    return lo if lo == hi else f"{lo}-{hi}"


def format_estimate(est: Estimate) -> str:
    """The dry-run table of docs/judge.md."""
    rows = [("metric", "samples", "calls", "cached", "prompt tok", "output tok", "USD (est.)")]
    for m in est.metrics:
        rows.append(
            (
                m.metric,
                f"{m.samples}",
                _calls(m),
                f"{m.cached}",
                f"{m.prompt_tokens:,}",
                f"{m.output_tokens:,}",
                _usd(m),
            )
        )
    t = est.total
    rows.append(
        (
            "total",
            "",
            _calls(t),
            f"{t.cached}",
            f"{t.prompt_tokens:,}",
            f"{t.output_tokens:,}",
            _usd(t),
        )
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    if est.price is None:
        lines.append(f"prices: {est.model} (unknown: USD cannot be estimated)")
    else:
        src = est.price.source
        as_of = f"as_of {est.price.as_of}" if est.price.as_of else src
        lines.append(f"prices: {est.model} ({as_of})")
    if est.max_cost_usd is not None:
        if est.would_stop is None:
            lines.append(
                f"max cost {est.max_cost_usd} USD: the price is unknown (the run would exit 2)"
            )
        elif est.would_stop:
            lines.append(
                f"max cost {est.max_cost_usd} USD: the budget would stop the run before the end"
            )
        else:
            lines.append(f"max cost {est.max_cost_usd} USD: within budget")
    return "\n".join(lines)
