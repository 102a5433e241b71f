"""``ragmeter answers --verify-rouge``: compare ragmeter's ROUGE with the reference on real data.

For ``squad`` and ``ultrarag`` the reference is Google's rouge-score 0.1.2 (with ragmeter's
``unicode`` tokenizer plugged into its tokenizer hook when that tokenizer is active); for
``flashrag`` it is pltrdy ``rouge`` 1.0.1. Every (prediction, gold) pair is scored by both, on
the texts the profile feeds (raw, or UltraRAG-normalised), and P, R and F must be equal bit for
bit. The references are test dependencies, imported only here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ragmeter.answers.normalizers import normalize
from ragmeter.answers.options import Options
from ragmeter.answers.rouge_engine import RougeEngine, parse_rouge_type
from ragmeter.answers.rouge_pltrdy import UpstreamError, pltrdy_scores
from ragmeter.errors import UsageError

__all__ = ["VerifyReport", "verify_rouge"]


@dataclass
class VerifyReport:
    reference: str
    pairs: int = 0
    values: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _rs_name(t: str) -> str:
    k = parse_rouge_type(t)
    return (
        {"l": "rougeL", "lsum": "rougeLsum"}.get(k, f"rouge{k}")
        if isinstance(k, str)
        else f"rouge{k}"
    )


def verify_rouge(
    predictions: Sequence[str], golds: Sequence[Sequence[str]], options: Options, *, limit: int = 5
) -> VerifyReport:
    """Score every pair with ragmeter and with the reference; list the first differences."""
    types = options.rouge_types
    if not types:
        raise UsageError("--verify-rouge needs at least one ROUGE metric (-m rouge-l, ...)")
    if options.profile == "flashrag":
        return _verify_pltrdy(predictions, golds, types, limit)
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise UsageError(
            "--verify-rouge needs rouge-score 0.1.2 (pip install rouge-score==0.1.2)"
        ) from None
    engine = RougeEngine(
        types, tokenizer=options.tokenizer, stem=options.stem, lsum_split=options.lsum_split
    )
    tokenizer = None
    if options.tokenizer == "unicode":

        class _Unicode:
            def tokenize(self, text: str) -> list[str]:
                return engine.tokens(text)

        tokenizer = _Unicode()
    names = [_rs_name(t) for t in types]
    scorer = rouge_scorer.RougeScorer(
        names,
        use_stemmer=options.stem,
        split_summaries=options.lsum_split == "nltk",
        tokenizer=tokenizer,
    )
    report = VerifyReport("rouge-score 0.1.2")
    ultrarag = options.profile == "ultrarag"
    for i, (pred, gs) in enumerate(zip(predictions, golds, strict=True)):
        p = normalize(pred, profile="ultrarag") if ultrarag else pred
        g_texts = [normalize(g, profile="ultrarag") if ultrarag else g for g in gs]
        ours = engine.per_gold(p, g_texts)
        for j, g in enumerate(g_texts):
            ref = scorer.score(g, p)
            report.pairs += 1
            for t, name, mine in zip(types, names, ours[j], strict=True):
                theirs = ref[name]
                report.values += 3
                if tuple(mine) != tuple(theirs) and len(report.mismatches) < limit:
                    report.mismatches.append(
                        f"sample {i}, gold {j}, {t}: ragmeter {tuple(mine)} != rouge-score "
                        f"{tuple(theirs)}"
                    )
    return report


def _verify_pltrdy(predictions, golds, types, limit) -> VerifyReport:
    try:
        from rouge import Rouge
    except ImportError:
        raise UsageError(
            "--verify-rouge needs pltrdy rouge 1.0.1 (pip install rouge==1.0.1)"
        ) from None
    kinds = [parse_rouge_type(t) for t in types]
    ns = [k for k in kinds if isinstance(k, int)]
    if any(n > 5 for n in ns):
        raise UsageError(
            "--verify-rouge: pltrdy rouge 1.0.1 only has rouge-1 … rouge-5 and rouge-l"
        )
    scorer = Rouge(metrics=types)
    report = VerifyReport("pltrdy rouge 1.0.1")
    for i, (pred, gs) in enumerate(zip(predictions, golds, strict=True)):
        for j, g in enumerate(gs):
            report.pairs += 1
            try:
                theirs = scorer.get_scores(pred, g)[0]
                ref_err = None
            except (ValueError, RecursionError) as exc:
                theirs, ref_err = None, exc
            try:
                mine = pltrdy_scores(pred, g, ns, "l" in kinds)
            except UpstreamError:
                mine = None
            report.values += len(types)
            if theirs is None or mine is None:
                differ = (theirs is None) != (mine is None)
                # pltrdy's recursive LCS read-out overflows on long sentences; ragmeter does not
                if (
                    differ
                    and not isinstance(ref_err, RecursionError)
                    and (len(report.mismatches) < limit)
                ):
                    they = "raises" if theirs is None else "scores"
                    we = "raises" if mine is None else "scores"
                    report.mismatches.append(
                        f"sample {i}, gold {j}: pltrdy {they} but ragmeter {we}"
                    )
                continue
            for t, k in zip(types, kinds, strict=True):
                if theirs[t]["f"] != mine[k] and len(report.mismatches) < limit:
                    report.mismatches.append(
                        f"sample {i}, gold {j}, {t}: ragmeter {mine[k]!r} != "
                        f"pltrdy {theirs[t]['f']!r}"
                    )
    return report
