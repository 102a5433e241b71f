"""ROUGE bit-identical to rouge-score 0.1.2 and pltrdy rouge 1.0.1 (docs/answers.md, ROUGE).

Values are compared with ``==`` on P, R and F: the engine must reproduce the reference's floats
exactly, not approximately.
"""

from __future__ import annotations

import random

import pytest
import rouge as pltrdy
import rouge_score.tokenize as rs_tokenize
from hypothesis import given, settings
from hypothesis import strategies as hs
from rouge_score import rouge_scorer

from ragmeter.answers import rouge as ra_rouge
from ragmeter.answers.rouge_engine import RougeEngine
from ragmeter.answers.rouge_pltrdy import UpstreamError, pltrdy_prf, pltrdy_scores
from ragmeter.answers.tokenize import _scan, rouge_score_tokens, unicode_tokens

ALL_TYPES = (*(f"rouge-{n}" for n in range(1, 10)), "rouge-l", "rouge-lsum")
RS_NAME = {"rouge-l": "rougeL", "rouge-lsum": "rougeLsum"}


def rs_name(t: str) -> str:
    return RS_NAME.get(t, "rouge" + t[6:])


# Words that share stems, stop words, digits, punctuation, non-ASCII letters (erased by
# rouge-score's tokenizer), the Kelvin sign and dotted capital I (which lower() to ASCII), a
# ligature, CJK, and line breaks for ROUGE-Lsum.
WORDS = [
    "cat",
    "cats",
    "running",
    "runs",
    "run",
    "quickly",
    "quick",
    "the",
    "a",
    "of",
    "dog",
    "generalization",
    "generalize",
    "happiness",
    "happy",
    "ies",
    "sses",
    "agreed",
    "1972",
    "x1",
    "Paris",
    "PARIS",
    "café",
    "Zürich",
    "Straße",
    "\u212a",
    "\u0130stanbul",
    "ﬁne",
    "北京",
    "K-pop",
    "don't",
    "U.S.",
    "x_y",
    "ＡＢＣ",
    "naïve",
]
SEPS = [" ", " ", " ", ", ", ". ", "\n", "\n\n", " \n ", "  ", "\t", "!", "-"]


@hs.composite
def texts(draw, max_words: int = 14) -> str:
    n = draw(hs.integers(0, max_words))
    parts = []
    for _ in range(n):
        parts.append(draw(hs.sampled_from(WORDS)))
        parts.append(draw(hs.sampled_from(SEPS)))
    return "".join(parts)


@settings(max_examples=400)
@given(text=hs.one_of(texts(), hs.text(max_size=40)), stem=hs.booleans())
def test_tokenizer_identical_to_rouge_score(text, stem):
    from nltk.stem import porter

    stemmer = porter.PorterStemmer() if stem else None
    assert rouge_score_tokens(text, stem=stem) == rs_tokenize.tokenize(text, stemmer)


@settings(max_examples=300)
@given(text=hs.text(alphabet=hs.characters(max_codepoint=127), max_size=60), stem=hs.booleans())
def test_unicode_tokenizer_equals_rouge_score_on_ascii(text, stem):
    from nltk.stem import porter

    stemmer = porter.PorterStemmer() if stem else None
    expected = rs_tokenize.tokenize(text, stemmer)
    assert unicode_tokens(text, stem=stem) == expected
    if not stem:  # the character scan itself, not only the ASCII fast path
        assert _scan(text.lower()) == expected


def _compare(pred, golds, types, stem):
    scorer = rouge_scorer.RougeScorer([rs_name(t) for t in types], use_stemmer=stem)
    ours = RougeEngine(types, stem=stem).per_gold(pred, golds)
    for gold, row in zip(golds, ours, strict=True):
        ref = scorer.score(gold, pred)
        for t, mine in zip(types, row, strict=True):
            assert tuple(mine) == tuple(ref[rs_name(t)]), (t, gold, pred)


@settings(max_examples=400)
@given(
    pred=texts(),
    golds=hs.lists(texts(), min_size=1, max_size=3),
    types=hs.lists(hs.sampled_from(ALL_TYPES), min_size=1, max_size=4, unique=True),
    stem=hs.booleans(),
)
def test_rouge_bit_identical_on_random_text(pred, golds, types, stem):
    _compare(pred, golds, types, stem)


