"""Tokenizers and span ↔ token alignment
(docs/extraction.md#tokenization-and-span--token-alignment).

A tokenizer maps a text to ``[(start, end), ...]`` character offsets. Offsets come from the
tokenizer itself: token strings are never searched for in the text and offsets are never rebuilt
by adding token lengths (heritage defects 1–2). Whitespace-only tokens are dropped, whatever the
tokenizer.

>>> text = "Het museum (Rijksmuseum) is groot"
>>> [text[a:b] for a, b in simple_tokenize(text)]
['Het', 'museum', '(', 'Rijksmuseum', ')', 'is', 'groot']
>>> tokens = simple_tokenize(text)
>>> spans_to_tags(tokens, [(12, 23, "MUS")]).tags
['O', 'O', 'O', 'B-MUS', 'O', 'O', 'O']
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragmeter.records.errors import OverlapError, TagSchemeError
from ragmeter.records.tags import decode, encode

__all__ = [
    "CLOSING",
    "OPENING",
    "Alignment",
    "TagConversion",
    "Tokenizer",
    "align",
    "get_tokenizer",
    "simple_tokenize",
    "spans_to_tags",
    "tags_to_spans",
    "whitespace_tokenize",
]

Tokenizer = Callable[[str], "list[tuple[int, int]]"]
OPENING = frozenset("([{\"'«‹„“‘¿¡")
CLOSING = frozenset(")]}\"'»›”’.,;:!?…")
_RUN = re.compile(r"\S+")


def whitespace_tokenize(text: str) -> list[tuple[int, int]]:
    """Maximal runs of non-whitespace characters.

    >>> whitespace_tokenize("Het  Rijksmuseum\\tAmsterdam")
    [(0, 3), (5, 16), (17, 26)]
    """
    return [m.span() for m in _RUN.finditer(text)]


def simple_tokenize(text: str) -> list[tuple[int, int]]:
    """ragmeter's default tokenizer: whitespace runs with leading opening and trailing closing
    punctuation split off one character at a time; inner punctuation stays (``NL-AmRM``,
    ``d’Orsay``).

    >>> t = "(ISIL: NL-AmRM) opgericht in 1800..."
    >>> [t[a:b] for a, b in simple_tokenize(t)]
    ['(', 'ISIL', ':', 'NL-AmRM', ')', 'opgericht', 'in', '1800', '.', '.', '.']
    """
    out: list[tuple[int, int]] = []
    for m in _RUN.finditer(text):
        a, b = m.span()
        if text[a] not in OPENING and text[b - 1] not in CLOSING:
            out.append((a, b))
            continue
        while a < b and text[a] in OPENING:
            out.append((a, a + 1))
            a += 1
        tail: list[tuple[int, int]] = []
        while b > a and text[b - 1] in CLOSING:
            tail.append((b - 1, b))
            b -= 1
        if a < b:
            out.append((a, b))
        out.extend(reversed(tail))
    return out


def _spacy_tokenizer(lang: str) -> Tokenizer:
    try:
        import spacy
    except ImportError as exc:
        raise ImportError(
            f"the 'spacy:{lang}' tokenizer needs spaCy (pip install 'ragmeter[spacy]')"
        ) from exc
    nlp = spacy.blank(lang)

    def tokenize(text: str) -> list[tuple[int, int]]:
        return [(tok.idx, tok.idx + len(tok.text)) for tok in nlp.make_doc(text)]

    return tokenize


_BUILTIN: dict[str, Tokenizer] = {"simple": simple_tokenize, "whitespace": whitespace_tokenize}
_cache: dict[str, Tokenizer] = {}


def get_tokenizer(tokenizer: str | Tokenizer = "simple") -> tuple[Tokenizer, str]:
    """Resolve ``"simple"``, ``"whitespace"``, ``"spacy:<lang>"`` or a callable.

    Returns the tokenizer, wrapped so that its output is checked and whitespace-only tokens are
    dropped, and its name for the result's settings.
    """
    if callable(tokenizer):
        name = getattr(tokenizer, "__name__", type(tokenizer).__name__)
        base: Tokenizer = tokenizer
        label = f"callable:{name}"
    elif tokenizer in _BUILTIN:
        return _BUILTIN[tokenizer], tokenizer
    elif isinstance(tokenizer, str) and tokenizer.startswith("spacy:") and len(tokenizer) > 6:
        if tokenizer not in _cache:
            _cache[tokenizer] = _spacy_tokenizer(tokenizer[6:])
        base, label = _cache[tokenizer], tokenizer
    else:
        raise ValueError(
            f"unknown tokenizer {tokenizer!r} (expected 'simple', 'whitespace', "
            "'spacy:<lang>' or a callable)"
        )

    def checked(text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        prev_end = 0
        for a, b in base(text):
            a, b = int(a), int(b)
            if not 0 <= a < b <= len(text) or a < prev_end:
                raise ValueError(
                    f"tokenizer {label} returned token {a}-{b}, outside the text, empty or "
                    "overlapping the previous token (expected sorted, disjoint offsets)"
                )
            prev_end = b
            if not text[a:b].isspace():
                out.append((a, b))
        return out

    return checked, label


@dataclass
class Alignment:
    """How one span sits on the tokens: the half-open token range it overlaps and whether its
    boundaries coincide with token boundaries."""

    first: int
    last: int  # exclusive
    aligned: bool


def align(tokens: Sequence[tuple[int, int]], start: int, end: int) -> Alignment:
    """Tokens overlapping ``[start, end)`` (``ts < end and start < te``) and alignment.

    >>> align([(0, 3), (5, 16), (17, 26)], 5, 26)
    Alignment(first=1, last=3, aligned=True)
    >>> align([(0, 3), (5, 16), (17, 26)], 6, 26)
    Alignment(first=1, last=3, aligned=False)
    """
    return _align([a for a, _ in tokens], [b for _, b in tokens], start, end)


def _align(starts: Sequence[int], ends: Sequence[int], start: int, end: int) -> Alignment:
    first = bisect.bisect_right(ends, start)  # first token with te > start
    last = bisect.bisect_left(starts, end)  # first token with ts >= end
    aligned = first < last and starts[first] == start and ends[last - 1] == end
    return Alignment(first, max(first, last), aligned)


@dataclass
class TagConversion:
    """Tags for one document (or sentence) and everything the conversion could not keep."""

    tags: list[str]
    misaligned: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    overlaps: list[dict[str, Any]] = field(default_factory=list)
    no_tokens: list[dict[str, Any]] = field(default_factory=list)


def spans_to_tags(
    tokens: Sequence[tuple[int, int]],
    spans: Sequence[tuple[int, int, str]],
    *,
    scheme: str = "IOB2",
    misaligned: Literal["expand", "error", "drop"] = "expand",
    on_overlap: Literal["error", "keep_longest"] = "error",
    where: str = "",
) -> TagConversion:
    """Label tokens with character spans ``(start, end, label)``.

    A token belongs to a span when they overlap. A span whose boundaries are not token
    boundaries is *misaligned*: ``"expand"`` labels the overlapping tokens and lists it,
    ``"drop"`` removes and lists it, ``"error"`` raises. Two spans on one token raise
    :class:`OverlapError` unless ``on_overlap="keep_longest"`` (longer span wins; ties: earlier
    start, then label order), which lists the dropped span.
    """
    if misaligned not in ("expand", "error", "drop"):
        raise ValueError(f"misaligned={misaligned!r} (expected 'expand', 'error' or 'drop')")
    if on_overlap not in ("error", "keep_longest"):
        raise ValueError(f"on_overlap={on_overlap!r} (expected 'error' or 'keep_longest')")
    conv = TagConversion(tags=[])
    placed: list[tuple[int, int, str, int, int]] = []  # (start, end, label, first, last)
    prefix = f"{where}: " if where else ""
    starts = [a for a, _ in tokens]
    ends = [b for _, b in tokens]
    for start, end, label in spans:
        al = _align(starts, ends, start, end)
        row = {"start": start, "end": end, "label": label}
        if al.first >= al.last:
            conv.no_tokens.append(row)
            if misaligned == "error":
                raise TagSchemeError(
                    f"{prefix}span {start}-{end} '{label}' covers no token (expected spans on "
                    "token boundaries)"
                )
            continue
        if not al.aligned:
            if misaligned == "error":
                raise TagSchemeError(
                    f"{prefix}span {start}-{end} '{label}' does not fall on token boundaries "
                    f"(tokens {tokens[al.first][0]}-{tokens[al.last - 1][1]}; expected "
                    "aligned spans, or misaligned='expand'/'drop')"
                )
            if misaligned == "drop":
                conv.dropped.append(row)
                continue
            conv.misaligned.append(
                {**row, "expanded_to": [tokens[al.first][0], tokens[al.last - 1][1]]}
            )
        placed.append((start, end, label, al.first, al.last))

    # overlap: longest first (ties: earlier start, then label), each token taken once
    owner: dict[int, int] = {}
    order = sorted(
        range(len(placed)),
        key=lambda k: (-(placed[k][1] - placed[k][0]), placed[k][0], placed[k][2]),
    )
    keep: list[int] = []
    for k in order:
        s, e, lab, a, b = placed[k]
        clash = next((owner[t] for t in range(a, b) if t in owner), None)
        if clash is not None:
            other = placed[clash]
            if on_overlap == "error":
                raise OverlapError(
                    f"{prefix}spans {other[0]}-{other[1]} '{other[2]}' and {s}-{e} '{lab}' "
                    "share a token and cannot be written as tags (expected non-overlapping "
                    "spans, or on_overlap='keep_longest')"
                )
            conv.overlaps.append(
                {"start": s, "end": e, "label": lab, "kept": [other[0], other[1], other[2]]}
            )
            continue
        for t in range(a, b):
            owner[t] = k
        keep.append(k)
    chunks = [(placed[k][2], placed[k][3], placed[k][4]) for k in keep]
    conv.tags = encode(chunks, len(tokens), scheme=scheme)
    return conv


def tags_to_spans(
    tokens: Sequence[tuple[int, int]],
    tags: Sequence[str],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
) -> list[tuple[int, int, str]]:
    """Character spans ``(start, end, label)`` of the chunks in ``tags`` (one per token).

    >>> toks = [(0, 3), (4, 15), (16, 25)]
    >>> tags_to_spans(toks, ["O", "B-MUS", "I-MUS"])
    [(4, 25, 'MUS')]
    """
    if len(tokens) != len(tags):
        raise TagSchemeError(f"{len(tags)} tags for {len(tokens)} tokens (expected one per token)")
    return [
        (tokens[s][0], tokens[e - 1][1], typ)
        for typ, s, e in decode(tags, scheme=scheme, mode=mode)
    ]
