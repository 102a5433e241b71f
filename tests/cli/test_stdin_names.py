"""Bad input read from stdin (``-``) is named ``<stdin>`` in the one-line message, by every
reader: the JSONL readers in ragmeter.io and the extraction readers (CoNLL, TSV ratings, labels)
alike."""

from __future__ import annotations

import io
import sys

import pytest

from tests.helpers import invoke


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ner", "-", "-"], "<stdin>:1: one column"),
        (["classify", "-", "other.tsv"], "<stdin>:1: header 'garbage'"),
        (["agreement", "-", "other.jsonl"], "<stdin>:1: header 'garbage'"),
        (["link", "-", "other.jsonl"], "<stdin>:1: not valid JSON"),
    ],
    ids=["ner", "classify", "agreement", "link"],
)
def test_bad_stdin_is_named_stdin(args, message, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"garbage\n")))
    res = invoke(*args)
    assert res.code == 2, res.stderr
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(message), res.stderr
    assert "-:" not in res.stderr
