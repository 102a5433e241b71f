"""Text analysis for BM25: bm25s's tokeniser, its stopword lists and Snowball stemmers.

The steps are bm25s's own (``bm25s.tokenize``): lowercase, tokens matching
``(?u)\\b\\w\\w+\\b``, stopword removal, then stemming. Stemming runs once per distinct word
(the vocabulary), not once per token, which is what keeps a 100,000-passage corpus fast.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError, UsageError

__all__ = ["Analyzer", "import_bm25s"]

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
HINT = "pip install 'ragmeter[baselines]'"

# ISO 639-1 code -> (bm25s stopword list name, Snowball stemmer name of PyStemmer)
LANGUAGES: dict[str, tuple[str | None, str | None]] = {
    "en": ("en", "english"),
    "de": ("de", "german"),
    "nl": ("nl", "dutch"),
    "fr": ("fr", "french"),
    "es": ("es", "spanish"),
    "pt": ("pt", "portuguese"),
    "it": ("it", "italian"),
    "ru": ("ru", "russian"),
    "sv": ("sv", "swedish"),
    "no": ("no", "norwegian"),
    "da": ("da", "danish"),
    "tr": ("tr", "turkish"),
    "ko": ("ko", None),
    "zh": ("zh", None),
    "ar": (None, "arabic"),
    "fi": (None, "finnish"),
    "hu": (None, "hungarian"),
    "ro": (None, "romanian"),
}


class MissingBaselinesExtra(UsageError):
    """bm25s, PyStemmer or rapidfuzz is missing."""

    extra = "baselines"


@contextlib.contextmanager
def _numba_hidden() -> Iterator[None]:
    """Import bm25s without numba: results never depend on a JIT, and no warm-up is paid.

    bm25s tries ``import numba`` at import time; a ``None`` entry in ``sys.modules`` makes that
    import fail cleanly. A numba that is already imported is left alone.
    """
    if "numba" in sys.modules:
        yield
        return
    sys.modules["numba"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if sys.modules.get("numba", 0) is None:
            del sys.modules["numba"]


def import_bm25s(command: str = "ragmeter baseline bm25") -> Any:
    """``bm25s``, imported with numba hidden, or a usage error naming the extra."""
    loaded = sys.modules.get("bm25s")
    if loaded is not None:
        return loaded
    try:
        with _numba_hidden():
            import bm25s
    except ImportError:
        raise MissingBaselinesExtra(f"{command}: needs the baselines extra ({HINT})") from None
    return bm25s


def _stemmer(name: str) -> Any:
    try:
        import Stemmer
    except ImportError:
        raise MissingBaselinesExtra(
            f"ragmeter baseline bm25: Snowball stemming needs PyStemmer ({HINT})"
        ) from None
    return Stemmer.Stemmer(name)


def read_stopword_file(path: str) -> list[str]:
    """One stopword per line (blank lines and ``#`` comments ignored)."""
    from ragmeter.io.files import read_text

    words = []
    for line in read_text(path).splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.append(word.lower())
    if not words:
        raise InputError("no stopwords (expected one word per line)", path=path)
    return words


@dataclass
class Analyzer:
    """Tokeniser + stopwords + stemmer for one language; ``analyze(text)`` gives terms."""

    language: str = "en"
    stopwords: str = "auto"  # auto (the language's bm25s list), none, or a file path
    stemmer: str = "snowball"  # snowball or none
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.stemmer not in ("snowball", "none"):
            raise UsageError(f"--stemmer {self.stemmer!r} (expected snowball or none)")
        lists, stem_name = LANGUAGES.get(self.language, (None, None))
        if self.language not in LANGUAGES:
            self.warnings.append(
                f"language {self.language!r} has no stopword list or stemmer: "
                "tokens are used as they are"
            )
        self._stop: frozenset[str] = frozenset()
        if self.stopwords == "auto":
            if lists is not None:
                bm25s = import_bm25s()
                self._stop = frozenset(bm25s.tokenization._infer_stopwords(lists))
            elif self.language in LANGUAGES:
                self.warnings.append(f"language {self.language!r} has no stopword list")
        elif self.stopwords != "none":
            self._stop = frozenset(read_stopword_file(self.stopwords))
        self._stem: Any = None
        if self.stemmer == "snowball":
            if stem_name is not None:
                self._stem = _stemmer(stem_name)
            elif self.language in LANGUAGES:
                self.warnings.append(f"language {self.language!r} has no Snowball stemmer")
        self._regex = re.compile(TOKEN_PATTERN)
        self._stem_name = stem_name if self._stem is not None else None

    def settings(self) -> dict[str, Any]:
        """What the analysis depends on (recorded in sidecars and the index manifest)."""
        return {
            "tokenizer": TOKEN_PATTERN,
            "lowercase": True,
            "language": self.language,
            "stopwords": self.stopwords,
            "stopword_count": len(self._stop),
            "stemmer": self._stem_name,
        }

    def words(self, text: str) -> list[str]:
        """Lowercased tokens without stopwords (before stemming)."""
        stop = self._stop
        return [w for w in self._regex.findall(text.lower()) if w not in stop]

    def stem_map(self, words: Sequence[str]) -> list[str]:
        """The stem of each distinct word (identity without a stemmer)."""
        if self._stem is None:
            return list(words)
        return self._stem.stemWords(list(words))

    def analyze(self, text: str) -> list[str]:
        """The terms of ``text``: what BM25 indexes and scores."""
        words = self.words(text)
        return self.stem_map(words) if words else []
