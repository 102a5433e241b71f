"""``ragmeter answers`` on Dask: a re-run resumes from the work dir, and the workers check the
input, refusing bad input with the in-process line (the first error in file order)."""

from __future__ import annotations

import functools
import json
import os

import pytest

from ragmeter.errors import UsageError
from ragmeter.executors.plan import line_shards
from ragmeter.executors.workdir import WorkDir
from tests.executors.faults import fail_once
from tests.executors.test_answers import ARGS, _api_run, _strip, answers_file, in_process
from tests.helpers import invoke

__all__ = ["answers_file", "in_process"]  # module fixtures shared with test_answers.py

pytestmark = pytest.mark.filterwarnings("error:Sending large graph:UserWarning")


def test_a_rerun_after_a_failed_shard_scores_only_the_others(
    answers_file, in_process, dask_client, scheduler, tmp_path
):
    marker = str(tmp_path / "failed")
    work = WorkDir(".ragmeter/work", command="answers")
    with pytest.raises(UsageError) as err:
        _api_run(
            dask_client, answers_file, lambda task: functools.partial(fail_once, task, marker, 2),
            work=work,
        )  # fmt: skip
    assert str(err.value) == (
        "ragmeter answers: internal error in scoring shard 3 of 4 (RuntimeError: shard 2 "
        "failed once)"
    )
    work.finish(success=False)  # kept: the command failed
    (plan,) = work.plans
    with open(plan.manifest_path) as fh:
        assert sorted(json.load(fh)["done"]) == ["0", "1"]  # shards in order, before the failure
    out = tmp_path / "rows.jsonl"
    res = invoke(
        "answers", answers_file, *ARGS, "--scheduler", scheduler, "--partitions", "4",
        "--per-sample", str(out),
    )  # fmt: skip
    local, rows = in_process
    assert res.code == 0, res.stderr
    first, rest = res.stderr.split("\n", 1)
    assert first == (
        "ragmeter answers: resuming scoring: 2 of 4 shards finished by an earlier run "
        f"({plan.path})"
    )
    assert rest == local.stderr
    assert _strip(res.stdout) == json.dumps(json.loads(local.stdout))
    assert out.read_bytes() == rows
    assert not os.path.exists(plan.path)  # removed after the success


def test_keep_work_keeps_the_finished_shards(answers_file, scheduler, tmp_path):
    args = ("answers", answers_file, *ARGS, "--scheduler", scheduler, "--partitions", "3")
    res = invoke(*args, "--work-dir", str(tmp_path / "w"), "--keep-work")
    assert res.code == 0, res.stderr
    (plan,) = [p for p in os.listdir(tmp_path / "w") if p.startswith("answers-")]
    assert sorted(os.listdir(tmp_path / "w" / plan)) == [
        "manifest.json", "shard-00000.pkl", "shard-00001.pkl", "shard-00002.pkl",
    ]  # fmt: skip
    again = invoke(*args, "--work-dir", str(tmp_path / "w"))
    assert again.code == 0
    assert again.stderr.startswith("ragmeter answers: resuming scoring: 3 of 3 shards")
    assert again.stdout == res.stdout
    assert sorted(os.listdir(tmp_path / "w")) == [".lock", "payloads"]


ROW = '{{"id": "{id}", "pred_answer": "{pred}", "golden_answers": ["{gold}"]}}'


def _rows(n: int = 200) -> list[str]:
    """Rows of one length, so that small edits leave the shard boundaries where they were."""
    words = ["cat sat", "the mat", "Paris x", "a river"]
    return [
        ROW.format(id=f"s{i:03d}", pred=words[i % 4], gold=words[(i * 7) % 4]) for i in range(n)
    ]


def _write(path, rows: list[str]) -> str:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def _shard_of(path: str, line: int) -> int:
    shards = line_shards(path, 4, ())
    return max(s.index for s in shards if s.first_line <= line)


def _same_refusal(path: str, scheduler: str, *extra: str) -> str:
    local = invoke("answers", path, "-m", "em,f1", *extra, "-o", "out.json")
    res = invoke(
        "answers", path, "-m", "em,f1", *extra, "-o", "out.json",
        "--scheduler", scheduler, "--partitions", "4",
    )  # fmt: skip
    assert local.code == res.code == 2
    assert res.stderr == local.stderr and res.stderr.count("\n") == 1
    assert res.stdout == "" and not os.path.exists("out.json")
    return res.stderr


def test_a_bad_line_in_the_second_shard_is_the_in_process_line(scheduler, tmp_path):
    rows = _rows()
    rows[70] = rows[70].replace('"pred_answer": "', '"pred_answer" "')  # line 71: not JSON
    rows[160] = rows[160].replace('["', '[{"x": 1}, "')  # a later shard: a bad gold answer
    path = _write(tmp_path / "bad.jsonl", rows)
    assert (_shard_of(path, 71), _shard_of(path, 161)) == (1, 3)
    assert _same_refusal(path, scheduler).startswith(f"{path}:71: not valid JSON: ")


