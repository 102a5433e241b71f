"""Answer normalisers of the three profiles (docs/answers.md).

``squad`` and ``flashrag`` share the SQuAD v1.1 ``normalize_answer``; ``ultrarag`` is UltraRAG's
``normalize_text`` (commit 015e838c), which maps ``True``/``False`` to ``yes``/``no`` and turns
punctuation into spaces instead of deleting it. Python's ``str.lower`` (not ``casefold``) and
Unicode-aware ``\\b`` are part of the contract: they are what the references run.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

__all__ = ["PROFILES", "check_profile", "normalize"]

PROFILES = ("squad", "ultrarag", "flashrag")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SQUAD_PUNCT = str.maketrans("", "", string.punctuation)
# UltraRAG replaces ASCII punctuation and three quote-like marks with a space; `_` is already a
# space by then (step 2), and the backtick UltraRAG also lists is part of string.punctuation.
_ULTRARAG_PUNCT = str.maketrans(dict.fromkeys(string.punctuation + "‘’´", " "))
_BOOLS = {"True": "yes", "False": "no"}


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known, else raise ``ValueError`` naming the choices."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (expected one of {', '.join(PROFILES)})")
    return profile


def _squad(text: str) -> str:
    text = text.lower().translate(_SQUAD_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _ultrarag(text: str) -> str:
    text = _BOOLS.get(text, text)  # the whole string, before anything else
    text = text.replace("_", " ").lower().translate(_ULTRARAG_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split()).strip()


_NORMALISERS = {"squad": _squad, "flashrag": _squad, "ultrarag": _ultrarag}


@lru_cache(maxsize=65536)
def _cached(text: str, profile: str) -> str:
    return _NORMALISERS[profile](text)


def normalize(text: str, *, profile: str = "squad") -> str:
    """Normalise an answer string the way ``profile``'s reference does.

    ``squad``/``flashrag``: lower-case, delete ASCII punctuation, replace the articles a/an/the
    by a space, collapse whitespace. ``ultrarag``: map the exact strings ``True``/``False`` to
    ``yes``/``no``, ``_`` to a space, lower-case, ASCII punctuation and ‘ ’ ´ to a space, remove
    articles, collapse whitespace.

    Parameters
    ----------
    text : str
        The answer or gold string.
    profile : {"squad", "ultrarag", "flashrag"}, default "squad"

    Returns
    -------
    str
        The normalised string (possibly empty).

    Examples
    --------
    >>> normalize("U.S. Navy")
    'us navy'
    >>> normalize("U.S. Navy", profile="ultrarag")
    'u s navy'
    >>> normalize("True", profile="ultrarag"), normalize(" True", profile="ultrarag")
    ('yes', 'true')
    >>> normalize("The president was Barack Obama.")
    'president was barack obama'
    """
    check_profile(profile)
    if not isinstance(text, str):
        raise TypeError(f"normalize() needs a str, not {type(text).__name__}")
    return _cached(text, profile)
