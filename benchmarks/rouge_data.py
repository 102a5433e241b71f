"""Synthetic (reference, prediction) pairs for the ROUGE benchmark and property tests.

The protocol (benchmarks/README.md): pseudo-English words with inflectional suffixes (so the
Porter stemmer has work to do) drawn from a 5,000-word Zipfian vocabulary plus stop words;
references of 25–35 tokens with capitalisation, commas and a final full stop; predictions derived
from the references with 25 % substitutions, 8 % deletions, 8 % insertions and one 4-token local
shuffle. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from itertools import accumulate

__all__ = ["make_pairs", "multiline"]

_ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "br",
    "cl",
    "dr",
    "fl",
    "gr",
    "pl",
    "pr",
    "sh",
    "st",
    "str",
    "th",
    "tr",
    "ch",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"]
_CODAS = ["", "", "n", "r", "l", "s", "t", "m", "nd", "st", "ck", "ng", "rt", "x"]
_SUFFIXES = [
    "",
    "",
    "",
    "s",
    "es",
    "ed",
    "ing",
    "er",
    "ers",
    "ly",
    "ness",
    "ment",
    "ies",
    "ation",
    "ational",
    "ful",
    "ous",
    "ive",
    "ize",
    "izing",
    "ized",
    "ity",
    "able",
]
_STOP = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
]


def _vocabulary(rnd: random.Random, size: int) -> list[str]:
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        stem = "".join(
            rnd.choice(_ONSETS) + rnd.choice(_VOWELS) + rnd.choice(_CODAS)
            for _ in range(rnd.choice((1, 2, 2, 3)))
        )
        word = stem + rnd.choice(_SUFFIXES)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class _Sampler:
    def __init__(self, seed: int, vocab_size: int = 5000) -> None:
        self.rnd = random.Random(seed)
        self.vocab = _vocabulary(self.rnd, vocab_size)
        self.cum = list(accumulate(1.0 / (rank + 1) for rank in range(vocab_size)))

    def word(self) -> str:
        if self.rnd.random() < 0.3:
            return self.rnd.choice(_STOP)
        return self.rnd.choices(self.vocab, cum_weights=self.cum)[0]


def _render(words: list[str], rnd: random.Random) -> str:
    out = []
    for i, w in enumerate(words):
        if i == 0 or rnd.random() < 0.06:
            w = w.capitalize()
        if i < len(words) - 1 and rnd.random() < 0.08:
            w += ","
        out.append(w)
    return " ".join(out) + "."


def make_pairs(n: int, *, seed: int = 13) -> list[tuple[str, str]]:
    """``n`` (reference, prediction) pairs of this protocol (mean ROUGE-1 F about 0.72)."""
    s = _Sampler(seed)
    rnd = s.rnd
    pairs = []
    for _ in range(n):
        ref = [s.word() for _ in range(rnd.randint(25, 35))]
        pred: list[str] = []
        for w in ref:
            r = rnd.random()
            if r < 0.25:
                pred.append(s.word())
            elif r < 0.33:
                continue
            else:
                pred.append(w)
            if rnd.random() < 0.08:
                pred.append(s.word())
        if len(pred) >= 4:
            i = rnd.randrange(len(pred) - 3)
            window = pred[i : i + 4]
            rnd.shuffle(window)
            pred[i : i + 4] = window
        pairs.append((_render(ref, rnd), _render(pred, rnd)))
    return pairs


def multiline(text: str, rnd: random.Random) -> str:
    """Break ``text`` into lines at random spaces (for ROUGE-Lsum), sometimes with blank lines."""
    words = text.split(" ")
    out = [words[0]]
    for w in words[1:]:
        r = rnd.random()
        if r < 0.12:
            out.append("\n")
        elif r < 0.14:
            out.append("\n\n")
        elif r < 0.15:
            out.append("\n \n")
        else:
            out.append(" ")
        out.append(w)
    return "".join(out)
