"""``ragmeter judge`` and ``ragmeter cache`` end to end (in-process and in subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragmeter.judge.config import HINT
from tests.helpers import REPO, invoke, run_cli
from tests.judge.fake_openai import SENTINEL_KEY


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def samples(n: int = 4, tag: str | None = None) -> list[dict]:
    t = f" [[rm-test:{tag}]]" if tag else ""
    return [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "answer": f"Answer {i}. Extra {i}.",
            "reference": f"Answer {i}.{t}",
            "contexts": [f"answer {i} is here", "noise"],
        }
        for i in range(n)
    ]


def cache_entries(path: Path) -> int:
    if not path.exists():
        return 0
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


# -- no judge configured --------------------------------------------------------------------------


def test_without_an_endpoint_every_llm_metric_is_needs_llm(tmp_path, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(3))
    res = invoke(
        "judge", str(inp), "-m", "faithfulness", "-m", "answer_correctness", "-m", "context_recall"
    )
    assert res.code == 0, res.stderr
    assert res.stderr == HINT + "\n"  # exactly one hint line
    summary = json.loads(res.stdout)
    for name in (
        "faithfulness",
        "faithfulness_contradiction_rate",
        "answer_correctness",
        "answer_recall",
        "answer_precision",
        "context_recall",
    ):
        m = summary["metrics"][name]
        assert (m["mean"], m["n"], m["n_ok"], m["status_counts"]) == (None, 3, 0, {"needs_llm": 3})
    assert summary["cost"]["calls_sent"] == 0
    assert fake.requests == []
    assert not (tmp_path / ".ragmeter").exists()  # nothing written, no cache created


def test_a_key_alone_configures_nothing(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "-m", "faithfulness")
    assert res.code == 0 and res.stderr == HINT + "\n"


# -- a configured run -----------------------------------------------------------------------------


def test_run_writes_summary_per_sample_and_ledger(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(3))
    out, per, led = tmp_path / "summary.json", tmp_path / "per.jsonl", tmp_path / "ledger.jsonl"
    res = invoke(
        "judge",
        str(inp),
        "-m",
        "faithfulness",
        "-m",
        "context_precision",
        "--output",
        str(out),
        "--per-sample",
        str(per),
        "--ledger",
        str(led),
    )
    assert res.code == 0, res.stderr
    assert res.stdout == "" and res.stderr == ""
    summary = json.loads(out.read_text())
    assert summary["metrics"]["faithfulness"]["mean"] == 0.5  # "Answer i." in ctx, "Extra i." not
    assert summary["metrics"]["context_precision"]["mean"] == 1.0
    assert summary["judge"]["model"] == "judge-test-model"
    assert summary["judge"]["base_url"] == fake.url
    assert summary["judge"]["prompt_versions"]["faithfulness.verify"] == 1
    assert summary["cost"]["calls_sent"] == 9
    lines = [json.loads(x) for x in per.read_text().splitlines()]
    assert [(r["id"], r["metric"]) for r in lines] == [
        (f"q{i}", m) for i in range(3) for m in ("faithfulness", "context_precision")
    ]
    assert lines[0]["explanation"]["statements"] == ["Answer 0.", "Extra 0."]
    ledger = [json.loads(x) for x in led.read_text().splitlines()]
    assert len(ledger) == 9 and {r["stage"] for r in ledger} == {
        "faithfulness.statements",
        "faithfulness.verify",
        "context_precision.usefulness",
    }
    assert not (tmp_path / "per.jsonl.partial.jsonl").exists()  # removed after a finished run
    # the default cache file is in the working directory
    assert cache_entries(tmp_path / ".ragmeter" / "judge-cache.sqlite") == 9


def test_aliases_and_key_map(tmp_path, judge_env, fake):
    rows = [
        {
            "qid": "a",
            "user_input": "Q?",
            "response": "Paris.",
            "ground_truth": "Paris.",
            "retrieved_contexts": [{"id": "d1", "text": "Paris is nice."}],
        }
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    res = invoke("judge", str(inp), "-m", "answer_correctness", "--key", "id=qid", "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["metrics"]["answer_correctness"]["mean"] == 1.0


def test_fail_on_exits_1(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(2, tag="malformed"))
    res = invoke("judge", str(inp), "-m", "answer_correctness", "--fail-on", "parse_error,timeout")
    assert res.code == 1
    assert "parse_error" in res.stderr
    ok = invoke("judge", str(inp), "-m", "answer_correctness", "--fail-on", "timeout")
    assert ok.code == 0


def test_no_claims_as_folds_into_the_mean(tmp_path, judge_env, fake):
    rows = [
        *samples(2),
        {"id": "empty", "question": "Q", "answer": "", "reference": "R", "contexts": ["c"]},
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    plain = json.loads(invoke("judge", str(inp), "-m", "faithfulness").stdout)
    folded = json.loads(
        invoke("judge", str(inp), "-m", "faithfulness", "--no-claims-as", "1").stdout
    )
    assert plain["metrics"]["faithfulness"]["mean"] == 0.5
    assert folded["metrics"]["faithfulness"]["mean"] == pytest.approx((0.5 + 0.5 + 1) / 3)
    assert folded["no_claims_as"] == 1.0


def test_fatal_auth_error_exits_2_with_a_redacted_message(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(3, tag="auth"))
    res = invoke("judge", str(inp), "-m", "answer_correctness")
    assert res.code == 2
    assert res.stderr.startswith("ragmeter judge: HTTP 401")
    assert SENTINEL_KEY not in res.stderr and "***" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


# -- dry run and budget ---------------------------------------------------------------------------


def test_dry_run_sends_nothing_and_counts_match_a_real_run(tmp_path, judge_env, fake):
    rows = [
        *samples(5),
        {
            "id": "long",
            "question": "Q",
            "answer": "A.",
            "reference": "Rome.",
            "contexts": [f"c{i}" for i in range(13)],
        },
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    metrics = ["-m", "answer_correctness", "-m", "context_precision", "-m", "context_entity_recall"]
    dry = invoke(
        "judge", str(inp), *metrics, "--dry-run", "--json", "--price-in", "1", "--price-out", "2"
    )
    assert dry.code == 0, dry.stderr
    assert fake.requests == []
    est = json.loads(dry.stdout)
    by = {m["metric"]: m for m in est["metrics"]}
    assert by["answer_correctness"]["calls"] == [6, 6]
    assert by["context_precision"]["calls"] == [7, 7]  # ⌈13/10⌉ = 2 for the long one
    assert by["context_entity_recall"]["calls"] == [12, 12]
    assert est["total"]["cached"] == 0
    real = invoke("judge", str(inp), *metrics)
    summary = json.loads(real.stdout)
    assert summary["cost"]["calls_sent"] == est["total"]["calls"][0] == len(fake.requests)
    # after the run, every first-stage call is cached
    again = json.loads(invoke("judge", str(inp), *metrics, "--dry-run", "--json").stdout)
    assert again["total"]["cached"] == again["total"]["first_stage_calls"] == 6 + 7 + 6


def test_dry_run_table(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(2))
    res = invoke(
        "judge",
        str(inp),
        "-m",
        "faithfulness",
        "--dry-run",
        "--max-cost",
        "1",
        "--price-in",
        "0.15",
        "--price-out",
        "0.6",
    )
    assert res.code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split() == [
        "metric",
        "samples",
        "calls",
        "cached",
        "prompt",
        "tok",
        "output",
        "tok",
        "USD",
        "(est.)",
    ]
    assert lines[1].split()[:4] == ["faithfulness", "2", "4", "0"]
    assert lines[2].startswith("total")
    assert lines[-1] == "max cost 1.0 USD: within budget"


def test_max_cost_with_unknown_price_exits_2_before_sending(tmp_path, judge_env, fake, monkeypatch):
    monkeypatch.setenv("RAGMETER_LLM_BASE_URL", "https://judge.example.com/v1")
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "-m", "faithfulness", "--max-cost", "0.5")
    assert res.code == 2
    assert "needs a price for model 'judge-test-model'" in res.stderr
    assert fake.requests == []


# -- resume ---------------------------------------------------------------------------------------


def test_sigkill_and_restart_repeats_no_finished_call(tmp_path, fake):
    n = 8
    inp = write_jsonl(tmp_path / "in.jsonl", samples(n))
    cache = tmp_path / "cache.sqlite"
    args = [
        sys.executable,
        "-m",
        "ragmeter",
        "judge",
        str(inp),
        "-m",
        "faithfulness",
        "-m",
        "answer_correctness",
        "--cache",
        str(cache),
        "--per-sample",
        str(tmp_path / "per.jsonl"),
        "--concurrency",
        "2",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "RAGMETER_LLM_BASE_URL": fake.url,
        "RAGMETER_LLM_MODEL": "judge-test-model",
        "OPENAI_API_KEY": SENTINEL_KEY,
    }
    total = n * 3
    finished_target = 7
    fake.hold(after=finished_target)
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + 60
        while cache_entries(cache) < finished_target and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache_entries(cache) == finished_target
        first_digests = {r.digest for r in fake.requests}
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        fake.release()
    assert proc.returncode == -signal.SIGKILL
    fake.hold_after = None
    finished = cache_entries(cache)
    fake.requests.clear()
    res = run_cli(
        "judge",
        str(inp),
        "-m",
        "faithfulness",
        "-m",
        "answer_correctness",
        "--cache",
        str(cache),
        env={
            "RAGMETER_LLM_BASE_URL": fake.url,
            "RAGMETER_LLM_MODEL": "judge-test-model",
            "OPENAI_API_KEY": SENTINEL_KEY,
        },
        cwd=tmp_path,
    )
    assert res.code == 0, res.stderr
    assert len(fake.requests) == total - finished
    completed_first = {r.digest for r in fake.requests} & first_digests
    # requests that were held (never answered) may be sent again; finished ones never are
    assert len(completed_first) <= len(first_digests) - finished_target
    summary = json.loads(res.stdout)
    assert summary["metrics"]["faithfulness"]["n_ok"] == n


def test_resume_from_partial_results_without_the_cache(tmp_path, judge_env, fake):
    rows = samples(3) + samples(6, tag="auth")[3:]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    per = tmp_path / "per.jsonl"
    first = invoke(
        "judge",
        str(inp),
        "-m",
        "answer_correctness",
        "--per-sample",
        str(per),
        "--concurrency",
        "1",
        "--no-cache",
    )
    assert first.code == 2  # the auth failure stops the run
    partial = tmp_path / "per.jsonl.partial.jsonl"
    done_ids = {json.loads(x)["id"] for x in partial.read_text().splitlines()}
    assert done_ids == {"q0", "q1", "q2"}
    fixed = write_jsonl(tmp_path / "in.jsonl", samples(6))
    fake.requests.clear()
    res = invoke(
        "judge",
        str(fixed),
        "-m",
        "answer_correctness",
        "--per-sample",
        str(per),
        "--resume",
        "--no-cache",
    )
    assert res.code == 0, res.stderr
    # what resuming promises: the finished samples (q0..q2) are never judged again and each of
    # q3..q5 is judged once. A client-side retry after a slow reply (a loaded machine) resends
    # the identical body, so requests are counted by digest, not by arrival. A request of the
    # first run (its inputs carry the auth tag) can reach the server after that run stopped on
    # the fatal reply of its sibling call; it is not a request of the resumed run.
    asked = {r.digest: r.user for r in fake.requests if "[[rm-test:auth]]" not in r.user}
    assert len(asked) == 3, [r.user[:80] for r in fake.requests]
    for i in range(6):
        hits = sum(f"Question {i}?" in user for user in asked.values())
        assert hits == (1 if i >= 3 else 0), (i, list(asked.values()))
    assert {json.loads(x)["id"] for x in per.read_text().splitlines()} == {
        f"q{i}" for i in range(6)
    }
    assert not partial.exists()


# -- secrets --------------------------------------------------------------------------------------


def test_the_key_never_appears_in_any_file_ragmeter_writes(tmp_path, judge_env, fake, capfd):
    rows = (
        samples(3)
        + samples(5, tag="malformed_once")[3:]
        + [
            {
                "id": "auth",
                "question": "Q",
                "answer": "A",
                "reference": "R [[rm-test:too_long]]",
                "contexts": ["c"],
            }
        ]
    )
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    out_dir = tmp_path / "out"
    res = invoke(
        "judge",
        str(inp),
        "-m",
        "answer_correctness",
        "-m",
        "faithfulness",
        "--cache",
        str(out_dir / "cache.sqlite"),
        "--output",
        str(out_dir / "summary.json"),
        "--per-sample",
        str(out_dir / "per.jsonl"),
        "--ledger",
        str(out_dir / "ledger.jsonl"),
    )
    assert res.code == 0, res.stderr
    fatal = invoke(
        "judge",
        str(write_jsonl(tmp_path / "auth.jsonl", samples(1, tag="auth"))),
        "-m",
        "answer_correctness",
        "--cache",
        str(out_dir / "cache.sqlite"),
        "--per-sample",
        str(out_dir / "auth-per.jsonl"),
    )
    assert fatal.code == 2
    # the server did receive the key, in the Authorization header
    assert all(r.headers["authorization"] == f"Bearer {SENTINEL_KEY}" for r in fake.requests)
    # the WAL file is scanned as written, before a checkpoint folds it into the database
    files = [p for p in out_dir.rglob("*") if p.is_file()] + list(
        (tmp_path / ".ragmeter").rglob("*")
    )
    names = {p.name for p in files}
    assert {"cache.sqlite", "summary.json", "per.jsonl", "ledger.jsonl"} <= names
    for p in files:
        assert SENTINEL_KEY.encode() not in p.read_bytes(), p
    captured = capfd.readouterr()
    for text in (res.stdout, res.stderr, fatal.stdout, fatal.stderr, captured.out, captured.err):
        assert SENTINEL_KEY not in text


def test_config_file_with_a_literal_key_is_rejected(tmp_path, fake):
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text("judge:\n  base_url: http://127.0.0.1:1/v1\n  model: m\n  api_key: sk-literal\n")
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "--config", str(cfg))
    assert res.code == 2
    assert res.stderr == (
        f"{cfg}:4: judge.api_key: store the key in an environment variable "
        "(name it with api_key_env)\n"
    )


# -- input errors ---------------------------------------------------------------------------------

JUDGE_METRICS = (
    "answer_correctness, answer_recall, answer_precision, answer_relevance, faithfulness, "
    "faithfulness_contradiction_rate, context_precision, context_utilization, context_recall, "
    "context_entity_recall, retrieval_answer_recall, retrieval_answer_precision, "
    "retrieval_answer_f1, retrieval_context_recall, retrieval_context_precision, "
    "retrieval_context_f1, rubric"
)


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (
            '{"id": "a", "answer": "x", "contexts": []}\n{"id": "b", "answer": \n',
            [],
            "in.jsonl:2: not valid JSON: Expecting value at column 23 "
            "(expected one JSON object per line)",
        ),
        (
            '{"id": "a", "question": "q", "contexts": []}\n',
            [],
            "in.jsonl:1: missing key 'answer' "
            "(expected one of answer, response, actual_answer, pred_answer)",
        ),
        (
            '{"id": "a", "answer": "x", "contexts": []}\n'
            '{"id": "a", "answer": "y", "contexts": []}\n',
            [],
            "in.jsonl:2: sample id 'a' appears twice (first on line 1)",
        ),
        (
            '{"id": "a", "answer": 3, "contexts": []}\n',
            [],
            "in.jsonl:1: answer is a JSON int (expected text or null)",
        ),
        (
            '{"id": "a", "answer": "x", "contexts": "one"}\n',
            [],
            "in.jsonl:1: contexts is a JSON str (expected a list of texts or {id, text} objects)",
        ),
        (
            '{"id": "a", "answer": "x", "contexts": [{"id": 1}]}\n',
            [],
            "in.jsonl:1: contexts[0] is not text or an {id, text} object",
        ),
        ("", [], "in.jsonl: no data lines (expected one JSON object per line)"),
        (
            '{"id": "a"}\n',
            ["--key", "question"],
            "ragmeter judge: --key 'question' (expected canonical=field)",
        ),
        (
            '{"id": "a"}\n',
            ["-m", "faithfulnes"],
            "ragmeter judge: unknown judge metric 'faithfulnes' "
            f"(expected one of {JUDGE_METRICS}); did you mean 'faithfulness'?",
        ),
        (
            '{"id": "a"}\n',
            ["-m", "nosuch"],
            f"ragmeter judge: unknown judge metric 'nosuch' (expected one of {JUDGE_METRICS})\n",
        ),
        (
            '{"id": "a"}\n',
            ["--max-cost", "nan"],
            "ragmeter judge: --max-cost nan is NaN (expected a number >= 0)\n",
        ),
        (
            '{"id": "a"}\n',
            ["--timeout", "1e309"],
            "ragmeter judge: --timeout inf is infinite (expected a number > 0)\n",
        ),
        (
            '{"id": "a"}\n',
            ["--rpm", "0"],
            "ragmeter judge: --rpm 0 (expected a number > 0)\n",
        ),
        (
            '{"id": "a", "question": "q", "answer": "x", "contexts": []}\n',
            ["--format", "graphrag"],
            "in.jsonl:1: a plain judge sample, not a graphrag-eval record (expected "
            "graphrag-eval per-question records with template_id, question_id, question_text; "
            "plain samples need --format ragmeter)\n",
        ),
        (
            '{"question_id": "a", "question_text": "q"}\n',
            ["--format", "graphrag"],
            "in.jsonl:1: record has no template_id (expected graphrag-eval per-question "
            "records with template_id, question_id, question_text)\n",
        ),
        (
            '{"id": "a"}\n',
            ["--no-claims-as", "0.5"],
            "ragmeter judge: --no-claims-as 0.5 (expected 0 or 1)",
        ),
        ('{"id": "a"}\n', ["--fail-on", "bad"], "ragmeter judge: --fail-on 'bad' is not a status"),
    ],
)
def test_input_errors_are_one_line_exit_2(tmp_path, content, args, message):
    inp = tmp_path / "in.jsonl"
    inp.write_text(content, encoding="utf-8")
    res = (
        invoke("judge", "in.jsonl", "-m", "faithfulness", *args)
        if "-m" not in args
        else invoke("judge", "in.jsonl", *args)
    )
    assert res.code == 2
    assert res.stderr.startswith(message), res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_unknown_config_key_names_its_line(tmp_path):
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text("project: x\njudge:\n  model: m\n  temprature: 0\n")
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "--config", str(cfg), "-m", "faithfulness")
    assert res.code == 2
    assert res.stderr.startswith(f"{cfg}:4: judge.temprature: unknown key (expected one of ")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("timeout_s: .nan", "judge.timeout_s: nan is NaN (expected a finite number)"),
        ("deadline_s: .inf", "judge.deadline_s: inf is infinite (expected a finite number)"),
        ("max_reply_bytes: 0", "judge.max_reply_bytes: 0 (expected a number greater than 0)"),
    ],
)
def test_a_config_setting_that_is_not_a_usable_number_names_its_line(tmp_path, setting, message):
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text(f"judge:\n  model: m\n  {setting}\n")
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "--config", str(cfg), "-m", "faithfulness")
    assert res.code == 2
    assert res.stderr == f"{cfg}:3: {message}\n"


def test_config_file_drives_the_run(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cfg = tmp_path / "ragmeter.yaml"
    cfg.write_text(
        f"judge:\n  base_url: {fake.url}\n  model: judge-test-model\n  concurrency: 2\n"
        "tasks:\n  judge: {metrics: [context_precision], max_cost_usd: 5.0}\n"
    )
    inp = write_jsonl(tmp_path / "in.jsonl", samples(2))
    res = invoke("judge", str(inp), "--config", str(cfg))
    assert res.code == 0, res.stderr
    assert list(json.loads(res.stdout)["metrics"]) == ["context_precision"]


def test_graphrag_v6_config_drives_the_judge(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "llm:\n  generation:\n    provider: openai\n    model: judge-test-model\n"
        f"    api_base: {fake.url}\n    temperature: 0.0\n    max_tokens: 4096\n"
        "  embedding:\n    provider: openai\n    model: text-embedding-3-small\n"
    )
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    res = invoke("judge", str(inp), "--config", str(cfg), "-m", "answer_correctness")
    assert res.code == 0, res.stderr
    assert res.stderr.startswith(
        "warning: llm.embedding model 'text-embedding-3-small' is not used"
    )
    assert fake.requests[0].body["max_tokens"] == 4096


# -- ragmeter cache -------------------------------------------------------------------------------


def test_cache_stats_prune_export(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(2))
    cache = tmp_path / "c.sqlite"
    assert invoke("judge", str(inp), "-m", "faithfulness", "--cache", str(cache)).code == 0
    assert invoke("judge", str(inp), "-m", "faithfulness", "--cache", str(cache)).code == 0
    stats = json.loads(invoke("cache", "stats", "--cache", str(cache), "--json").stdout)
    assert stats["entries"] == 4 and stats["lookups"] == 8 and stats["hit_rate"] == 0.5
    assert stats["runs"] == 2 and stats["lifetime_usd"] == 0.0
    text = invoke("cache", "stats", "--cache", str(cache)).stdout
    assert "hit rate     50.0% of 8 lookups over 2 runs" in text
    out = tmp_path / "export.jsonl"
    assert invoke("cache", "export", str(out), "--cache", str(cache)).code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 4 and all(r["valid"] for r in rows)
    assert rows[0]["request"]["messages"][0]["content"].startswith("ragmeter-task: faithfulness.")
    assert "authorization" not in json.dumps(rows).lower()
    pr = invoke("cache", "prune", "--older-than", "30d", "--cache", str(cache))
    assert pr.code == 0 and pr.stdout == "deleted 0 entries older than 30d\n"
    time.sleep(0.05)
    pr = invoke("cache", "prune", "--older-than", "0s", "--cache", str(cache), "--json")
    assert json.loads(pr.stdout) == {"deleted": 4}
    bad = invoke("cache", "prune", "--older-than", "soon", "--cache", str(cache))
    assert bad.code == 2 and "expected e.g. 30d" in bad.stderr
    missing = invoke("cache", "stats", "--cache", str(tmp_path / "nope.sqlite"))
    assert missing.code == 2 and "no judge cache at" in missing.stderr


def test_cache_no_requests_and_refresh(tmp_path, judge_env, fake):
    inp = write_jsonl(tmp_path / "in.jsonl", samples(1))
    cache = tmp_path / "c.sqlite"
    invoke(
        "judge", str(inp), "-m", "answer_correctness", "--cache", str(cache), "--cache-no-requests"
    )
    con = sqlite3.connect(cache)
    assert con.execute("SELECT request_json FROM judge_cache").fetchall() == [(None,)]
    con.close()
    fake.requests.clear()
    invoke("judge", str(inp), "-m", "answer_correctness", "--cache", str(cache), "--refresh-cache")
    assert len(fake.requests) == 1


def test_retry_errors_bypasses_only_invalid_entries(tmp_path, judge_env, fake):
    rows = [
        *samples(1),
        {"id": "bad", "question": "Q", "answer": "A", "reference": "R [[rm-test:malformed]]"},
    ]
    inp = write_jsonl(tmp_path / "in.jsonl", rows)
    cache = tmp_path / "c.sqlite"
    invoke("judge", str(inp), "-m", "answer_correctness", "--cache", str(cache))
    assert len(fake.requests) == 3  # 1 ok + call and repair of the bad one
    fake.requests.clear()
    again = json.loads(
        invoke("judge", str(inp), "-m", "answer_correctness", "--cache", str(cache)).stdout
    )
    assert fake.requests == []  # the parse_error is reproduced from the cache for free
    assert again["metrics"]["answer_correctness"]["status_counts"] == {"ok": 1, "parse_error": 1}
    invoke("judge", str(inp), "-m", "answer_correctness", "--cache", str(cache), "--retry-errors")
    assert len(fake.requests) == 2 and all("malformed" in r.user for r in fake.requests)


# -- --format graphrag ----------------------------------------------------------------------------


def test_graphrag_format_writes_graphrag_keys_and_aggregates(tmp_path, judge_env, fake):
    import yaml

    from tests.helpers import CONFORMANCE

    src = CONFORMANCE / "graphrag_eval/tests-with-llm/test_data/evaluation_1.yaml"
    inp = tmp_path / "evaluation_1.yaml"
    inp.write_bytes(src.read_bytes())
    original = yaml.safe_load(src.read_text())

    def script(req):
        if req.stage == "answer_correctness.claims":
            return {
                "reference_claims": ["OSLO T1", "OSLO T2"],
                "answer_claims": ["OSLO T2", "OSLO T1"],
                "matches": [{"reference": 1, "answer": 2}, {"reference": 2, "answer": 1}],
                "reason": "same",
            }
        if req.stage == "context_recall.attribute":
            n = len(req.numbered("statement"))
            return {
                "verdicts": [
                    {
                        "index": i,
                        "attributed": i == 1,
                        "evidence": [1] if i == 1 else [],
                        "reason": "",
                    }
                    for i in range(1, n + 1)
                ]
            }
        return None

    fake.script("*", script)
    out = tmp_path / "out.yaml"
    res = invoke(
        "judge",
        str(inp),
        "--format",
        "graphrag",
        "-m",
        "answer_correctness",
        "-m",
        "retrieval_answer_f1",
        "-m",
        "retrieval_context_f1",
        "--per-sample",
        str(out),
    )
    assert res.code == 0, res.stderr
    (rec,) = yaml.safe_load(out.read_text())
    assert (
        rec["answer_reference_claims_count"],
        rec["answer_actual_claims_count"],
        rec["answer_matching_claims_count"],
    ) == (2, 2, 2)
    assert (rec["answer_recall"], rec["answer_precision"], rec["answer_f1"]) == (1.0, 1.0, 1.0)
    step = rec["actual_steps"][0]
    assert step["id"] == "call_3"
    # reference answer "OSLO T1, OSLO T2" is one statement, attributed; both documents useful
    assert (
        step["retrieval_answer_recall"],
        step["retrieval_answer_precision"],
        step["retrieval_answer_f1"],
    ) == (1.0, 1.0, 1.0)
    # reference contexts: two statements (one per reference document), the first attributed
    assert step["retrieval_context_recall"] == 0.5 and step["retrieval_context_precision"] == 1.0
    assert step["retrieval_context_f1"] == pytest.approx(2 / 3)
    assert step["retrieval_answer_f1_cost"] == 0.0  # a loopback endpoint costs 0.0
    # nothing else of the record changed
    for k, v in original[0].items():
        if k != "actual_steps":
            assert rec[k] == v or k in (
                "answer_recall",
                "answer_precision",
                "answer_f1",
                "answer_correctness_reason",
            ), k
    ctx_req = [r for r in fake.requests if r.stage == "context_recall.statements"]
    assert any(
        r.block("reference")
        == "Transformer OSLO T1 is in Substation Oslo.\nTransformer OSLO T2 is in "
        "Substation Oslo."
        for r in ctx_req
    )
    summary = json.loads(res.stdout)
    tid = "list_all_transformers_within_Substation_SUBSTATION"
    assert summary["per_template"][tid]["number_of_success_samples"] == 1
    assert summary["per_template"][tid]["answer_f1"] == {
        "sum": 1.0,
        "mean": 1.0,
        "median": 1.0,
        "min": 1.0,
        "max": 1.0,
    }
    assert summary["per_template"][tid]["steps"]["retrieval_context_recall"]["mean"] == 0.5
    assert summary["micro"]["retrieval_answer_f1"]["sum"] == 1.0
    assert summary["macro"]["retrieval_context_recall"] == {"mean": 0.5}


def test_graphrag_format_invalid_retrieval_output_and_reference_join(tmp_path, judge_env, fake):
    from tests.helpers import CONFORMANCE

    data = CONFORMANCE / "graphrag_eval/tests-with-llm/test_data"
    responses = [
        json.loads(x) for x in (data / "actual_responses_1.jsonl").read_text().splitlines()
    ]
    responses[0]["actual_steps"][0]["output"] = "not json"
    resp = write_jsonl(tmp_path / "responses.jsonl", responses)
    out = tmp_path / "out.jsonl"
    res = invoke(
        "judge",
        str(resp),
        "--format",
        "graphrag",
        "--reference",
        str(data / "reference_1.yaml"),
        "-m",
        "retrieval_answer_f1",
        "--per-sample",
        str(out),
    )
    assert res.code == 0, res.stderr
    (rec,) = [json.loads(x) for x in out.read_text().splitlines()]
    step = rec["actual_steps"][0]
    assert step["retrieval_answer_recall_error"] == "no_claims: invalid retrieval output"
    assert step["retrieval_answer_precision_error"] == "no_claims: invalid retrieval output"
    assert "retrieval_answer_f1" not in step
    assert fake.requests == []
    assert rec["question_text"] == "List all transformers within Substation OSLO"


def test_interrupt_exits_130_and_keeps_finished_work(tmp_path, fake):
    n = 6
    inp = write_jsonl(tmp_path / "in.jsonl", samples(n))
    cache = tmp_path / "cache.sqlite"
    per = tmp_path / "per.jsonl"
    args = [
        sys.executable,
        "-m",
        "ragmeter",
        "judge",
        str(inp),
        "-m",
        "answer_correctness",
        "--cache",
        str(cache),
        "--per-sample",
        str(per),
        "--concurrency",
        "1",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "RAGMETER_LLM_BASE_URL": fake.url,
        "RAGMETER_LLM_MODEL": "judge-test-model",
        "OPENAI_API_KEY": SENTINEL_KEY,
    }
    fake.hold(after=3)
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + 60
        while cache_entries(cache) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        fake.release()
    assert proc.returncode == 130, err
    assert err.decode().strip().splitlines()[-1] == (
        f"ragmeter judge: interrupted; finished calls are in the cache; finished samples in "
        f"{tmp_path / 'per.jsonl.partial.jsonl'}"
    )
    assert not per.exists()  # no half-written output
    partial = tmp_path / "per.jsonl.partial.jsonl"
    assert {json.loads(x)["id"] for x in partial.read_text().splitlines()} == {"q0", "q1", "q2"}
    assert cache_entries(cache) == 3
