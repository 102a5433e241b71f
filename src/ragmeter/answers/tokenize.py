"""Tokenizers: answer tokens, rouge-score's tokenizer and the Unicode-aware one.

Definitions: docs/answers.md, "Tokenizers".

* ``rouge_score_tokens``: output-identical to ``rouge_score.tokenize.tokenize`` 0.1.2. Its
  substitute-split-filter sequence is replaced by ``re.findall(r"[a-z0-9]+", text.lower())``,
  which yields the same tokens and is faster (a property test keeps this verified).
* ``unicode_tokens``: NFKC, ``lower()``, runs of letters/numbers with combining marks, one token
  per character for scripts written without spaces (CJK, kana, Thai, Lao, Myanmar, Khmer).

Stemming is NLTK's Porter stemmer, imported only when stemming is on, applied to tokens of more
than three characters through one process-wide cache (token → stem).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

from ragmeter.answers.normalizers import normalize

__all__ = [
    "TOKENIZERS",
    "answer_tokens",
    "has_rouge_nonascii",
    "rouge_score_tokens",
    "rouge_tokens",
    "unicode_tokens",
]

TOKENIZERS = ("default", "unicode")

_ROUGE_RUN = re.compile(r"[a-z0-9]+")
_findall = _ROUGE_RUN.findall
_VALID = re.compile(r"^[a-z0-9]+$")
_ASCII_WORD = re.compile(r"[a-z0-9]+")

_porter = None


def _stemmer():
    global _porter
    if _porter is None:
        from nltk.stem import porter  # core dependency, imported only when stemming

        _porter = porter.PorterStemmer()
    return _porter


class _StemCache(dict):
    """token → token after rouge-score's stemming rule; ``None`` when the stem is invalid."""

    __slots__ = ()
    invalid_seen = False

    def __missing__(self, token: str) -> str | None:
        out: str | None = token
        if len(token) > 3:
            out = _stemmer().stem(token)
            if not _VALID.match(out):  # rouge-score's final filter; never seen on [a-z0-9]+
                _StemCache.invalid_seen = True
                out = None
        self[token] = out
        return out


_STEMS = _StemCache()
_stem_lookup = _STEMS.__getitem__


def _stem_all(tokens: list[str]) -> list[str]:
    out = list(map(_stem_lookup, tokens))
    if _StemCache.invalid_seen:
        out = [t for t in out if t is not None]
    return out


def rouge_score_tokens(text: str, *, stem: bool = False) -> list[str]:
    """Tokens of ``rouge_score.tokenize.tokenize(text, stemmer)`` 0.1.2.

    >>> rouge_score_tokens("Zürich, U.S. Navy!")
    ['z', 'rich', 'u', 's', 'navy']
    >>> rouge_score_tokens("running quickly", stem=True)
    ['run', 'quickli']
    """
    tokens = _findall(text.lower())
    return _stem_all(tokens) if stem else tokens


# Scripts written without spaces: every letter or number is a token of its own.
_NOSPACE_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2FA1F),  # CJK Extensions B-F, Compatibility Supplement
)

_WORD, _SINGLE, _MARK, _SEP = 0, 1, 2, 3


@cache
def _char_class(ch: str) -> int:
    cat = unicodedata.category(ch)[0]
    if cat in "LN":
        cp = ord(ch)
        for lo, hi in _NOSPACE_RANGES:
            if lo <= cp <= hi:
                return _SINGLE
        return _WORD
    if cat == "M":
        return _MARK
    return _SEP


def _scan(text: str) -> list[str]:
    """The character scan of :func:`unicode_tokens` on already NFKC-normalised, lower-cased text."""
    tokens: list[str] = []
    cur: list[str] = []
    single = False  # the open token is a no-space-script character (closed by anything but marks)
    for ch in text:
        cls = _char_class(ch)
        if cls == _WORD:
            if single:
                tokens.append("".join(cur))
                cur = []
                single = False
            cur.append(ch)
        elif cls == _SINGLE:
            if cur:
                tokens.append("".join(cur))
            cur = [ch]
            single = True
        elif cls == _MARK:
            if cur:
                cur.append(ch)
        else:
            if cur:
                tokens.append("".join(cur))
                cur = []
            single = False
    if cur:
        tokens.append("".join(cur))
    return tokens


def unicode_tokens(text: str, *, stem: bool = False) -> list[str]:
    """The ``unicode`` tokenizer (docs/answers.md); on ASCII text it equals rouge-score's tokens.

    >>> unicode_tokens("Zürich")
    ['zürich']
    >>> unicode_tokens("東京タワーは333m")
    ['東', '京', 'タ', 'ワ', 'ー', 'は', '333m']
    >>> unicode_tokens("K-pop 한국어 노래")
    ['k', 'pop', '한국어', '노래']
    """
    if text.isascii():  # NFKC and lower() keep ASCII ASCII; the scan then equals the regex
        tokens = _findall(text.lower())
        return _stem_all(tokens) if stem else tokens
    tokens = _scan(unicodedata.normalize("NFKC", text).lower())
    if stem:
        stemmed = (_stem_lookup(t) if _ASCII_WORD.fullmatch(t) else t for t in tokens)
        tokens = [t for t in stemmed if t is not None]
    return tokens


@lru_cache(maxsize=65536)
def rouge_tokens(text: str, tokenizer: str = "default", stem: bool = False) -> tuple[str, ...]:
    """ROUGE tokens of ``text``, cached per (text, tokenizer, stem) for the whole process."""
    if tokenizer == "default":
        return tuple(rouge_score_tokens(text, stem=stem))
    return tuple(unicode_tokens(text, stem=stem))


def answer_tokens(text: str, *, profile: str = "squad", tokenizer: str = "default") -> list[str]:
    """Answer tokens tok(x) (docs/answers.md): ``n(x).split()`` or the unicode tokens of n(x).

    >>> answer_tokens("北京大学", tokenizer="unicode")
    ['北', '京', '大', '学']
    >>> answer_tokens("The U.S. Navy", profile="ultrarag")
    ['u', 's', 'navy']
    """
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenizer!r} (expected default or unicode)")
    norm = normalize(text, profile=profile)
    return norm.split() if tokenizer == "default" else unicode_tokens(norm)


def has_rouge_nonascii(text: str) -> bool:
    """True if rouge-score's tokenizer would erase a letter or digit of ``text``.

    >>> has_rouge_nonascii("café"), has_rouge_nonascii("‘Hello’"), has_rouge_nonascii("K")
    (True, False, False)
    """
    if text.isascii():
        return False
    return any(not c.isascii() and c.isalnum() for c in text.lower())
