from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ragmeter.errors import InputError, UsageError
from ragmeter.io.files import atomic_write, open_text, read_text, sha256_file
from ragmeter.io.jsonl import read_jsonl
from ragmeter.io.jsonutil import dumps
from tests.helpers import run_cli


def test_input_error_is_a_value_error_with_location():
    err = InputError("grade '1.7' is not an integer", path="qrels.txt", line=9)
    assert isinstance(err, ValueError)
    assert (err.path, err.line) == ("qrels.txt", 9)
    assert str(err) == "qrels.txt:9: grade '1.7' is not an integer"


def test_usage_error_prefix():
    assert str(UsageError("bad", command="gate")) == "ragmeter gate: bad"
    assert str(UsageError("bad")) == "bad"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_jsonl_reads_objects_with_physical_line_numbers(tmp_path):
    p = write(tmp_path, "a.jsonl", b'\xef\xbb\xbf{"id": 1}\n\n  \n{"id": "\xc3\xa9"}\r\n')
    assert read_jsonl(p) == [(1, {"id": 1}), (4, {"id": "é"})]


def test_jsonl_reads_gzip_by_magic_not_name(tmp_path):
    p = write(tmp_path, "a.txt", gzip.compress(b'{"id": 1}\n'))
    assert read_jsonl(p) == [(1, {"id": 1})]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "a.jsonl: no data lines (expected one JSON object per line)"),
        (b"\n\n", "a.jsonl: no data lines (expected one JSON object per line)"),
        (b'{"a": 1}\n{"a": 2\n', "a.jsonl:2: not valid JSON: Expecting ',' delimiter at column 8"),
        (b'{"a": NaN}\n', "a.jsonl:1: NaN is not valid JSON"),
        (b"[1, 2]\n", "a.jsonl:1: a JSON list (expected one JSON object per line)"),
        (b"null\n", "a.jsonl:1: a JSON null (expected one JSON object per line)"),
        (b'{"a": 1}\n{"a": "\xff"}\n', "a.jsonl:2: not valid UTF-8 (byte 0xff at offset 7)"),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path, data, message):
    p = write(tmp_path, "a.jsonl", data)
    with pytest.raises(InputError) as exc:
        read_jsonl(p)
    assert str(exc.value).replace(str(tmp_path) + "/", "").startswith(message)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"nope\.jsonl: cannot read \(No such file"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_open_text_handles_gzip_and_bom(tmp_path):
    p = write(tmp_path, "r.gz", gzip.compress("\ufeffq1 0 d1 1\r\n".encode()))
    with open_text(p) as fh:
        assert fh.read() == "q1 0 d1 1\r\n"


def test_read_text_names_the_line_of_a_bad_byte(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_bytes(b"\xef\xbb\xbfproject: x\nname: caf\xe9\n")
    with pytest.raises(InputError) as exc:
        read_text(p)
    assert str(exc.value) == f"{p}:2: not valid UTF-8 (byte 0xe9; expected UTF-8 text)"
    g = tmp_path / "c.yaml.gz"
    g.write_bytes(gzip.compress("\ufeffproject: café\n".encode()))
    assert read_text(g) == "project: café\n"


def test_a_config_that_is_not_text_is_one_line_exit_2(tmp_path):
    p = tmp_path / "ragmeter.yaml"
    p.write_bytes(b"\xff\xfe\x00garbage\n")
    res = run_cli("run", str(p))
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == f"{p}:1: not valid UTF-8 (byte 0xff; expected UTF-8 text)\n"


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as fh:
        fh.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_sha256_file(tmp_path):
    p = write(tmp_path, "x", b"abc")
    assert sha256_file(p) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    import threading

    stop = threading.Event()
    assert sha256_file(p, stop=stop) == sha256_file(p)
    stop.set()  # a read asked to stop ends at its next block, with no digest
    assert sha256_file(p, stop=stop) == ""


@pytest.mark.parametrize("size", [0, 1, 6, 7, 8, 1000])
def test_sha256_file_across_blocks(tmp_path, size):
    import hashlib
    import random

    data = random.Random(size).randbytes(size)
    p = write(tmp_path, "x", data)
    assert sha256_file(p, chunk_size=7) == hashlib.sha256(data).hexdigest()


def test_dumps_refuses_nan_and_converts_numpy():
    import numpy as np

    assert json.loads(dumps({"a": np.float32(0.5), "b": np.arange(2)})) == {"a": 0.5, "b": [0, 1]}
    with pytest.raises(ValueError, match="non-finite"):
        dumps({"a": float("nan")})
