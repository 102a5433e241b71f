"""Tag sequences: scheme normalization, decoding into chunks and encoding (docs/extraction.md#ner).

A tag's first character is its prefix (``B I E S O``, after normalization); its type is
everything after the first ``-`` (``B-NL-ISIL`` has type ``NL-ISIL``), and a tag with no type
(``B``) has type ``_``. Chunks are ``(type, start, end)`` with a half-open token range.

Lenient decoding is seqeval's default (conlleval) mode; strict decoding is seqeval's
``mode="strict"`` with the matching scheme.

>>> decode(["B-MUS", "I-MUS", "O", "B-LOC"])
[('MUS', 0, 2), ('LOC', 3, 4)]
>>> decode(["I-MUS", "I-MUS"]), decode(["I-MUS", "I-MUS"], mode="strict")
([('MUS', 0, 2)], [])
>>> encode([("MUS", 0, 2), ("LOC", 3, 4)], 4, scheme="IOBES")
['B-MUS', 'E-MUS', 'O', 'S-LOC']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ragmeter.records.errors import TagSchemeError

__all__ = ["SCHEMES", "Chunk", "decode", "encode", "normalize", "split_tag"]

Scheme = Literal["IOB2", "IOB1", "IOBES", "BILOU", "IOE1", "IOE2"]
SCHEMES: tuple[str, ...] = ("IOB2", "IOB1", "IOBES", "BILOU", "IOE1", "IOE2")
Chunk = tuple[str, int, int]

# the scheme each input scheme is normalized to before decoding
_TARGET = {
    "IOB2": "IOB2",
    "IOB1": "IOB2",
    "IOBES": "IOBES",
    "BILOU": "IOBES",
    "IOE1": "IOE2",
    "IOE2": "IOE2",
}
ALLOWED_PREFIXES: dict[str, frozenset[str]] = {
    "IOB2": frozenset("BIO"),
    "IOB1": frozenset("BIO"),
    "IOBES": frozenset("BIESO"),
    "BILOU": frozenset("BILUO"),
    "IOE1": frozenset("IEO"),
    "IOE2": frozenset("IEO"),
}


def split_tag(tag: str) -> tuple[str, str]:
    """``(prefix, type)`` of a tag, seqeval's rule.

    >>> split_tag("B-GRP.HER.MUS"), split_tag("B-NL-ISIL"), split_tag("O"), split_tag("B")
    (('B', 'GRP.HER.MUS'), ('B', 'NL-ISIL'), ('O', '_'), ('B', '_'))
    """
    if not isinstance(tag, str) or not tag:
        raise TagSchemeError(f"tag {tag!r} is not a non-empty string (expected e.g. B-LOC or O)")
    return tag[0], tag[1:].split("-", 1)[-1] or "_"


_PARTS: dict[str, tuple[str, str]] = {}


def _parts(tags: Sequence[str]) -> list[tuple[str, str]]:
    """:func:`split_tag` of every tag, memoized (a corpus has few distinct tags)."""
    cache = _PARTS
    out = []
    for t in tags:
        p = cache.get(t) if isinstance(t, str) else None
        if p is None:
            p = split_tag(t)
            if len(cache) < 100_000:
                cache[t] = p
        out.append(p)
    return out


def _check_scheme(scheme: str) -> None:
    if scheme not in _TARGET:
        raise TagSchemeError(
            f"unknown tag scheme '{scheme}' (expected one of {', '.join(SCHEMES)})"
        )


def normalize(tags: Sequence[str], scheme: str = "IOB2") -> list[str]:
    """Rewrite one sentence's tags into the scheme it decodes as: IOB1 → IOB2 (an ``I-X`` that
    starts a chunk becomes ``B-X``), IOE1 → IOE2 (an ``I-X`` that ends a chunk becomes ``E-X``),
    BILOU → IOBES (``L`` → ``E``, ``U`` → ``S``); IOB2, IOE2 and IOBES are returned unchanged.

    >>> normalize(["I-MUS", "I-MUS", "B-MUS", "O", "I-LOC"], "IOB1")
    ['B-MUS', 'I-MUS', 'B-MUS', 'O', 'B-LOC']
    >>> normalize(["I-MUS", "E-MUS", "I-MUS", "O"], "IOE1")
    ['I-MUS', 'E-MUS', 'E-MUS', 'O']
    """
    _check_scheme(scheme)
    out = list(tags)
    if scheme == "BILOU":
        return [
            ("E" + t[1:]) if t[:1] == "L" else (("S" + t[1:]) if t[:1] == "U" else t) for t in out
        ]
    if scheme == "IOB1":
        prev_p, prev_t = "O", ""
        for i, tag in enumerate(out):
            p, t = split_tag(tag)
            if p == "I" and (prev_p in ("O", "E", "S") or prev_t != t):
                out[i] = "B" + tag[1:]
            prev_p, prev_t = p, t
        return out
    if scheme == "IOE1":
        nxt_p, nxt_t = "O", ""
        for i in range(len(out) - 1, -1, -1):
            p, t = split_tag(out[i])
            if p == "I" and (nxt_p in ("O", "B", "S") or nxt_t != t):
                out[i] = "E" + out[i][1:]
            nxt_p, nxt_t = p, t
        return out
    return out


def _check_prefixes(tags: Sequence[str], allowed: frozenset[str], scheme: str, sent: int) -> None:
    bad = [
        t
        for t in set(tags)
        if not isinstance(t, str) or t[:1] not in allowed or (t[:1] == "O" and t != "O")
    ]
    if not bad:
        return
    for i, tag in enumerate(tags):
        split_tag(tag)  # a non-string raises here
        if tag[:1] == "O" and tag != "O":
            raise TagSchemeError(
                f"sentence {sent + 1}, token {i + 1}: tag '{tag}' starts with O but is not 'O' "
                "(expected 'O' alone, or a B/I/E/S prefix)"
            )
        if split_tag(tag)[0] not in allowed:
            raise TagSchemeError(
                f"sentence {sent + 1}, token {i + 1}: tag '{tag}' has prefix '{tag[0]}', which "
                f"{scheme} does not allow (expected one of {', '.join(sorted(allowed))})"
            )


def _decode_lenient(tags: Sequence[str]) -> list[Chunk]:
    # seqeval.metrics.sequence_labeling.get_entities, with half-open ends
    chunks: list[Chunk] = []
    prev_tag, prev_type, begin = "O", "", 0
    parts = _parts(tags)
    parts.append(("O", "_"))
    for i, (tag, type_) in enumerate(parts):
        if tag == "O" and prev_tag == "O":  # nothing ends or starts between two O tags
            prev_type = type_
            continue
        end = prev_tag in ("E", "S") or (
            (prev_tag in ("B", "I") and tag in ("B", "S", "O"))
            or (prev_tag != "O" and prev_type != type_)
        )
        if end:
            chunks.append((prev_type, begin, i))
        start = (
            tag in ("B", "S")
            or (prev_tag in ("E", "S") and tag in ("E", "I"))
            or (prev_tag == "O" and tag in ("E", "I"))
            or (tag != "O" and prev_type != type_)
        )
        if start:
            begin = i
        prev_tag, prev_type = tag, type_
    return chunks


# seqeval.scheme patterns: (previous prefixes, current prefixes, type condition)
_SAME, _DIFF, _ANY = "same", "diff", "any"
_PATTERNS = {
    "IOB2": {
        "start": (("BIO", "B", _ANY),),
        "inside": (("B", "I", _SAME), ("I", "I", _SAME)),
        "end": (
            ("I", "O", _ANY),
            ("I", "I", _DIFF),
            ("I", "B", _ANY),
            ("B", "O", _ANY),
            ("B", "I", _DIFF),
            ("B", "B", _ANY),
        ),
    },
    "IOE2": {
        "start": (
            ("O", "I", _ANY),
            ("O", "E", _ANY),
            ("E", "I", _ANY),
            ("E", "E", _ANY),
            ("I", "I", _DIFF),
            ("I", "E", _DIFF),
        ),
        "inside": (("I", "E", _SAME), ("I", "I", _SAME)),
        "end": (("E", "IOE", _ANY),),
    },
    "IOBES": {
        "start": (("BIESO", "B", _ANY), ("BIESO", "S", _ANY)),
        "inside": (("B", "I", _SAME), ("B", "E", _SAME), ("I", "I", _SAME), ("I", "E", _SAME)),
        "end": (("S", "BIESO", _ANY), ("E", "BIESO", _ANY)),
    },
}


def _match(patterns: tuple, prev: tuple[str, str], cur: tuple[str, str]) -> bool:
    for pp, cp, cond in patterns:
        if (
            prev[0] in pp
            and cur[0] in cp
            and (cond == _ANY or (cond == _SAME) == (prev[1] == cur[1]))
        ):
            return True
    return False


def _decode_strict(tags: Sequence[str], target: str) -> list[Chunk]:
    # seqeval.scheme.Tokens.entities, step for step
    pat = _PATTERNS[target]
    outside = ("O", "_")
    ext = _parts(tags)
    ext.append(outside)
    chunks: list[Chunk] = []
    i, prev = 0, outside
    while i < len(ext):
        tok = ext[i]
        if _match(pat["start"], prev, tok):
            end = i + 1
            inner = tok
            while end < len(ext) and _match(pat["inside"], inner, ext[end]):
                inner = ext[end]
                end += 1
            if _match(pat["end"], ext[end - 1], ext[end]):
                chunks.append((tok[1], i, end))
            i = end
        else:
            i += 1
        prev = ext[i - 1]
    return chunks


def decode(
    tags: Sequence[str],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
    sentence: int = 0,
) -> list[Chunk]:
    """Decode one sentence into ``(type, start, end)`` chunks (half-open token ranges).

    ``mode="lenient"`` (default) is seqeval's default mode: any of ``B I E S O`` is read and
    ill-formed chunks are repaired the way conlleval does. ``mode="strict"`` keeps only chunks
    well-formed under ``scheme`` and raises :class:`TagSchemeError` for a prefix the scheme does
    not allow. The input is normalized first (:func:`normalize`).
    """
    _check_scheme(scheme)
    if mode not in ("lenient", "strict"):
        raise TagSchemeError(f"unknown decoding mode '{mode}' (expected 'lenient' or 'strict')")
    target = _TARGET[scheme]
    if mode == "strict":
        _check_prefixes(tags, ALLOWED_PREFIXES[scheme], scheme, sentence)
        return _decode_strict(normalize(tags, scheme), target)
    allowed = frozenset("BIESO") | ALLOWED_PREFIXES[scheme]
    _check_prefixes(tags, allowed, "lenient decoding", sentence)
    return _decode_lenient(normalize(tags, scheme))


def is_well_formed(tags: Sequence[str], scheme: str = "IOB2") -> bool:
    """True when strict decoding keeps every non-``O`` tag (the sequence needs no repair)."""
    try:
        chunks = decode(tags, scheme=scheme, mode="strict")
    except TagSchemeError:  # a prefix the scheme does not allow
        return False
    covered = sum(e - s for _, s, e in chunks)
    return covered == sum(1 for t in tags if t[:1] != "O")


def encode(chunks: Sequence[Chunk], n_tokens: int, *, scheme: str = "IOB2") -> list[str]:
    """Tags for ``n_tokens`` tokens with the given non-overlapping ``(type, start, end)`` chunks."""
    _check_scheme(scheme)
    tags = ["O"] * n_tokens
    ordered = sorted(chunks, key=lambda c: (c[1], c[2]))
    prev_end, prev_type = -1, None
    for k, (typ, s, e) in enumerate(ordered):
        if not 0 <= s < e <= n_tokens:
            raise TagSchemeError(f"chunk {typ} {s}-{e} is outside 0-{n_tokens}")
        if s < prev_end:
            raise TagSchemeError(f"chunks overlap at token {s} (tags cannot express overlap)")
        nxt = ordered[k + 1] if k + 1 < len(ordered) else None
        touches_prev = s == prev_end and prev_type == typ
        touches_next = nxt is not None and nxt[1] == e and nxt[0] == typ
        length = e - s
        if scheme == "IOB2":
            seq = ["B"] + ["I"] * (length - 1)
        elif scheme == "IOB1":
            seq = ["B" if touches_prev else "I"] + ["I"] * (length - 1)
        elif scheme == "IOE2":
            seq = ["I"] * (length - 1) + ["E"]
        elif scheme == "IOE1":
            seq = ["I"] * (length - 1) + ["E" if touches_next else "I"]
        elif scheme == "IOBES":
            seq = ["S"] if length == 1 else ["B"] + ["I"] * (length - 2) + ["E"]
        else:  # BILOU
            seq = ["U"] if length == 1 else ["B"] + ["I"] * (length - 2) + ["L"]
        for j, p in enumerate(seq):
            tags[s + j] = f"{p}-{typ}"
        prev_end, prev_type = e, typ
    return tags