@settings(max_examples=200)
@given(pred=texts(), golds=hs.lists(texts(), min_size=1, max_size=4), stem=hs.booleans())
def test_max_over_golds_is_score_multi(pred, golds, stem):
    types = ("rouge-1", "rouge-2", "rouge-l", "rouge-lsum")
    scorer = rouge_scorer.RougeScorer([rs_name(t) for t in types], use_stemmer=stem)
    ref = scorer.score_multi(golds, pred)
    ours = ra_rouge(pred, golds, types=types, stem=stem)
    for t in types:
        assert tuple(ours[t]) == tuple(ref[rs_name(t)])


def test_conformance_vectors_bit_identical_to_rouge_score():
    """On every answer vector, squad (raw text) and ultrarag (normalised, stemmed) ROUGE
    equal rouge-score's, value for value, for every gold."""
    from ragmeter.answers import normalize
    from tests.answers.conftest import vectors

    types = ("rouge-1", "rouge-2", "rouge-l", "rouge-lsum")
    for vec in vectors()["answer_vectors"]:
        pred, golds = vec["prediction"], vec["golds"]
        _compare(pred, golds, types, stem=False)
        _compare(
            normalize(pred, profile="ultrarag"),
            [normalize(g, profile="ultrarag") for g in golds],
            types,
            stem=True,
        )


def test_lsum_backtracking_tie_break():
    """Vector ans-22: rouge-score's union of LCS positions depends on which LCS is read back."""
    _compare("cat\ndog cat", ["cat dog cat"], ["rouge-lsum"], False)
    [row] = RougeEngine(["rouge-lsum"]).per_gold("cat\ndog cat", ["cat dog cat"])
    assert row[0].fmeasure == pytest.approx(2 / 3, abs=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("stem", [False, True], ids=["no-stem", "stem"])
def test_rouge_bit_identical_on_10000_synthetic_pairs(stem):
    """10,000 pairs of ``benchmarks/rouge_data.py`` (seed 7, not the benchmark's 13), a third of
    them broken into lines for ROUGE-Lsum."""
    from nltk.stem import porter
    from rouge_score import tokenizers

    from benchmarks.rouge_data import make_pairs, multiline

    class CachedPorter:  # the same stems, memoised: rouge-score re-stems every token it sees
        def __init__(self) -> None:
            self.stemmer, self.cache = porter.PorterStemmer(), {}

        def stem(self, word: str) -> str:
            if word not in self.cache:
                self.cache[word] = self.stemmer.stem(word)
            return self.cache[word]

    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=False)
    tokenizer._stemmer = CachedPorter() if stem else None
    rnd = random.Random(7)
    pairs = make_pairs(10_000, seed=7)
    types = ("rouge-1", "rouge-2", "rouge-l", "rouge-lsum")
    scorer = rouge_scorer.RougeScorer([rs_name(t) for t in types], tokenizer=tokenizer)
    engine = RougeEngine(types, stem=stem)
    unequal = 0
    for i, (ref, pred) in enumerate(pairs):
        if i % 3 == 0:
            ref, pred = multiline(ref, rnd), multiline(pred, rnd)
        theirs = scorer.score(ref, pred)
        [mine] = engine.per_gold(pred, [ref])
        for t, s in zip(types, mine, strict=True):
            unequal += tuple(s) != tuple(theirs[rs_name(t)])
    assert unequal == 0


# -- pltrdy rouge 1.0.1 (flashrag) --------------------------------------------------------------
PIECES = [
    "Paris",
    "paris",
    "is",
    "the",
    "capital",
    "Yes,",
    "yes",
    "no",
    "cat",
    "CAT",
    "a",
    "x",
    "",
    " ",
    "  ",
    ".",
    "..",
    ". .",
    "\n",
    "\t",
    "Obama.",
    "u.s",
    "b",
]


