"""Each named choice of the extraction engines and annotation loaders has one home (a tuple
derived from the engine's ``Literal``); the engines' signatures, their checks, their messages and
the command line's options all read it, and reading it loads no numpy."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from ragmeter.extraction import choices as ec
from ragmeter.extraction import classification, coefficients, linking_e2e, multilabel, ner
from ragmeter.io import annotations, brat
from ragmeter.records import choices as rc
from ragmeter.records import validation
from tests.helpers import invoke

ARGUMENTS = [
    (ner.evaluate, "duplicates", ec.NER_DUPLICATES),
    (ner.evaluate, "unknown_documents", ec.UNKNOWN_DOCUMENTS),
    (ner.evaluate, "empty_documents", ec.EMPTY_DOCUMENTS),
    (ner.evaluate, "on_offset_mismatch", rc.ON_OFFSET_MISMATCH),
    (ner.evaluate_tags, "mode", ec.NER_MODES),
    (linking_e2e.evaluate_e2e, "match", ec.LINK_MATCHES),
    (linking_e2e.evaluate_e2e, "subset", ec.LINK_SUBSETS),
    (linking_e2e.evaluate_e2e, "matching", ec.LINK_MATCHINGS),
    (linking_e2e.evaluate_e2e, "empty_documents", ec.EMPTY_DOCUMENTS),
    (linking_e2e.evaluate_e2e, "unknown_documents", ec.UNKNOWN_DOCUMENTS),
    (classification.evaluate, "missing", ec.MISSING_POLICIES),
    (classification.evaluate, "extra", ec.EXTRA_POLICIES),
    (classification.evaluate, "invalid_gold", ec.INVALID_GOLD_POLICIES),
    (multilabel.evaluate_multilabel, "missing", ec.MISSING_POLICIES),
    (multilabel.evaluate_multilabel, "extra", ec.EXTRA_POLICIES),
    (coefficients.krippendorff_alpha, "level", ec.LEVELS),
    (validation.validate, "on_offset_mismatch", rc.ON_OFFSET_MISMATCH),
    (validation.validate, "duplicates", rc.DUPLICATES),
    (brat.load_brat, "offset_unit", rc.OFFSET_UNITS),
    (brat.load_brat, "discontinuous", rc.DISCONTINUOUS),
    (brat.load_brat, "on_offset_mismatch", rc.ON_OFFSET_MISMATCH),
    (annotations.OffsetConverter.__init__, "unit", rc.OFFSET_UNITS),
]


def _literal_values(tp: object) -> tuple[str, ...]:
    """The strings of a Literal, through ``X | None``."""
    if typing.get_origin(tp) is typing.Literal:
        return typing.get_args(tp)
    return tuple(v for arg in typing.get_args(tp) for v in _literal_values(arg))


@pytest.mark.parametrize(("fn", "arg", "allowed"), ARGUMENTS)
def test_the_engine_argument_is_typed_by_the_one_list(fn, arg, allowed):
    assert _literal_values(typing.get_type_hints(fn)[arg]) == allowed


def test_the_lists():
    assert ec.LEVELS == ("nominal", "ordinal", "interval", "ratio")
    assert ec.LINK_SUBSETS == ("all", "inkb", "ee", "gs_inkb")
    assert ec.UNKNOWN_DOCUMENTS == ("error", "ignore", "as_empty_gold")
    assert rc.OFFSET_UNITS == ("codepoint", "utf16", "utf8")
    assert rc.ON_OFFSET_MISMATCH == ("error", "skip", "relocate")


def test_the_engines_messages_are_as_before():
    with pytest.raises(ValueError, match=r"^duplicates='x' \(expected 'dedupe' or 'keep'\)$"):
        ner.evaluate({}, {}, duplicates="x")
    with pytest.raises(
        ValueError,
        match=r"^unknown_documents='x' \(expected 'error', 'ignore' or 'as_empty_gold'\)$",
    ):
        ner.evaluate({}, {}, unknown_documents="x")
    with pytest.raises(
        ValueError, match=r"^level='x' \(expected nominal, ordinal, interval or ratio\)$"
    ):
        coefficients.krippendorff_alpha([["a", "b"], ["a", "b"]], level="x")
    with pytest.raises(
        ValueError, match=r"^offset_unit='x' \(expected 'codepoint', 'utf16' or 'utf8'\)$"
    ):
        annotations.OffsetConverter("abc", "x")
    with pytest.raises(
        ValueError, match=r"^subset='x' \(expected one of all, inkb, ee, gs_inkb\)$"
    ):
        linking_e2e.evaluate_e2e({}, {}, subset="x")


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (["agreement", "a.tsv", "b.tsv", "--level", "x"], ec.LEVELS),
        (["ner", "g.ann", "p.ann", "--offset-unit", "x"], rc.OFFSET_UNITS),
        (["ner", "g.ann", "p.ann", "--unknown-documents", "x"], ec.UNKNOWN_DOCUMENTS),
        (["classify", "g.tsv", "p.tsv", "--invalid-gold", "x"], ec.INVALID_GOLD_POLICIES),
        (["link", "g.json", "p.json", "--e2e", "--subset", "x"], ec.LINK_SUBSETS),
    ],
)
def test_the_command_line_offers_the_engine_lists(argv, listed):
    result = invoke(*argv)
    assert result.code == 2
    assert f"is not one of {', '.join(listed)}" in result.stderr


def test_the_help_lists_them(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one option per line
    result = invoke("link", "--help")
    assert result.code == 0
    assert " | ".join(ec.LINK_SUBSETS) in result.stdout


def test_reading_the_lists_loads_no_numpy():
    code = (
        "import sys, ragmeter.extraction.choices, ragmeter.records.choices, "
        "ragmeter.cli.extraction; print(sorted({'numpy', 'pyarrow'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
