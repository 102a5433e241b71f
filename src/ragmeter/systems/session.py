"""Calling one live system for every gold unit the configured tasks need.

Order (docs/systems.md): ``retrieve`` first, for the retrieval queries and for the QA pairs
that ``answer`` needs contexts for; then ``answer`` with the top retrieved documents (their text
looked up in ``dataset.corpus`` when given); then ``extract_entities`` and ``classify`` per gold
sample and ``link`` per gold mention. Each method's results and per-unit errors are kept by
unit id: the qid (retrieve, answer), the sample id (extract_entities, classify) or the gold
mention id (link).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.datasets.gold import GoldSet
from ragmeter.datasets.views import units
from ragmeter.systems.cache import CallCache
from ragmeter.systems.calls import ErrorBudget, MethodStats, run_method
from ragmeter.systems.loader import LiveSystem
from ragmeter.systems.protocol import METHOD_TASKS

__all__ = [
    "ANSWER_CONTEXTS",
    "RETRIEVE_K",
    "SystemCalls",
    "answer_contexts",
    "call_system",
    "plan_inputs",
]

RETRIEVE_K = 100
"""Documents asked of ``retrieve`` per question: the depth of the common R@100 cut-off."""

ANSWER_CONTEXTS = 5
"""Top retrieved documents handed to ``answer`` (the grounded task's default k)."""


@dataclass
class SystemCalls:
    """Everything one live system returned in one evaluation."""

    name: str
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # method -> unit -> value
    errors: dict[str, dict[str, str]] = field(default_factory=dict)  # method -> unit -> reason
    stats: dict[str, MethodStats] = field(default_factory=dict)
    inputs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def errors_for_task(self, task: str) -> dict[str, str]:
        """Unit id → reason for the units of ``task`` whose call failed."""
        for method, tasks in METHOD_TASKS.items():
            if task in tasks:
                return dict(self.errors.get(method, {}))
        return {}

    def stats_dict(self) -> dict[str, dict[str, Any]]:
        return {m: s.to_dict() for m, s in self.stats.items()}


def _question_units(gold: GoldSet, tasks: Sequence[str]) -> dict[str, Any]:
    """QA units (by qid) of the answer-reading tasks among ``tasks``, in file order."""
    out: dict[str, Any] = {}
    for task in METHOD_TASKS["answer"]:
        if task in tasks:
            for u in units(gold, task):
                out.setdefault(u.id, u)
    return out


def plan_inputs(
    live: LiveSystem, gold: GoldSet, tasks: Sequence[str], skip: set[str] = frozenset()
) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, str]]]:
    """Arguments per method and unit, and units that cannot be called (no text in the gold).

    ``answer`` inputs are completed later with the retrieved contexts. ``skip`` names methods
    whose outputs come from files.
    """
    inputs: dict[str, dict[str, dict[str, Any]]] = {}
    unusable: dict[str, dict[str, str]] = {}
    has = {m for m in live.methods if m not in skip}

    def want(method: str) -> bool:
        return method in has and any(t in tasks for t in METHOD_TASKS[method])

    qa_units = _question_units(gold, tasks) if want("answer") else {}
    if "retrieve" in has and (want("retrieve") or qa_units):
        queries: dict[str, dict[str, Any]] = {}
        wanted = [u.id for u in units(gold, "retrieval")] if want("retrieve") else []
        for qid in dict.fromkeys([*wanted, *qa_units]):
            pair = gold.qa.get(qid)
            question = pair[1].question if pair else None
            if question is None:
                unusable.setdefault("retrieve", {})[qid] = (
                    f"the gold set has no question text for {qid!r} (expected qa_pairs[].question)"
                )
                continue
            queries[qid] = {"question": question, "k": RETRIEVE_K}
        inputs["retrieve"] = queries
    if qa_units:
        inputs["answer"] = {}
        for qid, u in qa_units.items():
            if u.qa.question is None:
                unusable.setdefault("answer", {})[qid] = (
                    f"the gold set has no question text for {qid!r} (expected qa_pairs[].question)"
                )
                continue
            inputs["answer"][qid] = {"question": u.qa.question, "contexts": []}
    for method, task in (("extract_entities", "ner"), ("classify", "classification")):
        if want(method):
            inputs[method] = {}
            for u in units(gold, task):
                if u.sample.text is None:
                    unusable.setdefault(method, {})[u.id] = (
                        f"gold sample {u.id!r} has no text (expected text)"
                    )
                    continue
                inputs[method][u.id] = {"text": u.sample.text}
    if want("link"):
        inputs["link"] = {}
        for u in units(gold, "linking"):
            link, text = u.item, u.sample.text
            mention = link.mention
            if mention is None and text is not None and link.start is not None:
                mention = text[link.start : link.end]
            if mention is None:
                unusable.setdefault("link", {})[u.id] = (
                    f"gold mention {u.id!r} has no mention text (expected mention or start/end)"
                )
                continue
            inputs["link"][u.id] = {"mention": mention, "context": text or ""}
    return inputs, unusable


def answer_contexts(
    ranked: Sequence[Sequence[Any]], corpus: Mapping[str, Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    out = []
    for doc, score in ranked[:ANSWER_CONTEXTS]:
        ctx: dict[str, Any] = {"id": doc, "score": score}
        passage = (corpus or {}).get(doc)
        if passage is not None:
            ctx["text"] = passage["text"]
            if passage.get("title") is not None:
                ctx["title"] = passage["title"]
        out.append(ctx)
    return out


def call_system(
    live: LiveSystem,
    gold: GoldSet,
    tasks: Sequence[str],
    cache: CallCache,
    *,
    corpus: Mapping[str, Mapping[str, Any]] | None = None,
    skip: set[str] = frozenset(),
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> SystemCalls:
    """Call every method the tasks need; raises TooManyErrors past ``max_errors``.

    ``progress(method, total)`` returns the callback that advances that method's bar.
    """
    inputs, unusable = plan_inputs(live, gold, tasks, skip)
    out = SystemCalls(live.name, inputs=inputs)
    total = sum(len(v) for v in inputs.values())
    limit = live.max_errors if live.max_errors is not None else max(1, total * 5 // 100)
    budget = ErrorBudget(limit)
    for method, errs in unusable.items():
        out.errors.setdefault(method, {}).update(errs)
    for method in ("retrieve", "answer", "extract_entities", "classify", "link"):
        if method not in inputs:
            continue
        todo = inputs[method]
        if method == "answer":
            retrieved = out.results.get("retrieve", {})
            failed = out.errors.get("retrieve", {})
            ready: dict[str, dict[str, Any]] = {}
            for qid, args in todo.items():
                if "retrieve" in inputs and qid in failed:
                    out.errors.setdefault("answer", {})[qid] = failed[qid]
                    continue
                ranked = retrieved.get(qid, [])
                ready[qid] = {**args, "contexts": answer_contexts(ranked, corpus)}
            todo = inputs["answer"] = ready
        advance = progress(method, len(todo)) if progress else (lambda n: None)
        results, errors, stats = run_method(live, method, todo, cache, budget, progress=advance)
        out.results[method] = results
        out.errors.setdefault(method, {}).update(errors)
        out.stats[method] = stats
    return out
