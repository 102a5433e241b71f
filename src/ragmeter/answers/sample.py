"""Scoring one sample: the empty-gold policy, every requested metric against each gold, and
the aggregate over golds (:class:`SampleScorer`); :mod:`ragmeter.answers.scoring` runs it over
a dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.answers.inputs import (
    Golds,
    compile_gold_regex,
)
from ragmeter.answers.lexical import (
    acc_per_gold,
    coverem_per_gold,
    em_per_gold,
    prf_per_gold,
    str_em_alce,
)
from ragmeter.answers.normalizers import normalize
from ragmeter.answers.options import Options
from ragmeter.answers.rouge_engine import (
    RougeEngine,
    RougeScore,
    aggregate_scores,
    parse_rouge_type,
)
from ragmeter.answers.rouge_pltrdy import UpstreamError, pltrdy_scores
from ragmeter.answers.tokenize import has_rouge_nonascii, unicode_tokens
from ragmeter.errors import InputError

__all__ = ["SampleScore", "SampleScorer"]

ROUGE_NONASCII = "rouge_nonascii"
ROUGE_UPSTREAM_ERROR = "rouge_upstream_error"
EMPTY_TEXT = "empty_text"
MISSING_PREDICTION = "missing_prediction"


@dataclass
class SampleScore:
    """The scores of one sample.

    ``status`` is ``ok`` when at least one metric was scored, else the shared reason
    (``no_gold``); ``statuses`` gives each metric's own status and ``values`` its value (``None``
    unless that status is ``ok``). ``flags`` are diagnostics that did not stop scoring.
    """

    status: str
    values: dict[str, float | None]
    flags: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    extra: dict[str, float | None] = field(default_factory=dict)
    empty_golds_dropped: int = 0
    groups_dropped: int = 0


def _agg(values: Sequence[float], how: str) -> float:
    if how == "mean":
        return sum(values) / len(values)
    return max(values)


class SampleScorer:
    """Scores samples under one set of resolved :class:`Options`.

    ``embed`` maps a text to its L2-normalised embedding (needed only for the semantic
    metrics); the caller encodes every distinct text in batches beforehand.
    """

    def __init__(self, options: Options, embed: Callable[[str], Any] | None = None) -> None:
        self.o = options
        self.embed = embed
        o = options
        self.outputs = o.outputs()
        self.prf = o.prf
        self.gold_metrics = o.gold_metrics
        self.rouge_types = o.rouge_types
        self.rouge_engine = None
        if self.rouge_types and o.profile != "flashrag":
            self.rouge_engine = RougeEngine(
                self.rouge_types, tokenizer=o.tokenizer, stem=o.stem, lsum_split=o.lsum_split
            )
        self._pltrdy_ns = [
            k for k in (parse_rouge_type(t) for t in self.rouge_types) if isinstance(k, int)
        ]
        self._pltrdy_l = "rouge-l" in self.rouge_types
        self.need_tokens = any(m in o.metrics for m in ("coverem", "f1", "precision", "recall"))
        self.need_tokens = self.need_tokens or ("acc" in o.metrics and o.profile == "squad")
        self.check_nonascii = self.rouge_engine is not None and o.tokenizer == "default"
        # squad ROUGE and the semantic metrics read raw text: skip normalising the prediction
        raw_only = {*self.rouge_types, "semantic-similarity", "qa-similarity"}
        self.need_p_norm = (
            any(m not in raw_only for m in o.metrics)
            or (bool(self.rouge_types) and o.profile == "ultrarag")
            or o.empty_gold == "abstain"
        )

    # -- helpers -------------------------------------------------------------------------------
    def _tokens(self, norm: str) -> list[str]:
        return norm.split() if self.o.tokenizer == "default" else unicode_tokens(norm)

    def score(
        self,
        prediction: str,
        golds: Golds,
        *,
        question: str | None = None,
        location: str | None = None,
    ) -> SampleScore:
        o = self.o
        profile, policy = o.profile, o.empty_gold
        p_norm = normalize(prediction, profile=profile) if self.need_p_norm else ""
        values: dict[str, float | None] = {}
        statuses: dict[str, str] = {}
        flags: list[str] = []
        extra: dict[str, float | None] = {}
        out = SampleScore(st.OK, values, flags, statuses, extra)

        raws: list[str] = []
        norms: list[str] = []
        empty: list[bool] = []
        # the empty-gold policy applies to the metrics that score golds one by one
        for g in golds.flat if self.gold_metrics else ():
            n = normalize(g, profile=profile)
            if not n:
                if policy == "drop":
                    out.empty_golds_dropped += 1
                    continue
                if policy == "error":
                    raise InputError(
                        f"gold answer {g!r} normalises to '' under the {profile} profile "
                        "(expected non-empty gold answers with --empty-gold error)",
                        location=location,
                    )
            raws.append(g)
            norms.append(n)
            empty.append(not n)

        if self.gold_metrics:
            if raws:
                self._score_golds(prediction, p_norm, raws, norms, empty, out)
            elif profile == "squad" and policy != "keep" and golds.given and not golds.flat:
                # SQuAD 2.0: an empty answer list is an unanswerable question; the official
                # script scores it against the empty answer, so only an answer that normalises
                # to "" is right (EM = F1 = 1), anything else scores 0
                if not self.need_p_norm:
                    p_norm = normalize(prediction, profile=profile)
                self._score_golds(prediction, p_norm, [""], [""], [True], out, abstain=True)
            else:
                reason = st.OK if (policy == "keep" and not golds.flat) else st.NO_GOLD
                for m in self.gold_metrics:
                    statuses[m] = reason
                    values[m] = 0.0 if reason == st.OK else None

        if "str-em-alce" in o.metrics:
            groups = [[normalize(a, profile=profile) for a in grp] for grp in golds.groups]
            score_, hit, dropped = str_em_alce(p_norm, groups)
            out.groups_dropped = dropped
            statuses["str-em-alce"] = st.OK if score_ is not None else st.NO_GOLD
            values["str-em-alce"] = score_
            extra["str_em_hit"] = hit

        if "qa-similarity" in o.metrics:
            q = question or ""
            if not q.strip() or not prediction.strip():
                values["qa-similarity"] = 0.0
                if EMPTY_TEXT not in flags:
                    flags.append(EMPTY_TEXT)
            else:
                values["qa-similarity"] = _cos(self.embed(q), self.embed(prediction))
            statuses["qa-similarity"] = st.OK

        outputs = self.outputs
        if list(values) != list(outputs):
            ordered = {m: values.get(m) for m in outputs}
            values.clear()
            values.update(ordered)
        for m in outputs:
            if m not in statuses:
                statuses[m] = st.OK
        if not any(s == st.OK for s in statuses.values()):
            out.status = next(iter(statuses.values()), st.NO_GOLD)
        return out

    def _score_golds(
        self,
        prediction: str,
        p_norm: str,
        raws: list[str],
        norms: list[str],
        empty: list[bool],
        out: SampleScore,
        *,
        abstain: bool = False,
    ) -> None:
        o = self.o
        profile = o.profile
        agg = o.agg
        values = out.values
        abstain = abstain or (o.empty_gold == "abstain" and any(empty))
        hit = 1.0 if not p_norm else 0.0  # abstain: an empty gold matches only an empty answer

        def fix(vals: list[float]) -> list[float]:
            if abstain:
                return [hit if e else v for v, e in zip(vals, empty, strict=True)]
            return vals

        metrics = o.metrics
        if self.need_tokens:
            p_tok = self._tokens(p_norm)
            g_toks = [self._tokens(n) for n in norms]
        else:
            p_tok, g_toks = [], []

        if "em" in metrics or "stringem" in metrics:
            if o.gold_regex:
                em = [1.0 if compile_gold_regex(g).fullmatch(p_norm) else 0.0 for g in raws]
            else:
                em = em_per_gold(p_norm, norms)
            em = fix(em)
            if "em" in metrics:
                values["em"] = _agg(em, agg["em"])
            if "stringem" in metrics:
                values["stringem"] = sum(em) / len(em)
        if "acc" in metrics:
            if o.gold_regex:
                acc = [1.0 if compile_gold_regex(g).search(p_norm) else 0.0 for g in raws]
            else:
                acc = acc_per_gold(profile, p_norm, norms, p_tok, g_toks)
            values["acc"] = _agg(fix(acc), agg["acc"])
        if "coverem" in metrics:
            values["coverem"] = _agg(fix(coverem_per_gold(profile, p_tok, g_toks)), agg["coverem"])
        if self.prf:
            prf = prf_per_gold(profile, p_tok, g_toks, p_norm, norms)
            if abstain:
                prf = [(hit, hit, hit) if e else v for v, e in zip(prf, empty, strict=True)]
            best = 0
            for i in range(1, len(prf)):
                if prf[i][2] > prf[best][2]:
                    best = i
            for idx, m in ((2, "f1"), (0, "precision"), (1, "recall")):
                if m not in self.prf:
                    continue
                how = agg[m]
                col = [v[idx] for v in prf]
                if how == "mean":
                    values[m] = sum(col) / len(col)
                elif profile == "flashrag":
                    values[m] = max(col)  # FlashRAG maximises P, R and F independently
                else:
                    values[m] = prf[best][idx]
        if self.rouge_types:
            self._score_rouge(prediction, p_norm, raws, norms, empty, hit, out, abstain)
        if "semantic-similarity" in metrics:
            sims = []
            for raw, e in zip(raws, empty, strict=True):
                if abstain and e:
                    sims.append(hit)
                elif not prediction.strip() or not raw.strip():
                    sims.append(0.0)
                    if EMPTY_TEXT not in out.flags:
                        out.flags.append(EMPTY_TEXT)
                else:
                    sims.append(_cos(self.embed(prediction), self.embed(raw)))
            values["semantic-similarity"] = _agg(sims, agg["semantic-similarity"])

    def _score_rouge(
        self, prediction, p_norm, raws, norms, empty, hit, out: SampleScore, abstain: bool
    ) -> None:
        o = self.o
        if o.profile == "flashrag":
            per_type: dict[str, list[float]] = {t: [] for t in self.rouge_types}
            failed = False
            for raw, e in zip(raws, empty, strict=True):
                if abstain and e:
                    for t in self.rouge_types:
                        per_type[t].append(hit)
                    continue
                try:
                    s = pltrdy_scores(prediction, raw, self._pltrdy_ns, self._pltrdy_l)
                except UpstreamError:
                    failed = True
                    for t in self.rouge_types:
                        per_type[t].append(0.0)
                    continue
                for t in self.rouge_types:
                    per_type[t].append(s["l" if t == "rouge-l" else parse_rouge_type(t)])
            if failed:
                # where FlashRAG loses ROUGE, the whole sample scores 0.0 (docs/answers.md, ROUGE)
                out.flags.append(ROUGE_UPSTREAM_ERROR)
                for t in per_type:
                    out.values[t] = 0.0
                return
            for t, vals in per_type.items():
                out.values[t] = _agg(vals, o.agg[t])
            return
        if o.profile == "ultrarag":
            pred_text, gold_texts = p_norm, norms
        else:
            pred_text, gold_texts = prediction, raws
        if self.check_nonascii and (
            has_rouge_nonascii(pred_text) or any(has_rouge_nonascii(g) for g in gold_texts)
        ):
            out.flags.append(ROUGE_NONASCII)
        rows = self.rouge_engine.per_gold(pred_text, gold_texts)
        if abstain:
            full = RougeScore(hit, hit, hit)
            rows = [
                tuple(full for _ in self.rouge_types) if e else r
                for r, e in zip(rows, empty, strict=True)
            ]
        for i, t in enumerate(self.rouge_types):
            out.values[t] = aggregate_scores([r[i] for r in rows], o.agg[t])[2]


def _cos(a: Any, b: Any) -> float:
    return float(a @ b)
