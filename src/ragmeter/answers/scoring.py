"""Scoring one sample, and a whole evaluation (docs/answers.md).

:class:`SampleScorer` applies the empty-gold policy, computes every requested metric against
each gold and aggregates over golds; :func:`evaluate` runs it over a dataset and returns an
:class:`~ragmeter.answers.result.AnswersResult`. No file I/O and no printing here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragmeter.answers.inputs import (
    Golds,
    coerce_golds,
    coerce_id,
    coerce_prediction,
)
from ragmeter.answers.normalizers import normalize
from ragmeter.answers.options import resolve_options
from ragmeter.answers.rouge_engine import (
    RougeEngine,
    RougeScore,
    aggregate_scores,
    parse_rouge_type,
)
from ragmeter.answers.rouge_pltrdy import UpstreamError, pltrdy_prf
from ragmeter.answers.sample import (  # the flag names stay importable from here
    EMPTY_TEXT,  # noqa: F401
    MISSING_PREDICTION,
    ROUGE_NONASCII,  # noqa: F401
    ROUGE_UPSTREAM_ERROR,  # noqa: F401
    SampleScore,
    SampleScorer,
)
from ragmeter.errors import InputError, UsageError

__all__ = ["SampleScore", "SampleScorer", "evaluate", "rouge", "score"]


# -- public API --------------------------------------------------------------------------------
def score(
    prediction: Any,
    golds: Any,
    *,
    metrics: Sequence[str] | str | None = None,
    profile: str = "squad",
    question: str | None = None,
    choices: Sequence[Any] | None = None,
    tokenizer: str | None = None,
    stem: bool | None = None,
    agg: str | Mapping[str, str] | Sequence[str] | None = None,
    empty_gold: str | None = None,
    gold_regex: bool = False,
    lsum_split: str = "newline",
    embedder: Any = None,
    embedder_path: str | None = None,
    device: str | None = None,
) -> SampleScore:
    """Score one prediction against its gold answers.

    Parameters
    ----------
    prediction : str or None
        The generated answer (``None`` is scored as ``""`` and flagged ``missing_prediction``).
    golds : str or list
        Gold answers: a string, a list of strings (numbers and booleans are converted with
        ``str()``), or a list of alias lists (answer groups for ``str-em-alce``).
    metrics : list of str, optional
        Metric names (docs/answers.md); the profile's default list if omitted.
    profile : {"squad", "ultrarag", "flashrag"}, default "squad"
    tokenizer, stem, agg, empty_gold, gold_regex, lsum_split
        As the command-line options; ``None`` means the profile's default.

    Returns
    -------
    SampleScore
        ``status``, ``values`` (``precision`` and ``recall`` come with ``f1``) and ``flags``.

    Examples
    --------
    >>> s = score("December 14, 1973", ["14 December 1972 UTC", "December 1972"],
    ...           metrics=["em", "f1", "rouge-l"])
    >>> s.status, s.flags
    ('ok', [])
    >>> s.values  # doctest: +NORMALIZE_WHITESPACE
    {'em': 0.0, 'f1': 0.5714285714285715, 'precision': 0.6666666666666666, 'recall': 0.5,
     'rouge-l': 0.4}
    >>> score("anything", ["The"]).status
    'no_gold'
    """
    opts = resolve_options(
        metrics,
        profile=profile,
        tokenizer=tokenizer,
        stem=stem,
        agg=agg,
        empty_gold=empty_gold,
        gold_regex=gold_regex,
        lsum_split=lsum_split,
    )
    text, missing = coerce_prediction(prediction, location="prediction")
    gold = coerce_golds(golds, choices=choices, key="golds", location="golds")
    embed = None
    if opts.semantic:
        from ragmeter.answers.semantic import resolve_embedder

        emb = resolve_embedder(embedder, path=embedder_path, device=device)
        texts = [text, *gold.flat, *([question] if question else [])]
        embed = emb.lookup(texts)
    result = SampleScorer(opts, embed).score(text, gold, question=question)
    if missing:
        result.flags.insert(0, MISSING_PREDICTION)
    return result


def rouge(
    prediction: str,
    golds: str | Sequence[str],
    *,
    types: Sequence[str] = ("rouge-1", "rouge-2", "rouge-l", "rouge-lsum"),
    profile: str = "squad",
    tokenizer: str = "default",
    stem: bool | None = None,
    agg: str = "max",
    lsum_split: str = "newline",
) -> dict[str, RougeScore]:
    """ROUGE of one prediction against its golds, per type (docs/answers.md, "Metric definitions").

    ``squad`` is rouge-score 0.1.2 on the raw texts (stemming off by default), ``ultrarag``
    rouge-score on UltraRAG-normalised texts with Porter stemming, ``flashrag`` pltrdy rouge 1.0.1
    (its ``p``, ``r`` and ``f``; where pltrdy raises on any gold, every type is 0.0). ``agg="max"``
    keeps, per type, the first gold with the highest F (rouge-score ``score_multi``).

    Returns
    -------
    dict
        ``{type: RougeScore(precision, recall, fmeasure)}``.

    Examples
    --------
    >>> r = rouge("the cat sat", ["the cat sat down", "a dog"], types=("rouge-1", "rouge-l"))
    >>> r["rouge-1"]
    RougeScore(precision=1.0, recall=0.75, fmeasure=0.8571428571428571)
    """
    if isinstance(golds, str):
        golds = [golds]
    types = tuple(types)
    opts = resolve_options(
        types, profile=profile, tokenizer=tokenizer, stem=stem, agg=agg, lsum_split=lsum_split
    )
    if not all(t.startswith("rouge-") for t in opts.metrics):
        raise UsageError(
            "rouge() computes ROUGE types only (rouge-1 … rouge-9, rouge-l, rouge-lsum)"
        )
    golds = list(golds)
    if not golds:
        return {t: RougeScore(0.0, 0.0, 0.0) for t in opts.metrics}
    if profile == "flashrag":
        ns = [k for k in (parse_rouge_type(t) for t in opts.metrics) if isinstance(k, int)]
        per = []
        for g in golds:
            try:
                per.append(pltrdy_prf(prediction, g, ns, "rouge-l" in opts.metrics))
            except UpstreamError:  # the whole sample scores 0.0, as in score()
                return {t: RougeScore(0.0, 0.0, 0.0) for t in opts.metrics}
        out = {}
        for t in opts.metrics:
            key = "l" if t == "rouge-l" else parse_rouge_type(t)
            out[t] = aggregate_scores([RougeScore(*s[key]) for s in per], agg)
        return out
    engine = RougeEngine(
        opts.metrics, tokenizer=opts.tokenizer, stem=opts.stem, lsum_split=lsum_split
    )
    if profile == "ultrarag":
        prediction = normalize(prediction, profile="ultrarag")
        golds = [normalize(g, profile="ultrarag") for g in golds]
    rows = engine.per_gold(prediction, golds)
    return {t: aggregate_scores([r[i] for r in rows], agg) for i, t in enumerate(opts.metrics)}


def evaluate(
    predictions: Sequence[Any],
    golds: Sequence[Any],
    *,
    metrics: Sequence[str] | str | None = None,
    profile: str = "squad",
    ids: Sequence[Any] | None = None,
    questions: Sequence[Any] | None = None,
    choices: Sequence[Any] | None = None,
    tokenizer: str | None = None,
    stem: bool | None = None,
    agg: str | Mapping[str, str] | Sequence[str] | None = None,
    empty_gold: str | None = None,
    gold_regex: bool = False,
    lsum_split: str = "newline",
    embedder: Any = None,
    embedder_path: str | None = None,
    device: str | None = None,
    progress: Callable[[int], None] | None = None,
):
    """Score a dataset of predictions against gold answers (docs/answers.md, "Python API").

    Parameters
    ----------
    predictions : sequence
        One answer per sample (``None`` is scored as ``""`` and counted).
    golds : sequence
        One gold value per sample: a string, a list, or a list of alias lists.
    metrics : list of str, optional
        Metric names; the profile's default list if omitted (squad: em, f1).
    profile : {"squad", "ultrarag", "flashrag"}, default "squad"
    ids : sequence, optional
        Sample ids (strings or integers, unique); default 0, 1, 2, ...
    questions : sequence, optional
        Needed by ``qa-similarity``.
    choices : sequence, optional
        Per-sample choice lists: integer golds index them (multiple choice).
    tokenizer, stem, agg, empty_gold, gold_regex, lsum_split, embedder_path, device
        As the command-line options; ``None`` means the profile's default.
    embedder : optional
        An object with ``encode(list[str]) -> ndarray`` of L2-normalised rows; default
        :func:`~ragmeter.answers.load_minilm` when a semantic metric is asked for.
    progress : callable, optional
        Called with the number of samples scored so far, now and then.

    Returns
    -------
    AnswersResult
        ``per_sample`` (columns in input order), ``avg`` (means over ``ok`` samples), ``meta``,
        ``to_ultrarag_dict()``, ``rows()``, and the long table of :class:`~ragmeter.Result`.

    Examples
    --------
    >>> res = evaluate(["December 14, 1973", "Obama"],
    ...                [["December 1972"], ["Barack Obama", "Obama"]],
    ...                metrics=["em", "f1"], profile="ultrarag")
    >>> res.per_sample["f1"], res.avg["em"]
    ([0.4, 1.0], 0.5)
    """
    from ragmeter.answers.result import build_result

    opts = resolve_options(
        metrics,
        profile=profile,
        tokenizer=tokenizer,
        stem=stem,
        agg=agg,
        empty_gold=empty_gold,
        gold_regex=gold_regex,
        lsum_split=lsum_split,
    )
    n = len(predictions)
    if len(golds) != n:
        raise UsageError(
            f"{len(golds)} gold values for {n} predictions (expected one per prediction)"
        )
    if n == 0:
        raise UsageError("no samples to evaluate (expected at least one prediction)")
    if ids is None:
        ids = list(range(n))
    elif len(ids) != n:
        raise UsageError(f"{len(ids)} ids for {n} predictions (expected one per prediction)")
    if "qa-similarity" in opts.metrics and questions is None:
        raise UsageError("qa-similarity needs the questions (pass questions=...)")
    for name, seq in (("questions", questions), ("choices", choices)):
        if seq is not None and len(seq) != n:
            raise UsageError(f"{len(seq)} {name} for {n} predictions (expected one per prediction)")

    clean_ids: list[str | int] = []
    seen: dict[str, int] = {}
    texts: list[str] = []
    missing: list[bool] = []
    gold_objs: list[Golds] = []
    qs: list[str | None] = []
    for i in range(n):
        sid = coerce_id(ids[i], location=f"sample {i}")
        key = str(sid)
        if key in seen:
            raise InputError(
                f"sample id {key!r} appears twice (samples {seen[key]} and {i}; "
                "expected unique ids)"
            )
        seen[key] = i
        clean_ids.append(sid)
        where = {"location": f"sample {key!r}"}
        text, miss = coerce_prediction(predictions[i], **where)
        texts.append(text)
        missing.append(miss)
        gold_objs.append(
            coerce_golds(
                golds[i],
                choices=choices[i] if choices is not None else None,
                key="golds",
                **where,
            )
        )
        if questions is not None:
            q = questions[i]
            qs.append(None if q is None else coerce_prediction(q, **where)[0])
        else:
            qs.append(None)

    embed = None
    embedder_meta = None
    if opts.semantic:
        from ragmeter.answers.semantic import resolve_embedder

        emb = resolve_embedder(embedder, path=embedder_path, device=device)
        pool = [*texts, *(g for go in gold_objs for g in go.flat), *(q for q in qs if q)]
        embed = emb.lookup(pool)
        embedder_meta = emb.metadata()

    scorer = SampleScorer(opts, embed)
    scores: list[SampleScore] = []
    step = max(1, n // 100)
    for i in range(n):
        s = scorer.score(
            texts[i], gold_objs[i], question=qs[i], location=f"sample {str(clean_ids[i])!r}"
        )
        if missing[i]:
            s.flags.insert(0, MISSING_PREDICTION)
        scores.append(s)
        if progress is not None and (i + 1) % step == 0:
            progress(i + 1)
    if progress is not None:
        progress(n)
    return build_result(opts, clean_ids, scores, embedder=embedder_meta)
