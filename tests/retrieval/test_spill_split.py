"""The hash plan's skewed buckets: reduced in parts, with the output of the in-memory run."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragmeter.errors import UsageError
from ragmeter.retrieval import spill, spill_split
from ragmeter.retrieval.spill_split import Buckets, Select, split_bucket, sub_bucket_of
from tests.helpers import invoke
from tests.retrieval.spill_data import CASES, skewed_run


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    return skewed_run(tmp_path_factory.mktemp("skewed"))


@pytest.fixture
def selects(monkeypatch):
    """The ``select`` of every reduce the hash plan runs in this process."""
    seen: list[Select | None] = []
    load = spill.load_bucket

    def spy(shard):
        seen.append(shard.select)
        return load(shard)

    monkeypatch.setattr(spill, "load_bucket", spy)
    return seen


def _spill(tmp_path, *args, parts=5):
    work = tmp_path / "work"
    return invoke(
        "trec", "--stream", "--spill", str(work), "--batch-rows", "300",
        "--partitions", str(parts), *args,
    )  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bucket_of_a_large_query_is_split_and_the_output_does_not_change(
    skewed, tmp_path, selects, case
):
    qrels, run = skewed
    local = invoke("trec", *CASES[case], qrels, run)
    assert local.code == 0, local.stderr
    res = _spill(tmp_path, *CASES[case], qrels, run)
    assert (res.code, res.stdout, res.stderr) == (local.code, local.stdout, local.stderr)
    # 5 buckets; the one holding "big" (2,000 of ~5,100 lines) is reduced as "big" alone and
    # the rest of that bucket
    assert len(selects) == 6
    parts = [s for s in selects if s is not None]
    assert [s.only for s in parts] == [b"big", None]
    assert parts[0].rows == 2_000 and parts[1].alone == (b"big",)


def test_buckets_cut_into_many_hashed_parts_give_the_same_output(
    skewed, tmp_path, selects, monkeypatch
):
    qrels, run = skewed
    monkeypatch.setattr(spill_split, "rows_within", lambda budget: 200)  # a tiny worker
    args = ("-q", "-c", "-m", "all_trec", "--dedupe", "first", qrels, run)
    local = invoke("trec", *args)
    res = _spill(tmp_path, *args, parts=3)
    assert (res.code, res.stdout, res.stderr) == (local.code, local.stdout, local.stderr)
    hashed = [s for s in selects if s is not None and s.only is None]
    assert all(s is not None for s in selects)
    assert len(hashed) > 12 and max(s.parts for s in hashed) >= 8
    assert sum(s.rows for s in selects) == len(Path(run).read_bytes().splitlines())


def test_a_query_too_large_for_a_worker_is_one_line(skewed, tmp_path):
    qrels, run = skewed
    # 320 MB: the model's 300 MiB base and 120 B per row leave room for about 45,000 rows
    res = _spill(tmp_path, "--worker-memory", "320MB", qrels, run)
    assert res.code == 0, res.stderr
    res = _spill(tmp_path, "--worker-memory", "314.8MB", qrels, run)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        "ragmeter trec: query 'big' has 2,000 lines, which needs about 315 MB; "
        "raise --worker-memory\n"
    )


def test_the_parts_of_a_bucket_hold_each_query_once():
    rows = {f"q{i}".encode(): 1 + i % 7 for i in range(300)} | {b"huge": 500, b"large": 90}
    parts = split_bucket(rows, 6)  # 1,787 rows: a mean part of 298
    assert [s.only for s in parts if s.only is not None] == [b"huge"]  # larger than a part
    hashed = [s for s in parts if s.only is None]
    assert [(s.parts, s.part, s.alone) for s in hashed] == [(5, j, (b"huge",)) for j in range(5)]
    qids = list(rows)
    taken = [q for s in parts for q, keep in zip(qids, s.keeps(qids), strict=True) if keep]
    assert sorted(taken) == sorted(qids)  # every query in exactly one part
    assert [s.rows for s in parts] == [
        500,
        *(sum(n for q, n in rows.items() if q != b"huge" and sub_bucket_of(q, 5) == j)
          for j in range(5)),
    ]  # fmt: skip
    assert max(s.rows for s in hashed) < 1.5 * 1287 / 5  # the second hash spreads them


def test_the_second_hash_is_salted_blake2b():
    qid = "话题7".encode()
    digest = hashlib.blake2b(qid, digest_size=8, salt=b"ragmeter-split").digest()
    assert sub_bucket_of(qid, 13) == int.from_bytes(digest, "little") % 13
    # independent of the first hash: the queries of one bucket spread over the parts
    same = [q for q in (f"q{i}".encode() for i in range(2000)) if spill.bucket_of(q, 4) == 1]
    assert {sub_bucket_of(q, 4) for q in same} == {0, 1, 2, 3}


def _outs(folder: Path, rows: dict[bytes, int], parts: int) -> list[SimpleNamespace]:
    """Map output as the blocks write it (one block): a row group per bucket, its qid column
    dictionary-encoded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    by_bucket: dict[int, list[bytes]] = {}
    for q, n in rows.items():
        by_bucket.setdefault(spill.bucket_of(q, parts), []).extend([q] * n)
    path = str(folder / "block-000000.parquet")
    groups = []
    schema = pa.schema([("qid", pa.dictionary(pa.int32(), pa.binary()))])
    with pq.ParquetWriter(path, schema, use_dictionary=["qid"]) as writer:
        for i, (b, qids) in enumerate(sorted(by_bucket.items())):
            column = pa.array(qids, pa.binary()).dictionary_encode()
            writer.write_table(pa.table([column], schema=schema), row_group_size=len(qids))
            groups.append((b, i, len(qids)))
    return [SimpleNamespace(index=0, file=path, groups=tuple(groups))]


