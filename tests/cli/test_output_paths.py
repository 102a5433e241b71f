"""Output files: never an input (same path, symlink, hard link), never a folder, umask honoured."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ragmeter.errors import InputError
from ragmeter.io.files import atomic_write, check_outputs
from tests.cli.world import GOLD, jsonl
from tests.helpers import invoke


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    masks: list[int] = []

    def set_mask(mask: int) -> None:
        masks.append(mask)
        os.umask(mask)

    yield set_mask
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "want"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_atomic_write_gives_new_files_the_umask_mode(tmp_path, umask, mask, want):
    umask(mask)
    target = tmp_path / "out.json"
    with atomic_write(target) as fh:
        fh.write("{}")
    assert mode(target) == want


def test_atomic_write_keeps_the_mode_of_a_file_it_replaces(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(0o640)
    with atomic_write(target) as fh:
        fh.write("new")
    assert (target.read_text(), mode(target)) == ("new", 0o640)


def test_atomic_write_refuses_a_folder_and_a_path_below_a_file(tmp_path):
    with (
        pytest.raises(InputError, match=r"is a folder \(expected a file path\)"),
        atomic_write(tmp_path) as fh,
    ):
        fh.write("x")
    plain = tmp_path / "plain.txt"
    plain.write_text("keep")
    with (
        pytest.raises(InputError, match=r"plain.txt is not a folder"),
        atomic_write(plain / "sub" / "out.txt") as fh,
    ):
        fh.write("x")
    assert plain.read_text() == "keep" and os.listdir(tmp_path) == ["plain.txt"]


def test_run_results_folder_and_files_follow_the_umask(tmp_path, umask, monkeypatch):
    umask(0o022)
    (tmp_path / "outputs").mkdir()
    (tmp_path / "gold.jsonl").write_text(jsonl(GOLD))
    answers = [{"id": f"s{i}-q1", "answer": f"answer {i}"} for i in range(len(GOLD))]
    (tmp_path / "outputs" / "a.jsonl").write_text(jsonl(answers))
    (tmp_path / "ragmeter.yaml").write_text(
        "project: p\ndataset: {path: gold.jsonl}\n"
        "systems: [{name: a, outputs: {answers: outputs/a.jsonl}}]\n"
        "tasks: {answers: {metrics: [em]}}\n"
    )
    monkeypatch.chdir(tmp_path)
    res = invoke("run", "ragmeter.yaml", "--no-store", "--quiet", "--no-cache")
    assert res.code == 0, res.stderr
    (folder,) = (tmp_path / "results").iterdir()
    assert mode(tmp_path / "results") == 0o755 and mode(folder) == 0o755
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["config.yaml", "samples.parquet", "summary.json"]
    assert {mode(p) for p in folder.iterdir()} == {0o644}


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link", "relative path"])
def test_split_refuses_to_overwrite_its_gold_set(tmp_path, monkeypatch, how):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl(GOLD))
    before = gold.read_bytes()
    out = {
        "same path": str(gold),
        "symlink": str(tmp_path / "link.jsonl"),
        "hard link": str(tmp_path / "hard.jsonl"),
        "relative path": "./sub/../gold.jsonl",
    }[how]
    if how == "symlink":
        os.symlink(gold, out)
    elif how == "hard link":
        os.link(gold, out)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    res = invoke("split", str(gold), "--by", "country", "-o", out)
    assert (res.code, res.stderr) == (
        2,
        f"{out}: --output would overwrite an input of this command (expected a path that is "
        "not an input)\n",
    )
    assert gold.read_bytes() == before


def test_trec_and_answers_refuse_an_output_that_is_an_input(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "a.run"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    res = invoke("trec", "-o", str(run), str(qrels), str(run))
    assert res.code == 2 and res.stderr.startswith(f"{run}: --output would overwrite an input")
    assert run.read_text() == "q1 Q0 d1 1 1.0 r\n"
    x = tmp_path / "x.jsonl"
    x.write_text(jsonl([{"id": "q1", "golden_answers": ["a"], "pred_answer": "a"}]))
    before = x.read_bytes()
    res = invoke("answers", str(x), "--per-sample", str(x))
    assert res.code == 2 and "--per-sample would overwrite an input" in res.stderr
    assert x.read_bytes() == before
    both = tmp_path / "both.json"
    res = invoke("answers", str(x), "--per-sample", str(both), "--output", str(both))
    assert res.code == 2
    assert res.stderr == (
        f"{both}: --output and --per-sample name the same file (expected one path each)\n"
    )
    assert not both.exists()


def test_report_refuses_to_overwrite_the_store(tmp_path):
    db = tmp_path / "runs.db"
    db.write_bytes(b"SQLite format 3\x00")
    res = invoke("report", "latest", "--store", f"sqlite:///{db}", "-o", str(db))
    assert res.code == 2 and "--output would overwrite an input" in res.stderr
    assert db.read_bytes() == b"SQLite format 3\x00"


def test_check_outputs_accepts_stdout_and_new_paths(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("{}\n")
    check_outputs(
        {"--output": "-", "--per-sample": str(tmp_path / "new" / "deep" / "x.jsonl")},
        [str(src), "-"],
    )
    with pytest.raises(InputError, match="is a file"):
        check_outputs({"--results-dir": str(src)}, [], folders=frozenset({"--results-dir"}))
