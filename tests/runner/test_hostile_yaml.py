"""Hostile YAML and hostile input files: one line and exit 2, never a hang or a traceback.

An alias bomb of a few hundred bytes names billions of nodes once expanded; before the shared
loader bounded expansion, `ragmeter run` spent seconds and gigabytes on one before failing with
MemoryError. Every YAML loader goes through ragmeter.io.yamlsafe, so each is checked here.
"""

from __future__ import annotations

import itertools
import os

import pytest

from ragmeter.errors import InputError
from ragmeter.io import yamlsafe
from tests.helpers import invoke
from tests.runner import toy


def bomb(levels: int = 9) -> str:
    """The billion-laughs document: level k holds nine aliases of level k-1 (9**levels nodes)."""
    names = [f"l{i}" for i in range(levels + 1)]
    text = f"{names[0]}: &{names[0]} [" + ", ".join(['"lol"'] * 9) + "]\n"
    for prev, cur in itertools.pairwise(names):
        text += f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return text


HOSTILE = {
    "alias bomb": (bomb(), "YAML aliases expand to more than 10,000 nodes"),
    "recursive alias": ("project: &a [x, *a]\n", "recursive YAML alias '*a'"),
    "recursive mapping": ("project: &a {k: *a}\n", "recursive YAML alias '*a'"),
    "deep flow": ("project: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested deeper than 100"),
    "deep block": (
        "".join(" " * (2 * i) + f"k{i}:\n" for i in range(150)),
        "nested deeper than 100 levels",
    ),
    "python tag": (
        "project: !!python/name:os.system\n",
        "YAML tag 'tag:yaml.org,2002:python/name:os.system' is not allowed",
    ),
    "python object": ("project: !!python/object/apply:os.getcwd []\n", "is not allowed"),
    "bad int": ("project: !!int abc\n", "not valid YAML: invalid literal for int()"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_the_shared_loader_refuses_with_a_line(case):
    text, message = HOSTILE[case]
    with pytest.raises(InputError) as exc:
        yamlsafe.load(text, "x.yaml")
    shown = str(exc.value)
    assert shown.startswith("x.yaml:") and message in shown, shown
    assert "\n" not in shown


def test_the_bomb_is_refused_at_its_line():
    with pytest.raises(InputError) as exc:
        yamlsafe.load(bomb(), "b.yaml")
    # l0..l3 add 9+81+729+6561 = 7380 nodes through aliases; l4's ninth alias passes 10,000
    assert str(exc.value).startswith("b.yaml:5: ")


def test_ordinary_anchors_and_merge_keys_still_load():
    data = yamlsafe.load(
        "base: &base {model: m, temperature: 0}\njudge:\n  <<: *base\n  model: n\nagain: *base\n",
        "ok.yaml",
    )
    assert data == {
        "base": {"model": "m", "temperature": 0},
        "judge": {"model": "n", "temperature": 0},
        "again": {"model": "m", "temperature": 0},
    }
    three = yamlsafe.load(bomb(3), "three.yaml")  # 9 + 81 + 729 nodes: within the budget
    assert len(three["l3"]) == 9 and three["l3"][0][0][0] == ["lol"] * 9
    assert yamlsafe.load("", "empty.yaml") is None


@pytest.fixture
def project(tmp_path, monkeypatch):
    toy.install()
    monkeypatch.chdir(tmp_path)
    toy.write_project(tmp_path)
    yield tmp_path
    toy.uninstall()


@pytest.mark.parametrize("case", ["alias bomb", "recursive alias", "deep flow", "python tag"])
def test_run_refuses_a_hostile_config_in_one_line(project, case):
    text, message = HOSTILE[case]
    (project / "ragmeter.yaml").write_text(text)
    res = invoke("run", "ragmeter.yaml", "--no-store", "-q")
    assert res.code == 2, res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("ragmeter.yaml:"), res.stderr
    assert message in res.stderr


def test_steps_refuses_a_bomb_as_reference_file(tmp_path):
    ref = tmp_path / "reference.yaml"
    ref.write_text(bomb())
    responses = tmp_path / "responses.jsonl"
    responses.write_text('{"question_id": "q1", "steps": []}\n')
    res = invoke("steps", "--reference", str(ref), "--responses", str(responses))
    assert res.code == 2
    assert res.stderr == f"{ref}:5: YAML aliases expand to more than 10,000 nodes (expected " + (
        "aliases that repeat a small block; write the data out instead)\n"
    )


def test_judge_and_price_configs_use_the_shared_loader(tmp_path):
    from ragmeter.judge.config import load_config_file
    from ragmeter.judge.ledger import PriceTable

    path = tmp_path / "judge.yaml"
    path.write_text(bomb())
    with pytest.raises(InputError, match=r"judge\.yaml:5: YAML aliases expand"):
        load_config_file(path)
    with pytest.raises(InputError, match=r"judge\.yaml:5: YAML aliases expand"):
        PriceTable([path])


def _with_dataset(project, dataset: str) -> None:
    text = (project / "ragmeter.yaml").read_text()
    lines = text.splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if line.strip().startswith("path:"))
    lines[i] = f"  path: {dataset}\n"
    (project / "ragmeter.yaml").write_text("".join(lines))


def test_a_device_or_fifo_as_the_dataset_is_one_line(project):
    _with_dataset(project, "/dev/zero")
    res = invoke("run", "ragmeter.yaml", "--no-store", "-q")
    assert res.code == 2
    assert res.stderr.count("\n") == 1 and "/dev/zero" in res.stderr
    assert "not a regular file" in res.stderr or "expected a file" in res.stderr, res.stderr

    fifo = project / "gold.fifo"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would block forever
    _with_dataset(project, str(fifo))
    res = invoke("run", "ragmeter.yaml", "--no-store", "-q")
    assert res.code == 2
    assert res.stderr.count("\n") == 1 and "gold.fifo" in res.stderr, res.stderr


def test_read_text_refuses_devices_and_caps_size(tmp_path, monkeypatch):
    from ragmeter.io import files

    with pytest.raises(InputError, match=r"^/dev/zero: not a regular file"):
        files.read_text("/dev/zero")
    with pytest.raises(InputError, match=r"^/dev/zero: not a regular file"):
        files.sha256_file("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_text("x" * 2048)
    monkeypatch.setattr(files, "MAX_TEXT_BYTES", 1024)
    with pytest.raises(InputError, match=r"big\.yaml: larger than 1,024 bytes"):
        files.read_text(big)
    monkeypatch.setattr(files, "MAX_TEXT_BYTES", 2048)
    assert files.read_text(big) == "x" * 2048


def test_trec_reads_a_pipe_once_and_a_writerless_fifo_as_empty(tmp_path):
    """`ragmeter trec QRELS <(zcat run.gz)` raised "obtaining file position failed"; a FIFO
    nobody writes to blocked forever in open()."""
    import threading

    from tests.helpers import REPO

    qrels = REPO / "examples" / "retrieval" / "qrels.txt"
    run = (REPO / "examples" / "retrieval" / "bm25.run").read_bytes()
    expected = invoke("trec", "-m", "map", str(qrels), str(REPO / "examples/retrieval/bm25.run"))
    assert expected.code == 0 and expected.stdout.startswith("map")

    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as fh:
            fh.write(run)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        res = invoke("trec", "-m", "map", str(qrels), f"/dev/fd/{r}")
    finally:
        writer.join()
        os.close(r)
    assert (res.code, res.stdout) == (0, expected.stdout), res.stderr

    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    res = invoke("trec", "-m", "map", str(qrels), str(fifo))
    assert res.code == 2
    assert res.stderr == (
        f"{fifo}: no data lines (expected lines of 6 fields: qid Q0 docno rank score tag)\n"
    )
