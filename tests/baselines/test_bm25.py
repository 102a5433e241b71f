"""BM25: the same scores as bm25s and as the Lucene formula, ragmeter's tie order, index reuse."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from ragmeter.baselines import BM25Index
from ragmeter.baselines.analyzers import Analyzer, import_bm25s
from ragmeter.baselines.inputs import corpus_from_records
from tests.baselines.conftest import synthetic
from tests.helpers import REPO


def _bm25s_top10(docs, queries, *, k1, b, stopwords, stemmer):
    """bm25s used directly: its tokenizer, index and retrieve."""
    bm25s = import_bm25s()
    import Stemmer

    stem = Stemmer.Stemmer("english") if stemmer else None
    texts = [d["text"] for d in docs]
    toks = bm25s.tokenize(texts, stopwords=stopwords, stemmer=stem, show_progress=False)
    ret = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
    ret.index(toks, show_progress=False)
    out = {}
    for qid, text in queries:
        q = bm25s.tokenize(
            [text], stopwords=stopwords, stemmer=stem, return_ids=False, show_progress=False
        )[0]
        q = [t for t in q if t in ret.vocab_dict]
        if not q:
            out[qid] = []
            continue
        scores = ret.get_scores(q)
        out[qid] = sorted(scores[scores > 0].tolist(), reverse=True)[:10]
    return out


@pytest.mark.parametrize(
    ("preset", "k1", "b", "stemmer"), [("default", 0.9, 0.4, True), ("ultrarag", 1.5, 0.75, False)]
)
def test_top10_scores_equal_bm25s(synth, preset, k1, b, stemmer) -> None:
    docs, queries = synth
    ours = BM25Index.build(docs, preset=preset).search(queries, k=10)
    theirs = _bm25s_top10(docs, queries, k1=k1, b=b, stopwords="en", stemmer=stemmer)
    for qid, _ in queries:
        assert [s for _, s in ours.results[qid]] == theirs[qid], qid
    assert sum(len(v) for v in theirs.values()) > 300  # the comparison is not vacuous


def _lucene(docs_terms, query_terms, k1, b):
    n = len(docs_terms)
    avgdl = sum(len(d) for d in docs_terms) / n
    df = Counter(t for d in docs_terms for t in set(d))
    out = []
    for d in docs_terms:
        tf = Counter(d)
        s = 0.0
        for t in query_terms:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


@settings(max_examples=40, deadline=None)
@given(
    hst.lists(
        hst.lists(hst.sampled_from(["aa", "bb", "cc", "dd", "ee", "ff"]), min_size=1, max_size=12),
        min_size=2,
        max_size=12,
    ),
    hst.lists(hst.sampled_from(["aa", "bb", "cc", "zz"]), min_size=1, max_size=4),
)
def test_scores_follow_the_lucene_formula(docs_terms, query) -> None:
    docs = [{"id": f"d{i}", "text": " ".join(t)} for i, t in enumerate(docs_terms)]
    idx = BM25Index.build(docs, stopwords="none", stemmer="none")
    got = dict(idx.search_one(" ".join(query), k=100))
    want = _lucene(docs_terms, query, 0.9, 0.4)
    for i, w in enumerate(want):
        if w > 0:
            assert got[f"d{i}"] == pytest.approx(w, rel=1e-6)
        else:
            assert f"d{i}" not in got  # zero-score documents are absent


def test_ties_go_by_id_descending_also_at_the_kth_score() -> None:
    docs = [{"id": i, "text": "museum archive"} for i in ("a1", "c3", "b2", "e5", "d4")]
    docs.append({"id": "z9", "text": "museum museum library"})
    idx = BM25Index.build(docs, stopwords="none", stemmer="none")
    got = idx.search_one("museum archive", k=3)
    assert [d for d, _ in got] == ["e5", "d4", "c3"]  # tied: by id descending, not index
    assert got[0][1] == got[2][1]
    assert [d for d, _ in idx.search_one("library", k=10)] == ["z9"]  # zero scores absent


def test_all_stopword_query_has_no_lines(tmp_path) -> None:
    from ragmeter.baselines.runs import write_run

    idx = BM25Index.build([{"id": "d1", "text": "the museum"}])
    run = idx.search([("q1", "the and of"), ("q2", "museum")], k=5)
    assert run.empty == ["q1"] and run.results["q1"] == []
    write_run(run, tmp_path / "r.trec", tag="t")
    assert (tmp_path / "r.trec").read_text().splitlines() == [
        f"q2 Q0 d1 1 {float(run.results['q2'][0][1])!r} t"
    ]


def test_run_reads_back_in_rank_order(synth, tmp_path) -> None:
    from ragmeter.baselines.runs import write_run
    from ragmeter.io.trec import read_run

    docs, queries = synth
    run = BM25Index.build(docs).search(queries, k=20)
    write_run(run, tmp_path / "r.trec", tag="x")
    back = read_run(tmp_path / "r.trec").to_table()
    by_q: dict = {}
    for q, d, s in zip(
        back["qid"].to_pylist(), back["docno"].to_pylist(), back["score"].to_pylist(), strict=True
    ):
        by_q.setdefault(q, []).append((d, s))
    for qid, pairs in by_q.items():
        evaluated = sorted(pairs, key=lambda p: (-p[1], [-c for c in p[0].encode()]))
        assert evaluated == pairs == run.results[qid]  # scores read back exactly


def test_shuffled_corpus_and_queries_give_the_same_rankings(synth) -> None:
    docs, queries = synth
    a = BM25Index.build(docs).search(queries, k=30)
    rng = random.Random(3)
    d2, q2 = docs[:], queries[:]
    rng.shuffle(d2)
    rng.shuffle(q2)
    b = BM25Index.build(d2).search(q2, k=30)
    assert all(a.results[q] == b.results[q] for q, _ in queries)


def test_analyzer_languages() -> None:
    nl = Analyzer("nl")
    assert nl.analyze("De musea en de bibliotheken") == ["musea", "bibliotheek"]
    assert Analyzer("en").analyze("a museum, libraries X") == ["museum", "librari"]
    assert Analyzer("en", stemmer="none").analyze("the libraries") == ["libraries"]
    xx = Analyzer("xx")
    assert xx.warnings == [
        "language 'xx' has no stopword list or stemmer: tokens are used as they are"
    ]
    assert xx.analyze("Het museum") == ["het", "museum"]


def test_index_is_reused_or_rebuilt_with_the_reason(synth, tmp_path) -> None:
    docs, queries = synth
    corpus = corpus_from_records(docs)
    first = BM25Index.open(tmp_path / "idx", corpus)
    assert not first.reused and first.rebuild_reason == "no saved index"
    again = BM25Index.open(tmp_path / "idx", corpus)
    assert again.reused
    assert again.search(queries, 10).results == first.search(queries, 10).results
    changed = BM25Index.open(tmp_path / "idx", corpus, k1=1.2)
    assert changed.rebuild_reason == "changed: parameters"
    docs2 = [dict(d) for d in docs]
    docs2[0]["text"] += " extra"
    other = BM25Index.open(tmp_path / "idx", corpus_from_records(docs2), k1=1.2)
    assert other.rebuild_reason == "changed: corpus"


def test_bm25_never_imports_numba(tmp_path) -> None:
    docs, queries = synthetic(1, 30, 3)
    from tests.baselines.conftest import write_jsonl

    c = write_jsonl(tmp_path / "c.jsonl", docs)
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": a, "text": t} for a, t in queries])
    code = (
        "import sys\nfrom ragmeter.cli.entry import main\n"
        f"rc = main(['baseline', 'bm25', '--corpus', {str(c)!r}, '--queries', {str(q)!r}, "
        f"'-o', {str(tmp_path / 'r.trec')!r}])\n"
        "print(rc, 'numba' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.stdout.split() == ["0", "False"], proc.stderr


def _variant(method, docs_terms, query_terms, k1=1.2, b=0.75, delta=0.5):
    """The BM25 variants as Kamphuis, de Vries, Boytsov and Lin (ECIR 2020) define them."""
    n = len(docs_terms)
    avgdl = sum(len(d) for d in docs_terms) / n
    df = Counter(t for d in docs_terms for t in set(d))
    idf = {
        "robertson": lambda f: math.log(max((n - f + 0.5) / (f + 0.5), 1.0)),
        "atire": lambda f: math.log(n / f),
        "bm25l": lambda f: math.log((n + 1) / (f + 0.5)),
        "bm25+": lambda f: math.log((n + 1) / f),
    }[method]

    def tfc(tf, dl):
        norm = 1 - b + b * dl / avgdl
        if method == "robertson":
            return tf / (k1 * norm + tf)
        if method == "atire":
            return tf * (k1 + 1) / (tf + k1 * norm)
        if method == "bm25l":
            c = tf / norm
            return (k1 + 1) * (c + delta) / (k1 + c + delta)
        return (k1 + 1) * tf / (k1 * norm + tf) + delta

    scores = []
    for d in docs_terms:
        tf = Counter(d)
        scores.append(sum(idf(df[t]) * tfc(tf[t], len(d)) for t in query_terms if df[t]))
    return scores


@pytest.mark.parametrize("method", ["robertson", "atire", "bm25l", "bm25+"])
@settings(max_examples=25, deadline=None)
@given(
    docs_terms=hst.lists(
        hst.lists(hst.sampled_from(["aa", "bb", "cc", "dd", "ee"]), min_size=1, max_size=10),
        min_size=2,
        max_size=10,
    ),
    query=hst.lists(hst.sampled_from(["aa", "bb", "zz"]), min_size=1, max_size=3),
)
def test_other_methods_follow_their_published_formulas(method, docs_terms, query) -> None:
    docs = [{"id": f"d{i}", "text": " ".join(t)} for i, t in enumerate(docs_terms)]
    idx = BM25Index.build(docs, method=method, k1=1.2, b=0.75, stopwords="none", stemmer="none")
    got = dict(idx.search_one(" ".join(query), k=100))
    for i, want in enumerate(_variant(method, docs_terms, query)):
        if want > 1e-6:
            assert got[f"d{i}"] == pytest.approx(want, rel=1e-5, abs=1e-6)
        else:
            assert got.get(f"d{i}", 0.0) == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize(
    ("language", "stopwords", "stemmer", "warnings"),
    [
        ("de", 232, "german", []),
        ("nl", 101, "dutch", []),
        ("zh", 841, None, ["language 'zh' has no Snowball stemmer"]),
        ("fi", 0, "finnish", ["language 'fi' has no stopword list"]),
    ],
)
def test_stopword_lists_and_stemmers_by_language(language, stopwords, stemmer, warnings) -> None:
    analyzer = Analyzer(language)
    settings_ = analyzer.settings()
    assert (settings_["stopword_count"], settings_["stemmer"]) == (stopwords, stemmer)
    assert analyzer.warnings == warnings
