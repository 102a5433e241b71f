"""graphrag-eval 5's non-LLM ``retrieval_context_*`` scores (docs/steps.md).

5.x scored retrieved texts against the reference texts by string similarity,
``1 − Levenshtein distance / max length``. The distance uses Hyyrö's bit-parallel algorithm on
Python integers, so long passages cost O(n·⌈m/word⌉) machine operations rather than a Python
loop over n·m cells.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["levenshtein", "similarity", "v5_context_scores"]


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character each).

    >>> levenshtein("kitten", "sitting"), levenshtein("", "abc"), levenshtein("same", "same")
    (3, 3, 0)
    """
    if len(a) < len(b):
        a, b = b, a
    m = len(b)
    if m == 0:
        return len(a)
    peq: dict[str, int] = {}
    for i, ch in enumerate(b):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    pv, mv, score = mask, 0, m
    for ch in a:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & mask
        mh = pv & xh
        if ph & high:
            score += 1
        elif mh & high:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = (mh | ~(xv | ph)) & mask
        mv = ph & xv
    return score


def similarity(a: str, b: str) -> float:
    """``1 − levenshtein(a, b) / max(len a, len b)``; 1.0 for two empty strings.

    >>> similarity("abcd", "abcx")
    0.75
    """
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def v5_context_scores(
    reference_texts: Sequence[str], retrieved_texts: Sequence[str]
) -> tuple[dict, dict]:
    """Context recall and precision of retrieved texts against reference texts.

    Recall is the share of reference texts whose best similarity to a retrieved text exceeds
    0.5; precision is the average precision of the retrieved ranking where a text is relevant
    when its best similarity to a reference text is at least 0.5:
    ``Σ_i (Σ_{l≤i} v_l / i) · v_i / (Σ v + 1e-10)``.

    >>> r, p = v5_context_scores(["Oslo T1 is in Oslo."], ["Oslo T1 is in Oslo.", "unrelated"])
    >>> r["value"], round(p["value"], 6)
    (1.0, 1.0)
    """
    if not reference_texts and not retrieved_texts:
        reason = "no reference and no retrieved texts"
        return {"value": 1.0, "reason": reason}, {"value": 1.0, "reason": reason}
    if not reference_texts:
        reason = "no reference texts"
        return {"value": 1.0, "reason": reason}, {"value": 0.0, "reason": reason}
    if not retrieved_texts:
        reason = "no retrieved texts"
        return {"value": 0.0, "reason": reason}, {"value": 0.0, "reason": reason}
    sims = [[similarity(r, t) for t in retrieved_texts] for r in reference_texts]
    recall = sum(1 for row in sims if max(row) > 0.5) / len(reference_texts)
    verdicts = [
        1 if max(sims[i][j] for i in range(len(reference_texts))) >= 0.5 else 0
        for j in range(len(retrieved_texts))
    ]
    hits = 0
    total = 0.0
    for i, v in enumerate(verdicts, start=1):
        hits += v
        total += (hits / i) * v
    precision = total / (sum(verdicts) + 1e-10)
    return {"value": recall}, {"value": precision}
