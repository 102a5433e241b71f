"""ROUGE of the ``flashrag`` profile: pltrdy ``rouge`` 1.0.1 as FlashRAG calls it (docs/answers.md).

FlashRAG scores ``Rouge().get_scores(pred, gold)[0][type]["f"]`` on raw text and keeps the
maximum over golds. pltrdy splits the text into "sentences" on ``.``, collapses whitespace
inside each, splits on single spaces and works on *sets*: n-gram sets for ROUGE-N, distinct-word
counts and a union of LCS *words* for its summary-level ROUGE-L, with ``+1e-8`` in the F
denominator. Tokens stay case-sensitive and keep their punctuation other than full stops.

Where pltrdy raises (no sentence on one side, e.g. ``""`` or ``"..."``), ragmeter scores 0.0 and
reports the failure so the caller can flag the sample ``rouge_upstream_error``; pltrdy's
recursive LCS read-out also overflows Python's stack on long sentences, this one does not.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["UpstreamError", "pltrdy_scores"]


class UpstreamError(ValueError):
    """The input on which pltrdy ``rouge`` raises (``Hypothesis is empty.`` and the like)."""


def _sentences(text: str) -> list[str]:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _words(sentences: Sequence[str]) -> list[str]:
    return [w for s in sentences for w in s.split(" ")]


def _f(p: float, r: float) -> float:
    return 2.0 * ((p * r) / (p + r + 1e-8))


def _ngram_set(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _lcs_words(x: Sequence[str], y: Sequence[str]) -> list[str]:
    """pltrdy ``_recon_lcs``: DP table, read back from the end (up on strict ``>``, else left)."""
    n, m = len(x), len(y)
    table = [[0] * (m + 1)]
    for i in range(1, n + 1):
        above = table[-1]
        row = [0] * (m + 1)
        xi = x[i - 1]
        for j in range(1, m + 1):
            if xi == y[j - 1]:
                row[j] = above[j - 1] + 1
            else:
                a, b = above[j], row[j - 1]
                row[j] = a if a >= b else b
        table.append(row)
    out: list[str] = []
    i, j = n, m
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            out.append(x[i - 1])
            i -= 1
            j -= 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return out


def _rouge_l(hyp: Sequence[str], ref: Sequence[str]) -> tuple[float, float, float]:
    m = len(set(_words(ref)))
    n = len(set(_words(hyp)))
    union: set[str] = set()
    hyp_words = [s.split(" ") for s in hyp]
    for ref_s in ref:
        ref_words = ref_s.split(" ")
        rset = set(ref_words)
        for eval_words in hyp_words:
            if not rset.isdisjoint(eval_words):
                union.update(_lcs_words(ref_words, eval_words))
    r = len(union) / m
    p = len(union) / n
    return _f(p, r), p, r


def pltrdy_prf(
    pred: str, gold: str, ns: Sequence[int], want_l: bool
) -> dict[int | str, tuple[float, float, float]]:
    """``(precision, recall, f)`` of ROUGE-N (each n in ``ns``) and ROUGE-L (key ``"l"``), as
    pltrdy's ``get_scores`` reports them (``p``, ``r``, ``f``).

    Raises :class:`UpstreamError` with pltrdy's message where pltrdy raises.

    >>> pltrdy_prf("Paris is the capital", "Paris", [1], False)
    {1: (0.25, 1.0, 0.39999999680000003)}
    """
    hyp = _sentences(pred)
    ref = _sentences(gold)
    if not hyp:
        raise UpstreamError("Hypothesis is empty.")
    if not ref:
        raise UpstreamError("Reference is empty.")
    out: dict[int | str, tuple[float, float, float]] = {}
    if ns:
        hw, rw = _words(hyp), _words(ref)
        for n in ns:
            h, r = _ngram_set(hw, n), _ngram_set(rw, n)
            overlap = len(h & r)
            precision = 0.0 if not h else overlap / len(h)
            recall = 0.0 if not r else overlap / len(r)
            out[n] = (precision, recall, _f(precision, recall))
    if want_l:
        f, p, r = _rouge_l(hyp, ref)
        out["l"] = (p, r, f)
    return out


def pltrdy_scores(pred: str, gold: str, ns: Sequence[int], want_l: bool) -> dict[int | str, float]:
    """F of ROUGE-N (for each n in ``ns``) and of ROUGE-L (key ``"l"``), as pltrdy computes them.

    Raises :class:`UpstreamError` with pltrdy's message where pltrdy raises.

    >>> pltrdy_scores("Paris is the capital", "Paris", [1], True)
    {1: 0.39999999680000003, 'l': 0.39999999680000003}
    >>> pltrdy_scores("paris is the capital", "Paris", [1], False)
    {1: 0.0}
    """
    return {k: prf[2] for k, prf in pltrdy_prf(pred, gold, ns, want_l).items()}