def test_a_bucket_that_killed_its_workers_is_cut_once_then_named(tmp_path):
    rows = {f"q{i}".encode(): 10 + i for i in range(40)}
    buckets = Buckets(_outs(tmp_path, rows, 2), 2, 2 << 30)
    assert buckets.queries(1) == {q: n for q, n in rows.items() if spill.bucket_of(q, 2) == 1}
    assert [buckets.plan(b) for b in (0, 1)] == [[None], [None]]
    parts = buckets.after_kill(0, None)
    assert 2 <= len(parts) <= 4 and sum(p.rows for p in parts) == buckets.rows[0]
    with pytest.raises(UsageError) as err:
        buckets.after_kill(0, parts[1])
    assert str(err.value) == (
        f"ragmeter trec: bucket 1 of 2, part 2 of 4 ({parts[1].rows:,} lines) killed the "
        "workers that ran it; raise --worker-memory (now 2.1 GB) or --partitions"
    )
    (tmp_path / "one").mkdir()
    one = Buckets(_outs(tmp_path / "one", {b"only": 700_000}, 3), 3, 2 << 30)
    one.budget = 100 << 20  # a worker too small for this bucket
    b = spill.bucket_of(b"only", 3)
    with pytest.raises(UsageError) as err:
        one.plan(b)
    assert str(err.value) == (
        "ragmeter trec: query 'only' has 700,000 lines, which needs about 399 MB; raise "
        "--worker-memory"
    )
    one.budget = 2 << 30
    assert one.plan(b) == [None]  # over the mean, but one query that fits: reduced whole
    with pytest.raises(UsageError) as err:
        one.after_kill(b, None)
    assert str(err.value) == (
        f"ragmeter trec: bucket {b + 1} of 3 (700,000 lines) killed the workers that ran "
        "it; raise --worker-memory (now 2.1 GB) or --partitions"
    )


@pytest.mark.parametrize("victim", ["big", "other"])
def test_the_first_duplicate_in_the_file_is_reported_across_parts(
    skewed, tmp_path, selects, monkeypatch, victim
):
    qrels, run = skewed
    lines = Path(run).read_bytes().splitlines(keepends=True)
    big = [i for i, line in enumerate(lines) if line.startswith(b"big ")]
    other = [i for i, line in enumerate(lines) if not line.startswith((b"big ", "médium".encode()))]
    # two duplicates: one of a line of "big", one of another query; the earlier one is reported
    first, second = (big[40], other[300]) if victim == "big" else (other[40], big[300])
    dup = lines[:]
    dup.insert(second + 1, lines[second])
    dup.insert(first + 1, lines[first])
    path = tmp_path / "dup.run"
    path.write_bytes(b"".join(dup))
    monkeypatch.setattr(spill_split, "rows_within", lambda budget: 300)
    local = invoke("trec", "-q", qrels, str(path))
    assert local.code == 2 and "appears twice" in local.stderr
    res = _spill(tmp_path, "-q", qrels, str(path), parts=3)
    assert (res.code, res.stdout, res.stderr) == (local.code, local.stdout, local.stderr)
    assert any(s is not None and s.only == b"big" for s in selects)
