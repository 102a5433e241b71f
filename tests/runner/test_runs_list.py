"""``ragmeter runs list`` prints whole run ids at any width, so they can be copied."""

from __future__ import annotations

import sys

import pytest

from ragmeter.store import open_store
from tests.helpers import invoke
from tests.runner.test_store import make_run

IDS = [
    "20250602T093000Z-000007-hybrid-retrieval-with-reranker-v12",
    "20250602T093000Z-000007-bm25-baseline",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("list") / "store.db"
    with open_store(path) as handle:
        handle.write(
            [
                make_run(
                    IDS[0],
                    system="hybrid retrieval with reranker",
                    project="heritage-rag-long-project-name",
                    evaluation_id="20250602T093000Z-000007",
                    tags=["nightly", "candidate", "reranker"],
                ),
                make_run(
                    IDS[1],
                    system="bm25",
                    project="heritage-rag-long-project-name",
                    evaluation_id="20250602T093000Z-000007",
                ),
            ]
        )
    return str(path)


@pytest.mark.parametrize("width", [None, 80, 100, 120])
def test_run_ids_are_never_cut(store, monkeypatch, width):
    if width is not None:  # a terminal of that width (None: piped, as invoke's stdout is)
        from rich.console import Console

        monkeypatch.setattr(
            "ragmeter.cli.console.make_console",
            lambda stderr=False: Console(file=sys.stdout, width=width, soft_wrap=False),
        )
    res = invoke("runs", "list", "--store", store)
    assert res.code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "…" not in res.stdout
    for run_id in IDS:
        assert any(f"│ {run_id} " in line for line in lines), res.stdout
    if width is not None:
        assert max(len(line) for line in lines) <= width
    # and each printed id is one `runs export` accepts
    for run_id in IDS:
        assert invoke("runs", "export", run_id, "--no-samples", "--store", store).code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "export", IDS[1]),
        ("runs", "export", IDS[1], "--format", "parquet"),
        ("report", IDS[1]),
    ],
)
def test_an_output_that_cannot_be_a_file_is_one_line(store, tmp_path, args):
    # the output check every command shares (docs/conventions.md, "Output files")
    folder = tmp_path / "out"
    folder.mkdir()
    res = invoke(*args, "-o", str(folder), "--store", store)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == f"{folder}: is a folder (expected a file path for --output)\n"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "x.out"
    res = invoke(*args, "-o", str(target), "--store", store)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        f"{target}: cannot be created: {blocker} is not a folder (expected a path inside a "
        "folder for --output)\n"
    )
    assert blocker.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == [
        "a-file",
        "out",
    ]
