"""Stages shared by several metrics: statement extraction and verification against contexts.

Verification sends statements in batches (:data:`~ragmeter.judge.metrics.plan.STATEMENT_BATCH`,
docs/judge.md) and, when
``max_input_tokens`` is configured, splits the contexts into consecutive groups that fit; every
statement is then checked against every group and the group verdicts are combined.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.judge import prompts
from ragmeter.judge.ledger import count_text_tokens, estimate_prompt_tokens
from ragmeter.judge.metrics._common import batches
from ragmeter.judge.metrics.plan import MAX_STATEMENTS, STATEMENT_BATCH, Stage
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop
from ragmeter.judge.schemas import statements_spec, verdicts_spec

__all__ = ["STATEMENT_BATCH", "context_groups", "extract_statements", "verify"]


async def extract_statements(
    rt: JudgeRuntime, stage: Stage, values: dict[str, Any], ctx: Ctx
) -> list[str]:
    """Stage 1: the statements of a text; raises :class:`Stop` on a judge failure."""
    out = await rt.call(prompts.get(stage.prompt_id), values, statements_spec(MAX_STATEMENTS), ctx)
    if not out.ok:
        raise Stop(out.status, out.detail)
    return [s.strip() for s in out.value.statements]


def context_groups(
    rt: JudgeRuntime,
    prompt_id: str,
    values: dict[str, Any],
    contexts: Sequence[str],
    statements: Sequence[str],
) -> list[range]:
    """Consecutive context ranges whose request fits ``max_input_tokens`` (one range if unset)."""
    limit = rt.config.max_input_tokens
    if limit is None or not contexts:
        return [range(len(contexts))]
    prompt = prompts.get(prompt_id)
    base = estimate_prompt_tokens(
        prompt.render(
            {
                **values,
                "contexts": prompts.Raw(""),
                "statements": prompts.numbered("statement", statements),
            }
        )
    )
    groups: list[range] = []
    start, used = 0, base
    for i, c in enumerate(contexts):
        cost = count_text_tokens(prompts.block("context", c, n=i + 1)) + 1
        if base + cost > limit:
            raise Stop("refused", "input too long")
        if used + cost > limit and i > start:
            groups.append(range(start, i))
            start, used = i, base
        used += cost
    groups.append(range(start, len(contexts)))
    return groups


async def verify(
    rt: JudgeRuntime,
    stage: Stage,
    values: dict[str, Any],
    contexts: Sequence[str],
    statements: Sequence[str],
    ctx: Ctx,
) -> list[list[Any]]:
    """Stage 2: for each statement, the verdict objects of every context group (in order)."""
    prompt = prompts.get(stage.prompt_id)
    kind = stage.kind or ""
    per_statement: list[list[Any]] = [[] for _ in statements]
    for batch in batches(len(statements), stage.batch or STATEMENT_BATCH):
        batch_statements = [statements[i] for i in batch]
        for group in context_groups(rt, stage.prompt_id, values, contexts, batch_statements):
            ctx_block = prompts.Raw(
                "\n".join(prompts.block("context", contexts[i], n=i + 1) for i in group)
                or "(no contexts)"
            )
            out = await rt.call(
                prompt,
                {
                    **values,
                    "contexts": ctx_block,
                    "statements": prompts.numbered("statement", batch_statements),
                },
                _spec(kind, len(batch_statements), group),
                ctx,
                items=len(batch_statements),
            )
            if not out.ok:
                raise Stop(out.status, out.detail)
            by_index = {v.index: v for v in out.value.verdicts}
            for j, i in enumerate(batch):
                per_statement[i].append(by_index[j + 1])
    return per_statement


def _spec(kind: str, n: int, group: range) -> Any:
    spec = verdicts_spec(kind, n, n_contexts=group.stop if len(group) else 0)
    lo = group.start + 1

    def check(obj: Any) -> list[str]:
        errs = spec.check(obj)
        if errs:
            return errs
        for v in obj.verdicts:
            bad = [e for e in v.evidence if e < lo]
            if bad:
                return [
                    f"verdict {v.index}: evidence {bad[0]} "
                    f"is not a context number {lo}..{group.stop}"
                ]
        return []

    from dataclasses import replace

    return replace(spec, check=check)
