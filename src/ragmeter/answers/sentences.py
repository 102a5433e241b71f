"""``--lsum-split nltk``: NLTK's sentence splitter, from locally installed data only."""

from __future__ import annotations

from ragmeter.errors import UsageError

__all__ = ["check_nltk_punkt", "nltk_sentences"]

_RESOURCES = ("tokenizers/punkt_tab/english/", "tokenizers/punkt/english.pickle")


def check_nltk_punkt() -> None:
    """Raise :class:`UsageError` unless NLTK's punkt data is installed (it is never downloaded)."""
    import nltk

    for resource in _RESOURCES:
        try:
            nltk.data.find(resource)
            return
        except LookupError:
            continue
    raise UsageError(
        "--lsum-split nltk needs NLTK's punkt sentence data, which is not installed and is never "
        "downloaded (install it with: python -m nltk.downloader punkt_tab)"
    )


def nltk_sentences(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)``, as rouge-score's ``split_summaries=True`` calls it."""
    import nltk

    return nltk.sent_tokenize(text)
