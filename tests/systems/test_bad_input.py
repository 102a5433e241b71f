"""Bad live-system input: one line ``ragmeter.yaml:LINE: systems[i].KEY: ...``, exit 2, before
any call is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import invoke
from tests.systems import fake_system
from tests.systems.conftest import fake, write_config


def _line_of(config: Path, text: str) -> int:
    lines = config.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(text))


def _run(config: Path) -> tuple[int, str]:
    res = invoke("run", str(config), "-q", "--no-store", "--systems-cache", "c.sqlite")
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return res.code, lines[0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "nope_pipeline.rag:Pipeline",
            "cannot import 'nope_pipeline.rag' (No module named 'nope_pipeline')",
        ),
        (
            "tests.systems.fake_system:Missing",
            "module 'tests.systems.fake_system' has no attribute 'Missing' "
            "(expected tests.systems.fake_system:Missing)",
        ),
        ("tests.systems.fake_system", "'tests.systems.fake_system' is not an import path"),
        (
            "tests.systems.fake_system:NOT_A_SYSTEM",
            "tests.systems.fake_system:NOT_A_SYSTEM has none of the methods retrieve, answer, "
            "extract_entities, classify, link",
        ),
    ],
)
def test_bad_import_path(project: Path, call: str, message: str) -> None:
    config = write_config(project, [{"name": "ok", "call": "tests.systems.fake_system:INSTANCE"},
                                    {"name": "bad", "call": call}])  # fmt: skip
    code, line = _run(config)
    assert code == 2
    assert line.startswith(f"{config}:{_line_of(config, call)}: systems[1].call: {message}")
    assert sum(fake_system.CALLS.values()) == 0  # the good system was not called either


def test_module_that_raises_on_import(project: Path) -> None:
    (project / "broken_pipeline.py").write_text("raise RuntimeError('needs a GPU')\n")
    config = write_config(project, [{"name": "b", "call": "broken_pipeline:Pipeline"}])
    code, line = _run(config)
    assert code == 2
    assert line.endswith(
        "systems[0].call: cannot import 'broken_pipeline' (RuntimeError: needs a GPU)"
    )


def test_module_next_to_the_config_imports(project: Path) -> None:
    (project / "my_pipeline.py").write_text(
        "class Pipeline:\n"
        "    def __init__(self, label):\n"
        "        self.label = label\n"
        "    def classify(self, text):\n"
        "        return self.label\n"
    )
    config = write_config(
        project,
        [{"name": "p", "call": "my_pipeline:Pipeline", "init": {"label": "M"}}],
        tasks={"classification": {"profile": "heritage"}},
    )
    res = invoke("run", str(config), "-q", "--no-store", "--json", "--systems-cache", "c.sqlite")
    assert res.code == 0, res.stderr
    assert '"calls": 12' in res.stdout


def test_init_errors(project: Path) -> None:
    config = write_config(project, [fake(init={"colour": "red"})])
    code, line = _run(config)
    assert code == 2
    assert f"{config}:{_line_of(config, 'init:')}: systems[0].init: " in line
    assert "tests.systems.fake_system:SyncSystem(...) raised TypeError" in line
    config = write_config(project, [{"name": "i", "call": "tests.systems.fake_system:INSTANCE",
                                     "init": {"corpus": "x"}}])  # fmt: skip
    code, line = _run(config)
    assert (
        code == 2 and "systems[0].init: tests.systems.fake_system:INSTANCE is an instance" in line
    )


def test_no_method_the_tasks_need(project: Path) -> None:
    config = write_config(
        project,
        [{"name": "c", "call": "tests.systems.fake_system:OnlyClassify"}],
        tasks={"retrieval": {}, "ner": {}},
    )
    code, line = _run(config)
    assert code == 2
    assert line.endswith(
        "systems[0].call: tests.systems.fake_system:OnlyClassify has no method the configured "
        "tasks need (tasks retrieval, ner need extract_entities or retrieve; it has classify)"
    )


def test_config_keys(project: Path) -> None:
    config = write_config(project, [{"name": "x"}])
    code, line = _run(config)
    assert code == 2 and line.endswith(
        "systems[0]: no output files and no call (expected outputs with at least one of run, "
        "answers, traces, entities, or call: package.module:attr)"
    )
    config = write_config(project, [{"name": "x", "outputs": {"run": "data/gold.jsonl"},
                                     "concurrency": 3}])  # fmt: skip
    code, line = _run(config)
    assert code == 2 and line.endswith(
        "systems[0].concurrency: applies to live systems only (expected call: too)"
    )
    config = write_config(project, [fake(concurrency=0)])
    code, line = _run(config)
    assert code == 2 and "systems[0].concurrency" in line
    config = write_config(project, [fake(timeout_s="soon")])
    code, line = _run(config)
    assert code == 2 and "systems[0].timeout_s" in line


def test_bad_corpus(project: Path) -> None:
    (project / "data" / "corpus.jsonl").write_text(
        '{"id": "d1", "text": "a"}\n{"id": "d1", "text": "b"}\n'
    )
    code, line = _run(write_config(project, [fake()]))
    assert code == 2 and line == ("data/corpus.jsonl:2: id 'd1' appears twice (first at line 1)")
    (project / "data" / "corpus.jsonl").write_text('{"id": "d1"}\n')
    code, line = _run(write_config(project, [fake()]))
    assert code == 2 and line == "data/corpus.jsonl:1: text is null (expected a string)"
    (project / "data" / "corpus.jsonl").write_text("\n")
    code, line = _run(write_config(project, [fake()]))
    assert (
        code == 2 and line == "data/corpus.jsonl: no data lines (expected one JSON object per line)"
    )
    assert sum(fake_system.CALLS.values()) == 0


def test_refresh_unknown_system(project: Path) -> None:
    config = write_config(project, [fake()])
    res = invoke("run", str(config), "-q", "--no-store", "--refresh-system", "nope")
    assert res.code == 2
    assert res.stderr.strip() == (
        "ragmeter run: --refresh-system 'nope' is not a live system of the config "
        "(expected one of fake)"
    )
