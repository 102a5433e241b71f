"""Modules of one concept: no extraction-side module grows past 600 lines."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ragmeter"
LIMIT = 600
READERS = ("annotations", "brat", "conll", "heritage", "heritage_files", "heritage_write",
           "labels", "mentions", "unannotated")  # fmt: skip


def test_extraction_modules_stay_under_the_limit() -> None:
    paths = [
        *(SRC / "extraction").glob("*.py"),
        *(SRC / "records").glob("*.py"),
        *(SRC / "cli" / "extraction").glob("*.py"),
        *(SRC / "io" / f"{name}.py" for name in READERS),
    ]
    assert len(paths) > 40  # the globs found the packages
    sizes = {p.relative_to(SRC).as_posix(): len(p.read_text("utf-8").splitlines()) for p in paths}
    assert {p: n for p, n in sizes.items() if n > LIMIT} == {}
