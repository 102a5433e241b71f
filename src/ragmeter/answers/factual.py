"""Factual accuracy of extracted claims against gold facts (docs/answers.md).

The heritage-RAG definition (a verifiable claim is correct if ``claim.lower()`` is a character
substring of some ``fact.lower()``) counts the empty claim as correct, lets ``art`` match
``the start``, rejects a claim that restates a fact in a full sentence, and reports 0.0 when
nothing was verifiable. Here claims and facts are normalised and tokenised by the active
profile, a claim is *supported* when one token sequence occurs contiguously in the other (by
default in either direction), claims without tokens are *invalid*, nothing-to-check is
``null`` with status ``no_claims``, and the recall of gold facts is reported too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.answers.lexical import contiguous
from ragmeter.answers.normalizers import check_profile, normalize
from ragmeter.answers.tokenize import answer_tokens
from ragmeter.errors import InputError, UsageError

__all__ = ["MATCH_MODES", "FactualScore", "factual_accuracy"]

MATCH_MODES = ("either", "claim_in_fact", "fact_in_claim", "exact")


@dataclass(frozen=True)
class FactualScore:
    """Factual accuracy of one answer's claims, with the counts that explain it.

    ``verdicts`` has one entry per claim: ``supported`` (with the index of the first supporting
    fact), ``unsupported``, ``invalid`` (verifiable but without tokens) or ``unverifiable``.
    """

    status: str
    factual_accuracy: float | None
    fact_recall: float | None
    supported_claims: int
    unsupported_claims: int
    invalid_claims: int
    unverifiable_claims: int
    total_claims: int
    verdicts: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "factual_accuracy": self.factual_accuracy,
            "supported_claims": self.supported_claims,
            "unsupported_claims": self.unsupported_claims,
            "invalid_claims": self.invalid_claims,
            "unverifiable_claims": self.unverifiable_claims,
            "total_claims": self.total_claims,
            "fact_recall": self.fact_recall,
        }


def _claim(item: Any, i: int) -> tuple[str, bool]:
    if isinstance(item, str):
        return item, True
    if not isinstance(item, Mapping):
        raise InputError(
            f"is a {type(item).__name__} (expected {{'claim': str, 'verifiable': bool}})",
            location=f"claims[{i}]",
        )
    text = item.get("claim")
    if not isinstance(text, str):
        raise InputError(
            "'claim' is missing or not a string (expected a string)", location=f"claims[{i}]"
        )
    verifiable = item.get("verifiable", True)
    if not isinstance(verifiable, bool):
        raise InputError(
            f"'verifiable' is {verifiable!r} (expected true or false)", location=f"claims[{i}]"
        )
    return text, verifiable


def _fact(item: Any, i: int) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping) and isinstance(item.get("fact"), str):
        return item["fact"]
    raise InputError("expected {'fact': str, 'source': str} or a string", location=f"facts[{i}]")


def factual_accuracy(
    claims: Sequence[Any],
    facts: Sequence[Any],
    *,
    profile: str = "squad",
    match: str = "either",
    tokenizer: str = "default",
) -> FactualScore:
    """Share of checked claims that a gold fact supports, and share of facts stated.

    factual_accuracy = supported / (supported + unsupported), ``None`` (status ``no_claims``)
    when no claim could be checked; fact_recall = facts supported by at least one checked claim
    / facts with tokens (``None`` when there are none).

    Parameters
    ----------
    claims : list
        ``{"claim": str, "verifiable": bool}`` items (a plain string is a verifiable claim).
    facts : list
        ``{"fact": str, "source": str}`` items (or plain strings).
    profile : {"squad", "ultrarag", "flashrag"}, default "squad"
        The normaliser of claims and facts.
    match : {"either", "claim_in_fact", "fact_in_claim", "exact"}, default "either"
        ``either``: tok(claim) occurs contiguously in tok(fact) or the reverse; ``exact``:
        n(claim) = n(fact).
    tokenizer : {"default", "unicode"}, default "default"

    Returns
    -------
    FactualScore

    Examples
    --------
    >>> facts = [{"fact": "opgericht in 1800", "source": "s1"}]
    >>> r = factual_accuracy([{"claim": "Het Rijksmuseum werd opgericht in 1800.",
    ...                        "verifiable": True}, {"claim": "art", "verifiable": True}], facts)
    >>> r.factual_accuracy, r.supported_claims, r.fact_recall
    (0.5, 1, 1.0)
    >>> factual_accuracy([], facts).status
    'no_claims'
    """
    try:
        check_profile(profile)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if match not in MATCH_MODES:
        raise UsageError(f"unknown match {match!r} (expected one of {', '.join(MATCH_MODES)})")
    fact_norms = []
    fact_toks = []
    for i, item in enumerate(facts):
        text = _fact(item, i)
        norm = normalize(text, profile=profile)
        toks = answer_tokens(text, profile=profile, tokenizer=tokenizer)
        if toks:  # facts without tokens are ignored
            fact_norms.append((i, norm))
            fact_toks.append(toks)

    verdicts: list[dict[str, Any]] = []
    supported = unsupported = invalid = unverifiable = 0
    facts_hit: set[int] = set()
    for i, item in enumerate(claims):
        text, verifiable = _claim(item, i)
        if not verifiable:
            unverifiable += 1
            verdicts.append({"claim": text, "verdict": "unverifiable"})
            continue
        toks = answer_tokens(text, profile=profile, tokenizer=tokenizer)
        if not toks:
            invalid += 1
            verdicts.append({"claim": text, "verdict": "invalid"})
            continue
        norm = normalize(text, profile=profile)
        hits = []
        for (fi, fnorm), ftoks in zip(fact_norms, fact_toks, strict=True):
            if match == "exact":
                ok = norm == fnorm
            elif match == "claim_in_fact":
                ok = contiguous(toks, ftoks)
            elif match == "fact_in_claim":
                ok = contiguous(ftoks, toks)
            else:
                ok = contiguous(toks, ftoks) or contiguous(ftoks, toks)
            if ok:
                hits.append(fi)
        if hits:
            supported += 1
            facts_hit.update(hits)
            verdicts.append({"claim": text, "verdict": "supported", "fact": hits[0]})
        else:
            unsupported += 1
            verdicts.append({"claim": text, "verdict": "unsupported"})

    checked = supported + unsupported
    accuracy = supported / checked if checked else None
    recall = len(facts_hit) / len(fact_norms) if fact_norms else None
    return FactualScore(
        status=st.OK if checked else st.NO_CLAIMS,
        factual_accuracy=accuracy,
        fact_recall=recall,
        supported_claims=supported,
        unsupported_claims=unsupported,
        invalid_claims=invalid,
        unverifiable_claims=unverifiable,
        total_claims=len(claims),
        verdicts=tuple(verdicts),
    )
