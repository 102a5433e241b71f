"""``ragmeter trec --stream --spill DIR``: the qid-hash bucket plan in this process."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ragmeter.io import arrowutil
from ragmeter.io.trec import run_from_input
from ragmeter.retrieval import spill, spill_plan
from tests.helpers import invoke
from tests.retrieval.spill_data import CASES, shuffled_run


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return shuffled_run(tmp_path_factory.mktemp("spill"))


def _spill(tmp_path: Path, *args: str, parts: int = 5, rows: int = 60):
    work = tmp_path / "work"
    res = invoke(
        "trec", "--stream", "--spill", str(work), "--batch-rows", str(rows),
        "--partitions", str(parts), *args,
    )  # fmt: skip
    assert not work.exists()  # the work dir this run created is gone, with its files
    return res


@pytest.mark.parametrize("parts", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("case", sorted(CASES))
def test_shuffled_run_gives_the_in_memory_output(data, tmp_path, case, parts):
    qrels, run, _ = data
    local = invoke("trec", *CASES[case], qrels, run)
    assert local.code == 0, local.stderr
    res = _spill(tmp_path, *CASES[case], qrels, run, parts=parts, rows=37 * parts)
    assert (res.code, res.stdout, res.stderr) == (local.code, local.stdout, local.stderr)


def test_the_run_really_is_shuffled_and_the_stream_refuses_it(data):
    qrels, run, _ = data
    res = invoke("trec", "--stream", qrels, run)
    assert res.code == 2
    assert "appears again after other queries" in res.stderr
    assert "or add --spill DIR to evaluate an unsorted run in bounded memory" in res.stderr


def test_dedupe_and_one_bucket_and_one_line_blocks(data, tmp_path):
    qrels, run, _ = data
    lines = Path(run).read_text(encoding="utf-8").splitlines(keepends=True)
    dup = tmp_path / "dup.run"
    dup.write_text("".join([*lines[:300], *lines[10:20], *lines[300:]]), encoding="utf-8")
    # one-line blocks write a Parquet file per line: a short run keeps that case quick
    short = tmp_path / "dup-short.run"
    short.write_text("".join([*lines[:60], *lines[10:20], *lines[60:120]]), encoding="utf-8")
    for policy in ("first", "max"):
        for path, parts, rows in ((dup, 1, 10**6), (short, 7, 1)):
            args = ("-q", "--dedupe", policy, qrels, str(path))
            local = invoke("trec", *args)
            assert local.code == 0 and "dropped 10 duplicate lines" in local.stderr
            res = _spill(tmp_path, *args, parts=parts, rows=rows)
            assert (res.code, res.stdout, res.stderr) == (0, local.stdout, local.stderr)


def test_the_first_duplicate_in_the_file_is_reported_whatever_its_bucket(data, tmp_path):
    qrels, run, _ = data
    lines = Path(run).read_text(encoding="utf-8").splitlines(keepends=True)
    qids = [ln.split()[0].encode() for ln in lines]
    # two duplicates whose queries fall in different buckets; the later bucket holds the
    # earlier duplicate, so bucket order alone would report the wrong one
    a = next(i for i in range(50, 400) if spill.bucket_of(qids[i], 5) == 4)
    b = next(i for i in range(50, 400) if spill.bucket_of(qids[i], 5) == 0)
    body = [*lines[:600], lines[a], *lines[600:900], lines[b], *lines[900:]]
    bad = tmp_path / "dup.run"
    bad.write_text("".join(body), encoding="utf-8")
    local = invoke("trec", qrels, str(bad))
    assert local.code == 2 and local.stderr.startswith(f"{bad}:601: document ")
    assert f"(first at line {a + 1})" in local.stderr
    res = _spill(tmp_path, qrels, str(bad), parts=5, rows=50)
    assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)


@pytest.mark.parametrize(
    ("where", "line"),
    [(1500, "q1 Q0 D1 1\n"), (2, "q1 Q0 D1 1 abc sys\n"), (-1, "q1 Q0 D1 1 nan sys\n")],
)
def test_a_malformed_line_gives_the_in_memory_message(data, tmp_path, where, line):
    qrels, run, _ = data
    lines = Path(run).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(where if where >= 0 else len(lines), line)
    bad = tmp_path / "bad.run"
    bad.write_text("".join(lines), encoding="utf-8")
    local = invoke("trec", qrels, str(bad))
    assert local.code == 2 and local.stderr.startswith(f"{bad}:")
    res = _spill(tmp_path, qrels, str(bad), parts=4, rows=40)
    assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)


@pytest.mark.parametrize("text", ["", "# only a comment\n\n", "\n\n\n"])
def test_an_empty_run_gives_the_in_memory_message(data, tmp_path, text):
    qrels = data[0]
    empty = tmp_path / "empty.run"
    empty.write_text(text)
    local = invoke("trec", qrels, str(empty))
    assert local.code == 2 and "no data lines" in local.stderr
    res = _spill(tmp_path, "--plan", "hash", qrels, str(empty))
    assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)


def test_a_run_sharing_no_query_with_the_qrels_gives_the_in_memory_message(data, tmp_path):
    qrels = data[0]
    other = tmp_path / "other.run"
    other.write_text("zz2 Q0 d1 1 1.0 r\nzz1 Q0 d2 1 2.0 r\nzz2 Q0 d3 2 0.5 r\n")
    local = invoke("trec", qrels, str(other))
    assert local.code == 2 and "no query is in both" in local.stderr
    res = _spill(tmp_path, "--plan", "hash", qrels, str(other))
    assert (res.code, res.stdout, res.stderr) == (2, "", local.stderr)


def test_a_grouped_run_is_streamed_and_plan_hash_forces_the_buckets(data, tmp_path):
    qrels, _, grouped = data
    local = invoke("trec", "-q", "--json", qrels, grouped)
    work = tmp_path / "kept"
    res = invoke("trec", "-q", "--json", "--spill", str(work), "--keep-work", qrels, grouped)
    assert (res.code, res.stdout, res.stderr) == (0, local.stdout, local.stderr)
    assert not work.exists()  # streamed: nothing was spilled
    res = invoke(
        "trec", "-q", "--json", "--spill", str(work), "--keep-work", "--plan", "hash",
        "--partitions", "3", "--batch-rows", "500", qrels, grouped,
    )  # fmt: skip
    assert (res.code, res.stdout, res.stderr) == (0, local.stdout, local.stderr)
    (kept,) = os.listdir(work)
    assert kept.startswith("ragmeter-hash-")
    files = sorted(os.listdir(work / kept))
    assert files == [f"block-{i:06d}.parquet" for i in range(len(files))] and len(files) > 3


def test_map_output_has_one_row_group_per_bucket_in_file_order(data, tmp_path):
    _, run, _ = data
    shard = spill.MapShard(0, run, "run", 0, os.path.getsize(run), 3, str(tmp_path))
    out = spill.map_block(shard)
    lines = Path(run).read_bytes().splitlines()
    assert out.rows == len(lines) and out.file is not None
    assert [g[0] for g in out.groups] == [0, 1, 2]
    assert sum(g[2] for g in out.groups) == len(lines)
    assert out.qids.to_pylist() == list(dict.fromkeys(ln.split()[0] for ln in lines))
    f = pq.ParquetFile(out.file)
    assert f.num_row_groups == 3
    for bucket, group, rows in out.groups:
        t = f.read_row_group(group)
        assert t.num_rows == rows
        row = t.column("row").to_pylist()
        assert row == sorted(row)  # stable: file order inside the bucket
        qids = set(t.column("qid").to_pylist())
        assert {spill.bucket_of(q, 3) for q in qids} == {bucket}
        assert [lines[r].split()[0] for r in row] == t.column("qid").to_pylist()


@pytest.mark.parametrize("keep", [None, "1"])
def test_tasks_hand_freed_memory_back_unless_the_process_keeps_it(
    data, tmp_path, monkeypatch, keep
):
    """A map block, and a parse that trims (the grouped plan's ranges), hand the allocator's
    free memory back after their work (the peak in one process), except on workers told to
    keep it for the next task."""
    _, run, _ = data
    if keep is None:
        monkeypatch.delenv("RAGMETER_KEEP_FREED_MEMORY", raising=False)
    else:
        monkeypatch.setenv("RAGMETER_KEEP_FREED_MEMORY", keep)
    calls = []

    class Pool:
        def release_unused(self):
            calls.append(1)

    monkeypatch.setattr(arrowutil.pa, "default_memory_pool", Pool)
    shard = spill.MapShard(0, run, "run", 0, os.path.getsize(run), 2, str(tmp_path))
    assert spill.map_block(shard).rows > 0
    assert len(calls) == (0 if keep else 1)
    assert run_from_input(spill.block_input("run", run, 0, os.path.getsize(run))) is not None
    assert len(calls) == (0 if keep else 2)


def test_the_bucket_of_a_qid_is_blake2b_and_the_same_everywhere():
    digest = hashlib.blake2b(b"301", digest_size=8).digest()
    assert digest.hex() == "866761928584c395"
    assert spill.bucket_of(b"301", 1_000_003) == int.from_bytes(digest, "little") % 1_000_003
    assert spill.bucket_of(b"301", 1_000_003) == 814465
    assert [spill.bucket_of(q.encode(), 7) for q in ("301", "q1", "é-14", "topic-3")] == [
        2, 4, 5, 0,
    ]  # fmt: skip


def test_partition_count_follows_the_memory_model():
    # (0.6 × 2 GiB − 300 MiB) / 120 B = 8,115,978 rows per bucket at most; 1.5 × for skew
    assert spill_plan.partition_count(100_000_000, 2 << 30) == 19
    assert spill_plan.partition_count(1_000, 2 << 30) == 1
    assert spill_plan.partition_count(100_000_000, 1 << 30) == 55
    assert (
        spill_plan.parse_size("2GiB") == 2 << 30 and spill_plan.parse_size("1.5GB") == 1_500_000_000
    )
    assert spill_plan.parse_size("512MiB") == 512 << 20 and spill_plan.parse_size(None) == 2 << 30


def test_flags_and_inputs_it_refuses_in_one_line(data, tmp_path):
    qrels, run, _ = data
    cases = [
        (("--plan", "sorted"), "ragmeter trec: --plan takes auto, grouped or hash, not 'sorted'"),
        (("--spill", ""), "ragmeter trec: --spill needs a directory (expected --spill DIR)"),
        (("--plan", "hash"), "ragmeter trec: --plan hash needs --spill DIR in this process, "
         "or --executor dask"),
        (("--spill", str(tmp_path), "--worker-memory", "lots"),
         "ragmeter trec: --worker-memory 'lots' is not a size (expected e.g. 2GiB)"),
    ]  # fmt: skip
    for args, message in cases:
        res = invoke("trec", *args, qrels, run)
        assert (res.code, res.stdout, res.stderr) == (2, "", message + "\n")
    gz = tmp_path / "run.gz"
    import gzip

    gz.write_bytes(gzip.compress(Path(run).read_bytes()))
    res = invoke("trec", "--spill", str(tmp_path / "w"), qrels, str(gz))
    assert (res.code, res.stderr) == (
        2,
        "ragmeter trec: --spill reads an uncompressed run (its blocks are read by byte range); "
        f"decompress {gz} first\n",
    )
    assert not (tmp_path / "w").exists()


def test_too_little_disk_is_refused_before_the_map(data, tmp_path, monkeypatch):
    qrels, run, _ = data
    monkeypatch.setattr(spill_plan, "SPILL_RATIO", 1e9)
    res = invoke("trec", "--spill", str(tmp_path / "w"), "--plan", "hash", qrels, run)
    assert res.code == 2
    assert res.stderr.startswith(f"ragmeter trec: {tmp_path / 'w'}/ragmeter-hash-")
    assert " GB free for this run, " in res.stderr and res.stderr.endswith(" GB available\n")
    assert not (tmp_path / "w").exists()
