"""Every command against ugly input (issue 17, item 22): a table of command × input class.

Each case asserts what docs/conventions.md promises for bad input: no traceback, exit status 2
(1 only when a gate failed), and exactly one line on stderr that names the offending file (or
option). Cases run in-process so the whole table stays fast.
"""

from __future__ import annotations

import pytest

import tests.cli.ugly_values  # noqa: F401  (adds its cases to CASES)
from tests.cli.ugly_files import CASES, Case
from tests.cli.world import World, build
from tests.helpers import invoke


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build(tmp_path_factory.mktemp("ugly"))


def _params() -> list:
    """Every case once; the trec cases once per parse path (Arrow, the small-file parse without
    Arrow and the numpy parse of regular files, which must fail alike)."""
    out = []
    for c in CASES:
        if c.id.startswith("trec-"):
            out += [pytest.param(c, p, id=f"{c.id}-{p}") for p in ("arrow", "small", "regular")]
        else:
            out.append(pytest.param(c, None, id=c.id))
    return out


@pytest.mark.parametrize(("c", "parser"), _params())
def test_ugly_input(
    c: Case, parser: str | None, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(world.root)
    if parser is not None:
        monkeypatch.setenv("RAGMETER_TREC_PARSER", parser)
    # an LLM that is configured but never reached: bad input is found before any call
    monkeypatch.setenv("RAGMETER_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("RAGMETER_LLM_MODEL", "judge-model")
    res = invoke(*c.args(world))
    err = res.stderr
    assert "Traceback" not in err, err
    if c.code == 0:
        assert res.code == 0, err
        return
    assert (res.code, err.count("\n")) == (c.code, c.lines), err
    assert c.names(world) in err.splitlines()[0], err
