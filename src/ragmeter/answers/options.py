"""Options of an answers evaluation, resolved from the profile's defaults.

See docs/answers.md, "Profiles", "Aggregation" and "Empty and missing data".

Everything is validated here, once, before any sample is scored: unknown metrics, metrics a
profile does not offer, aggregations a metric does not allow, option combinations that make no
sense. Errors are :class:`~ragmeter.errors.UsageError` with one line saying what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ragmeter.answers.normalizers import PROFILES
from ragmeter.answers.registry import (
    ANSWERS_METRICS,
    GOLD_AGG,
    PROFILE_DEFAULT_METRICS,
    SEMANTIC_METRICS,
    canonical_answers_metric,
)
from ragmeter.answers.tokenize import TOKENIZERS
from ragmeter.errors import UsageError
from ragmeter.registry import suggest

__all__ = ["EMPTY_GOLD_POLICIES", "Options", "resolve_metrics", "resolve_options"]

EMPTY_GOLD_POLICIES = ("drop", "keep", "abstain", "error")
_PROFILE_DEFAULTS = {
    "squad": {"stem": False, "empty_gold": "drop"},
    "ultrarag": {"stem": True, "empty_gold": "keep"},
    "flashrag": {"stem": False, "empty_gold": "keep"},
}


@dataclass(frozen=True)
class Options:
    """Resolved options of one evaluation (profile defaults filled in)."""

    profile: str = "squad"
    metrics: tuple[str, ...] = ("em", "f1")
    tokenizer: str = "default"
    stem: bool = False
    agg: Mapping[str, str] = field(default_factory=dict)
    empty_gold: str = "drop"
    gold_regex: bool = False
    lsum_split: str = "newline"

    @property
    def rouge_types(self) -> tuple[str, ...]:
        return tuple(m for m in self.metrics if m.startswith("rouge-"))

    @property
    def semantic(self) -> tuple[str, ...]:
        return tuple(m for m in self.metrics if m in SEMANTIC_METRICS)

    @property
    def prf(self) -> tuple[str, ...]:
        """Token P/R/F outputs: f1 brings precision and recall with it (docs/answers.md)."""
        wanted = [m for m in ("f1", "precision", "recall") if m in self.metrics]
        if "f1" in wanted:
            return ("f1", "precision", "recall")
        return tuple(wanted)

    @property
    def gold_metrics(self) -> tuple[str, ...]:
        """Outputs scored gold by gold, to which the empty-gold policy applies (not
        ``str-em-alce``, which ignores empty aliases, nor ``qa-similarity``)."""
        return tuple(m for m in self.outputs() if m not in ("qa-similarity", "str-em-alce"))

    def outputs(self) -> tuple[str, ...]:
        """Metric columns of the per-sample table: the requested metrics, with ``precision``
        and ``recall`` right after ``f1`` unless they were asked for themselves."""
        out: list[str] = []
        for m in self.metrics:
            out.append(m)
            if m == "f1":
                out += [x for x in ("precision", "recall") if x not in self.metrics]
        return tuple(out)


def resolve_metrics(names: Iterable[str] | None, profile: str) -> tuple[str, ...]:
    """Canonical metric names, in the order asked, without repeats; the profile default if none.

    >>> resolve_metrics(["EM", "rougeL", "em"], "squad")
    ('em', 'rouge-l')
    >>> resolve_metrics(None, "flashrag")
    ('em', 'f1', 'acc', 'precision', 'recall')
    """
    if isinstance(names, str):
        names = [names]
    names = list(names or [])
    if not names:
        return PROFILE_DEFAULT_METRICS[profile]
    out: list[str] = []
    known = [*ANSWERS_METRICS, *SEMANTIC_METRICS]
    for name in names:
        if not isinstance(name, str):
            raise UsageError(f"metric names are strings, not {type(name).__name__}")
        canonical = canonical_answers_metric(name)
        if canonical is None:
            close = suggest(name, known)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise UsageError(
                f"unknown metric '{name}' (expected one of em, acc, stringem, coverem, f1, "
                f"precision, recall, rouge-1 … rouge-9, rouge-l, rouge-lsum, str-em-alce, "
                f"semantic-similarity, qa-similarity){hint}"
            )
        if profile == "flashrag" and canonical == "rouge-lsum":
            raise UsageError(
                "rouge-lsum is not available in the flashrag profile (its rouge-l is already "
                "summary-level, as in pltrdy rouge)"
            )
        if canonical not in out:
            out.append(canonical)
    return tuple(out)


def _parse_agg(
    agg: str | Mapping[str, str] | Iterable[str] | None,
) -> tuple[str | None, dict[str, str]]:
    """(global value, per-metric values) from ``"max"``, ``{"f1": "mean"}`` or CLI strings."""
    if agg is None:
        return None, {}
    if isinstance(agg, str):
        agg = [agg]
    if isinstance(agg, Mapping):
        items = [(str(k), str(v)) for k, v in agg.items()]
    else:
        items = []
        for spec in agg:
            key, eq, value = str(spec).partition("=")
            items.append((key.strip(), value.strip()) if eq else ("", key.strip()))
    global_value: str | None = None
    per: dict[str, str] = {}
    for key, value in items:
        if value not in ("max", "mean", "any"):
            raise UsageError(f"--agg value '{value}' is not max, mean or any")
        if key in ("", "*"):
            global_value = value
            continue
        canonical = canonical_answers_metric(key)
        if canonical is None or canonical not in GOLD_AGG:
            raise UsageError(f"--agg names unknown metric '{key}' (expected e.g. f1=mean)")
        per[canonical] = value
    return global_value, per


def resolve_options(
    metrics: Iterable[str] | None = None,
    *,
    profile: str = "squad",
    tokenizer: str | None = None,
    stem: bool | None = None,
    agg: str | Mapping[str, str] | Iterable[str] | None = None,
    empty_gold: str | None = None,
    gold_regex: bool = False,
    lsum_split: str = "newline",
) -> Options:
    """Validate the options of an evaluation and fill in the profile's defaults.

    >>> o = resolve_options(["em", "f1", "rouge-l"], profile="ultrarag")
    >>> o.stem, o.empty_gold, o.agg["em"], o.agg["precision"]
    (True, 'keep', 'any', 'max')
    """
    if profile not in PROFILES:
        raise UsageError(f"unknown profile '{profile}' (expected squad, ultrarag or flashrag)")
    names = resolve_metrics(metrics, profile)
    tokenizer = tokenizer or "default"
    if tokenizer not in TOKENIZERS:
        raise UsageError(f"unknown tokenizer '{tokenizer}' (expected default or unicode)")
    defaults = _PROFILE_DEFAULTS[profile]
    if stem is not None and profile == "flashrag" and stem:
        raise UsageError("--stem has no effect in the flashrag profile (pltrdy rouge never stems)")
    stem = defaults["stem"] if stem is None else bool(stem)
    empty_gold = empty_gold or defaults["empty_gold"]
    if empty_gold not in EMPTY_GOLD_POLICIES:
        raise UsageError(
            f"unknown --empty-gold policy '{empty_gold}' (expected drop, keep, abstain or error)"
        )
    if gold_regex and profile != "flashrag":
        raise UsageError("--gold-regex needs --profile flashrag (FlashRAG's curatedtrec mode)")
    if lsum_split not in ("newline", "nltk"):
        raise UsageError(f"unknown --lsum-split '{lsum_split}' (expected newline or nltk)")
    if lsum_split == "nltk" and "rouge-lsum" in names:
        from ragmeter.answers.sentences import check_nltk_punkt

        check_nltk_punkt()
    global_agg, per = _parse_agg(agg)
    resolved: dict[str, str] = {}
    wanted = list(names)
    if "f1" in wanted:
        wanted += [m for m in ("precision", "recall") if m not in wanted]
    for m in wanted:
        if m not in GOLD_AGG:
            continue  # qa-similarity: no golds
        default, allowed = GOLD_AGG[m]
        if m in per:
            value = per[m]
            if value not in allowed:
                raise UsageError(
                    f"--agg {m}={value} is not allowed (expected {' or '.join(allowed)})"
                )
        elif m in ("precision", "recall") and "f1" in per:
            value = per["f1"]  # P and R follow F unless set on their own
        elif global_agg is not None and len(allowed) > 1:
            value = global_agg if global_agg in allowed else "max"
        else:
            value = default
        resolved[m] = value
    return Options(
        profile=profile,
        metrics=names,
        tokenizer=tokenizer,
        stem=stem,
        agg=resolved,
        empty_gold=empty_gold,
        gold_regex=bool(gold_regex),
        lsum_split=lsum_split,
    )