def _pltrdy_text(rnd: random.Random) -> str:
    return "".join(
        rnd.choice(PIECES) + rnd.choice([" ", "", ".", " . ", "  ", ".  ."])
        for _ in range(rnd.randint(0, 14))
    )


def test_pltrdy_identical_on_3000_random_texts():
    """Full stops, empty and whitespace-only pieces, mixed case; where pltrdy raises,
    ragmeter raises the same UpstreamError (and the scorer maps it to 0.0 plus a flag)."""
    rnd = random.Random(3)
    scorer = pltrdy.Rouge(metrics=["rouge-1", "rouge-2", "rouge-3", "rouge-l"])
    raised = 0
    for _ in range(3000):
        hyp, ref = _pltrdy_text(rnd), _pltrdy_text(rnd)
        try:
            theirs = scorer.get_scores(hyp, ref)[0]
        except ValueError as exc:
            raised += 1
            with pytest.raises(UpstreamError, match=str(exc).replace(".", r"\.")):
                pltrdy_scores(hyp, ref, [1, 2, 3], True)
            continue
        mine = pltrdy_prf(hyp, ref, [1, 2, 3], True)
        for key, t in ((1, "rouge-1"), (2, "rouge-2"), (3, "rouge-3"), ("l", "rouge-l")):
            assert mine[key] == (theirs[t]["p"], theirs[t]["r"], theirs[t]["f"]), (hyp, ref, t)
            assert pltrdy_scores(hyp, ref, [1, 2, 3], True)[key] == theirs[t]["f"]
        api = ra_rouge(hyp, [ref], types=("rouge-1", "rouge-l"), profile="flashrag")
        assert tuple(api["rouge-l"]) == (
            theirs["rouge-l"]["p"],
            theirs["rouge-l"]["r"],
            theirs["rouge-l"]["f"],
        )
    assert 100 < raised < 2900  # both branches exercised


def test_pltrdy_error_maps_to_zero_and_flag():
    import ragmeter.answers as ra

    s = ra.score("...", ["x", "y."], metrics=["rouge-1", "rouge-l"], profile="flashrag")
    assert s.values == {"rouge-1": 0.0, "rouge-l": 0.0}
    assert s.flags == ["rouge_upstream_error"]
    # as FlashRAG's one try/except: the sample scores 0.0, even when another gold would match
    s = ra.score("x", ["...", "x"], metrics=["rouge-1"], profile="flashrag")
    assert s.values["rouge-1"] == 0.0
    assert s.flags == ["rouge_upstream_error"]
    assert ra.rouge("x", ["...", "x"], types=("rouge-1",), profile="flashrag")["rouge-1"] == (
        0.0,
        0.0,
        0.0,
    )


def test_pltrdy_long_sentence_does_not_overflow():
    """pltrdy's recursive LCS read-out overflows Python's stack past ~1000 words; ours does not."""
    words = " ".join(f"w{i}" for i in range(1100))
    with pytest.raises(RecursionError):
        pltrdy.Rouge(metrics=["rouge-l"]).get_scores(words, words)
    assert pltrdy_scores(words, words, [], True)["l"] == pytest.approx(1.0, abs=1e-8)


@settings(max_examples=200)
@given(
    pred=texts(),
    golds=hs.lists(texts(), min_size=1, max_size=3),
    types=hs.lists(hs.sampled_from(ALL_TYPES), min_size=1, max_size=3, unique=True),
    stem=hs.booleans(),
)
def test_unicode_tokenizer_rouge_is_rouge_score_arithmetic(pred, golds, types, stem):
    """``--tokenizer unicode`` keeps rouge-score's n-gram and LCS arithmetic (tokenizer hook)."""

    class Unicode:
        def tokenize(self, text: str) -> list[str]:
            return unicode_tokens(text, stem=stem)

    scorer = rouge_scorer.RougeScorer([rs_name(t) for t in types], tokenizer=Unicode())
    ours = RougeEngine(types, tokenizer="unicode", stem=stem).per_gold(pred, golds)
    for gold, row in zip(golds, ours, strict=True):
        ref = scorer.score(gold, pred)
        for t, mine in zip(types, row, strict=True):
            assert tuple(mine) == tuple(ref[rs_name(t)])
