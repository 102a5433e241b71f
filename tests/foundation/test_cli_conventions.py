"""Conventions every command shares: -o/--output, `-` for stdin, one-line refusals."""

from __future__ import annotations

import io
import json
import sys

import pytest

from tests.answers.test_conformance import _grounded_rows, vectors
from tests.helpers import invoke

ANSWERS = [
    {"id": 0, "golden_answers": ["December 1972"], "pred_answer": "December 1972"},
    {"id": 1, "golden_answers": ["Bobby Scott"], "pred_answer": "Bob Russell"},
]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_answers_takes_dash_o(tmp_path):
    inp = _jsonl(tmp_path / "in.jsonl", ANSWERS)
    out = tmp_path / "summary.json"
    res = invoke("answers", inp, "-m", "em", "-o", str(out))
    assert res.code == 0, res.stderr
    written = json.loads(out.read_text())
    assert written["em"] == json.loads(res.stdout)["em"] == [1.0, 0.0]


def test_grounded_takes_dash_o(tmp_path):
    vec = next(v for v in vectors()["grounded_vectors"] if v["id"] == "grounded-02")
    gold, trace = _grounded_rows(vec)
    g, t = _jsonl(tmp_path / "gold.jsonl", gold), _jsonl(tmp_path / "trace.jsonl", trace)
    out = tmp_path / "grounded.json"
    res = invoke("grounded", "--gold", g, "--trace", t, "--no-fail", "-o", str(out))
    assert res.code == 0, res.stderr
    assert json.loads(out.read_text()) == json.loads(res.stdout)


def test_judge_takes_dash_o(tmp_path, monkeypatch):
    for var in ("RAGMETER_LLM_BASE_URL", "RAGMETER_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    rows = [{"id": "q1", "question": "Q?", "answer": "A.", "contexts": ["A is here"]}]
    inp = _jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "judge.json"
    res = invoke("judge", inp, "-m", "faithfulness", "-o", str(out))
    assert res.code == 0, res.stderr
    summary = json.loads(out.read_text())
    assert summary["metrics"]["faithfulness"]["status_counts"] == {"needs_llm": 1}


@pytest.fixture
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    return feed


def test_dash_reads_stdin_where_a_file_is_read(tmp_path, stdin):
    """answers, dataset and steps read `-` (once: the input hash reads the same bytes)."""
    text = "".join(json.dumps(r) + "\n" for r in ANSWERS)
    stdin(text)
    res = invoke("answers", "-", "-m", "em")
    assert (res.code, json.loads(res.stdout)["em"]) == (0, [1.0, 0.0])

    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"id": "s1", "qa_pairs": [{"qid": "q1", "golden_answers": ["x"]}]}) + "\n"
    )
    stdin(gold.read_text())
    from_stdin = invoke("dataset", "stats", "-", "--json")
    from_file = invoke("dataset", "stats", str(gold), "--json")
    assert from_stdin.code == 0, from_stdin.stderr
    a, b = json.loads(from_stdin.stdout), json.loads(from_file.stdout)
    assert a["sha256"] == b["sha256"] and a["samples"] == b["samples"] == 1

    stdin("")
    res = invoke("steps", "--reference", "-", "--responses", str(gold))
    assert (res.code, res.stderr) == (
        2,
        "<stdin>: empty file (expected a YAML or JSON list of templates)\n",
    )


def test_run_says_why_its_config_cannot_be_stdin():
    res = invoke("run", "-")
    assert res.code == 2
    assert res.stderr == (
        "ragmeter run: the config cannot come from stdin (its paths are relative to its "
        "folder; expected a file)\n"
    )


def test_agreement_takes_dash_o(tmp_path):
    a = tmp_path / "a.tsv"
    b = tmp_path / "b.tsv"
    a.write_text("id\tlabel\n1\tx\n2\ty\n3\tx\n4\ty\n")
    b.write_text("id\tlabel\n1\tx\n2\ty\n3\ty\n4\ty\n")
    out = tmp_path / "agreement.json"
    res = invoke("agreement", str(a), str(b), "--json", "-o", str(out))
    assert res.code == 0, res.stderr
    assert json.loads(out.read_text()) == json.loads(res.stdout)
    assert json.loads(res.stdout)["observed_agreement"] == 0.75


def test_conll_reads_stdin_and_refuses_a_device(tmp_path, stdin):
    gold = tmp_path / "gold.conll"
    gold.write_text("EU B-ORG\nrejects O\nGerman B-MISC\n")
    stdin("EU B-ORG\nrejects O\nGerman O\n")
    res = invoke("ner", str(gold), "-", "--format", "conll", "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["strict"]["micro"]["recall"] == 0.5
    res = invoke("ner", str(gold), "/dev/zero", "--format", "conll")
    assert (res.code, res.stderr) == (
        2,
        "/dev/zero: not a regular file (a device or socket; expected a file, or - for stdin)\n",
    )