def test_an_id_repeated_across_shards_is_the_in_process_line(scheduler, tmp_path):
    rows = _rows()
    rows[120] = rows[120].replace("s120", "s010")  # line 121 repeats line 11's id
    rows[190] = rows[190].replace("s190", "s020")
    path = _write(tmp_path / "dup.jsonl", rows)
    assert (_shard_of(path, 11), _shard_of(path, 121)) == (0, 2)
    assert _same_refusal(path, scheduler) == (
        f"{path}:121: id 's010' appears again (first on line 11; expected unique ids)\n"
    )


def test_the_repeated_id_wins_over_a_later_error_on_its_line_and_loses_to_an_earlier_one(
    scheduler, tmp_path
):
    rows = _rows()
    rows[120] = rows[120].replace("s120", "s010").replace('"cat sat"', '{"a": 1}')
    path = _write(tmp_path / "both.jsonl", rows)
    assert "121: id 's010' appears again" in _same_refusal(path, scheduler)
    rows[110] = rows[110].replace('["', '[{"x": 1}, "')  # the same shard, before line 121
    path = _write(tmp_path / "earlier.jsonl", rows)
    assert _shard_of(path, 111) == _shard_of(path, 121) == 2
    assert ":111: " in _same_refusal(path, scheduler)


def test_row_numbers_stand_in_for_missing_ids_across_shards(scheduler, tmp_path):
    rows = [r.replace('"id": "s', '"idx": "s') for r in _rows()]
    rows[150] = rows[150].replace('"idx": "s150"', '"id": "0042"')  # not row 42: "0042" ≠ "42"
    rows[160] = rows[160].replace('"idx": "s160"', '"id": "42"')
    path = _write(tmp_path / "noid.jsonl", rows)
    assert _same_refusal(path, scheduler).endswith(
        ":161: id '42' appears again (first on line 43; expected unique ids)\n"
    )


def test_whole_file_checks_gather_every_shard(scheduler, tmp_path):
    rows = _rows()
    for i in (30, 90, 170):
        rows[i] = rows[i].replace('["', '["the", "')
    path = _write(tmp_path / "empty.jsonl", rows)
    assert _same_refusal(path, scheduler, "--empty-gold", "error").endswith(
        ":31: gold answer 'the' normalises to '' under the squad profile (expected non-empty "
        "gold answers with --empty-gold error; also on line 91, 171)\n"
    )
    assert "no row has 'answer'" in _same_refusal(path, scheduler, "--pred-key", "answer")
    blank = _write(tmp_path / "blank.jsonl", ["", "  ", ""])
    assert _same_refusal(blank, scheduler).endswith(
        "blank.jsonl: no data lines (expected one JSON object per line)\n"
    )


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
@pytest.mark.parametrize("parts", [1, 3, 8, 40])
def test_cuts_read_in_blocks_number_lines_and_rows_like_a_whole_read(
    tmp_path, monkeypatch, block, parts
):
    import ragmeter.executors.plan as plan

    monkeypatch.setattr(plan, "_BLOCK", block)
    rows = _rows(30)
    for i in (0, 4, 5, 17, 29):  # blank lines, whitespace lines, a line of "{" twice
        rows[i] = ["", "  \t", "\r", rows[i].replace('"s', '{"s'), "   "][i % 5]
    data = ("\n".join(rows) + '\n{"id": "last"}').encode()  # no newline at the end
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data)
    shards = plan.line_shards(str(path), parts, ())
    lines = data.split(b"\n")
    assert shards[0].start == 0 and shards[-1].end == -1
    assert [s.end for s in shards[:-1]] == [s.start for s in shards[1:]]
    for s in shards:
        assert s.first_line == data[: s.start].count(b"\n") + 1
        assert s.first_row == sum(b"{" in ln for ln in lines[: s.first_line - 1])
        end = len(lines) if s.end < 0 else data[: s.end].count(b"\n")
        assert s.rows == sum(b"{" in ln for ln in lines[s.first_line - 1 : end]) > 0
        assert s.start == 0 or b"{" in lines[s.first_line - 1]
    n_rows = sum(b"{" in ln for ln in lines)
    assert sum(s.rows for s in shards) == n_rows
    # byte targets closer than a line make one cut: as many shards as asked while lines are short
    assert len(shards) == parts if parts <= 8 else parts // 2 <= len(shards) <= n_rows


def test_unreadable_input_is_the_in_process_line_before_any_cluster(scheduler, tmp_path):
    assert _same_refusal(str(tmp_path / "nope.jsonl"), scheduler).endswith(
        "nope.jsonl: cannot read (No such file or directory)\n"
    )
    assert (
        _same_refusal(str(tmp_path), scheduler) == f"{tmp_path}: is a directory (expected a file)\n"
    )


@pytest.mark.parametrize(
    "bad",
    [b'{"id": "x\xff"}', b'{"id": "x", "pred_answer": NaN}', b'["a list"]', b"[" * 3_000],
    ids=["utf-8", "nan", "array", "deep"],
)
def test_a_bad_line_in_a_late_shard_reads_as_in_process(scheduler, tmp_path, bad):
    rows = [r.encode() for r in _rows()]
    rows[185] = bad
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"\n".join(rows) + b"\n")
    assert _shard_of(str(path), 186) >= 2
    assert f"{path}:186: " in _same_refusal(str(path), scheduler)
