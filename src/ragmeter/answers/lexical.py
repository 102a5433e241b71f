"""Per-gold lexical metrics (docs/answers.md).

Each function scores one prediction against each gold and returns one value per gold; the
aggregation over golds is done by the caller. Inputs are already normalised
(``p_norm``, ``g_norms``) and tokenised (``p_tok``, ``g_toks``) by the active profile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = [
    "acc_per_gold",
    "contiguous",
    "coverem_per_gold",
    "em_per_gold",
    "prf_per_gold",
    "str_em_alce",
]

_YES_NO = frozenset({"yes", "no", "noanswer"})


def contiguous(needle: Sequence[str], haystack: Sequence[str]) -> bool:
    """True if ``needle`` (non-empty) occurs as a contiguous token run of ``haystack``.

    Tokens never contain spaces, so a space-delimited substring test is word-boundary safe.

    >>> contiguous(["new", "york"], ["in", "new", "york", "city"]), contiguous(["art"], ["start"])
    (True, False)
    """
    if not needle or len(needle) > len(haystack):
        return False
    return f" {' '.join(needle)} " in f" {' '.join(haystack)} "


def em_per_gold(p_norm: str, g_norms: Sequence[str]) -> list[float]:
    """``[n(p) = n(g)]`` for each gold.

    >>> em_per_gold("us navy", ["us navy", "navy"])
    [1.0, 0.0]
    """
    return [1.0 if p_norm == g else 0.0 for g in g_norms]


def acc_per_gold(
    profile: str,
    p_norm: str,
    g_norms: Sequence[str],
    p_tok: Sequence[str] = (),
    g_toks: Sequence[Sequence[str]] = (),
) -> list[float]:
    """Containment of each gold in the prediction (docs/answers.md, "Metric definitions").

    ``squad``: tok(g) is a contiguous run of tok(p) (a gold without tokens is never contained);
    ``ultrarag``: character substring, 0 for an empty prediction; ``flashrag``: substring.

    >>> acc_per_gold("squad", "start", ["art"], ["start"], [["art"]])
    [0.0]
    >>> acc_per_gold("ultrarag", "start", ["art"]), acc_per_gold("ultrarag", "", [""])
    ([1.0], [0.0])
    >>> acc_per_gold("flashrag", "", [""])
    [1.0]
    """
    if profile == "squad":
        return [1.0 if contiguous(g, p_tok) else 0.0 for g in g_toks]
    if profile == "ultrarag" and not p_norm:
        return [0.0] * len(g_norms)
    return [1.0 if g in p_norm else 0.0 for g in g_norms]


def coverem_per_gold(
    profile: str, p_tok: Sequence[str], g_toks: Sequence[Sequence[str]]
) -> list[float]:
    """Every token of tok(g) in tok(p), as sets (docs/answers.md, "Metric definitions").

    UltraRAG's ``all()`` over an empty gold is true, which ``ultrarag`` and ``flashrag`` keep;
    ``squad`` scores a gold without tokens 0 (it states nothing to cover).

    >>> coverem_per_gold("squad", ["city", "of", "new", "york"], [["new", "york", "city"], []])
    [1.0, 0.0]
    >>> coverem_per_gold("ultrarag", ["x"], [[]])
    [1.0]
    """
    pset = set(p_tok)
    out = []
    for g in g_toks:
        if not g:
            out.append(0.0 if profile == "squad" else 1.0)
        else:
            out.append(1.0 if pset.issuperset(g) else 0.0)
    return out


def prf_per_gold(
    profile: str,
    p_tok: Sequence[str],
    g_toks: Sequence[Sequence[str]],
    p_norm: str = "",
    g_norms: Sequence[str] = (),
) -> list[tuple[float, float, float]]:
    """Token (precision, recall, F1) against each gold (docs/answers.md, "Metric definitions").

    common = Σ_t min(count_p(t), count_g(t)); P = common/|tok(p)|, R = common/|tok(g)|,
    F = (2·P·R)/(P+R), 0 when nothing is common. ``flashrag`` adds FlashRAG's rule: a gold or
    prediction normalised to yes/no/noanswer contributes 0 unless the two are equal.

    >>> prf_per_gold("squad", ["december", "14", "1973"], [["14", "december", "1972", "utc"]])
    [(0.6666666666666666, 0.5, 0.5714285714285715)]
    >>> prf_per_gold("flashrag", ["yes", "it", "is"], [["yes"]], "yes it is", ["yes"])
    [(0.0, 0.0, 0.0)]
    """
    out: list[tuple[float, float, float]] = []
    pc = Counter(p_tok) if p_tok else None
    for i, g in enumerate(g_toks):
        if profile == "flashrag":
            gn = g_norms[i]
            if (p_norm in _YES_NO or gn in _YES_NO) and p_norm != gn:
                out.append((0.0, 0.0, 0.0))
                continue
        if not pc or not g:
            out.append((0.0, 0.0, 0.0))
            continue
        common = sum((pc & Counter(g)).values())
        if common == 0:
            out.append((0.0, 0.0, 0.0))
            continue
        precision = 1.0 * common / len(p_tok)
        recall = 1.0 * common / len(g)
        out.append((precision, recall, (2 * precision * recall) / (precision + recall)))
    return out


def str_em_alce(
    p_norm: str, group_norms: Sequence[Sequence[str]]
) -> tuple[float | None, float | None, int]:
    """ALCE STR-EM over answer groups: ``(score, hit, groups_dropped)``.

    Gao et al. 2023, "Enabling Large Language Models to Generate Text with Citations" (ALCE);
    definitions in docs/answers.md.

    Aliases normalised to ``""`` are ignored; a group left without alias is dropped. Score and
    hit are ``None`` when no group is left.

    >>> str_em_alce("obama spoke", [["barack obama", "obama"], ["joe biden", "biden"]])
    (0.5, 0.0, 0)
    """
    present = 0
    kept = 0
    dropped = 0
    for group in group_norms:
        aliases = [a for a in group if a]
        if not aliases:
            dropped += 1
            continue
        kept += 1
        if any(a in p_norm for a in aliases):
            present += 1
    if kept == 0:
        return None, None, dropped
    return present / kept, 1.0 if present == kept else 0.0, dropped
