"""``context_entity_recall``: reference entities also found in the contexts.

One call lists the named entities of the reference (shared across systems), one those of the
joined contexts (or, with ``per_chunk``, of each chunk, reused whenever the same chunk text
recurs). The score is |RE ∩ RCE| / |RE| on sets after matching.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from ragmeter import status as st
from ragmeter.judge import prompts
from ragmeter.judge.metrics._common import Options, Outcome, Sample, blank, single, texts
from ragmeter.judge.metrics.plan import CONTEXT_ENTITY_RECALL, Stage
from ragmeter.judge.runtime import Ctx, JudgeRuntime, Stop
from ragmeter.judge.schemas import entities_spec

__all__ = ["entity_recall", "judge_entity_recall", "normalize_entity"]

NAME = "context_entity_recall"


def _strip_punct(token: str) -> str:
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(token[end - 1]).startswith("P"):
        end -= 1
    return token[start:end]


def normalize_entity(text: str) -> str:
    """NFKC, ``casefold()``, punctuation around tokens removed, whitespace collapsed, and a
    leading ``the `` dropped.

    >>> normalize_entity("  The  Taj Mahal. ")
    'taj mahal'
    >>> normalize_entity("“Shah Jahan”"), normalize_entity("ＵＮＥＳＣＯ")
    ('shah jahan', 'unesco')
    """
    s = unicodedata.normalize("NFKC", text).casefold()
    tokens = [t for t in (_strip_punct(t) for t in s.split()) if t]
    s = " ".join(tokens)
    if s.startswith("the "):
        s = s[4:]
    return s


def entity_recall(
    *, reference: Iterable[str], contexts: Iterable[str], match: str = "normalized"
) -> float:
    """|RE ∩ RCE| / |RE| on sets; ``match="exact"`` compares the strings as given (RAGAS).

    >>> re_ = ["Taj Mahal", "Yamuna", "Agra", "1631", "Shah Jahan", "Mumtaz Mahal"]
    >>> round(entity_recall(reference=re_, contexts=["Taj Mahal", "Agra", "Shah Jahan",
    ...     "Mumtaz Mahal", "India"]), 4)
    0.6667
    >>> ref, ctx = ["Taj Mahal", "Agra"], ["taj mahal", "Agra"]
    >>> entity_recall(reference=ref, contexts=ctx)
    1.0
    >>> entity_recall(reference=ref, contexts=ctx, match="exact")
    0.5
    """
    if match not in ("normalized", "exact"):
        raise ValueError(f"match {match!r} (expected normalized or exact)")
    norm = normalize_entity if match == "normalized" else (lambda s: s)
    ref = {norm(e) for e in reference} - {""}
    if not ref:
        raise ValueError("no reference entities (the status is no_claims)")
    ctx = {norm(e) for e in contexts}
    return len(ref & ctx) / len(ref)


async def _entities(rt: JudgeRuntime, stage: Stage, text: str, ctx: Ctx) -> list[str]:
    out = await rt.call(prompts.get(stage.prompt_id), {"text": text}, entities_spec(), ctx)
    if not out.ok:
        raise Stop(out.status, out.detail)
    return [e.strip() for e in out.value.entities if e.strip()]


async def judge_entity_recall(rt: JudgeRuntime, sample: Sample, ctx: Ctx, opts: Options) -> Outcome:
    if blank(sample.reference):
        return single(NAME, st.NO_CLAIMS, "empty reference")
    chunks = texts(sample.contexts)
    try:
        ref_entities = await _entities(
            rt, CONTEXT_ENTITY_RECALL.reference, str(sample.reference), ctx
        )
        ref_set = {
            normalize_entity(e) if opts.entity_match == "normalized" else e for e in ref_entities
        } - {""}
        if not ref_set:
            return single(
                NAME, st.NO_CLAIMS, "no reference entities", explanation={"reference_entities": []}
            )
        if not chunks:
            return single(
                NAME,
                st.OK,
                "no contexts",
                0.0,
                {"reference_entities": ref_entities, "context_entities": []},
            )
        if opts.per_chunk:
            ctx_entities: list[str] = []
            for c in chunks:
                ctx_entities.extend(await _entities(rt, CONTEXT_ENTITY_RECALL.contexts, c, ctx))
        else:
            joined = "\n".join(chunks)
            ctx_entities = await _entities(rt, CONTEXT_ENTITY_RECALL.contexts, joined, ctx)
    except Stop as stop:
        return single(NAME, stop.status, stop.detail)
    value = entity_recall(reference=ref_entities, contexts=ctx_entities, match=opts.entity_match)
    return single(
        NAME,
        st.OK,
        None,
        value,
        {"reference_entities": ref_entities, "context_entities": ctx_entities},
    )
