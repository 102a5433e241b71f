"""A hostile or broken endpoint: whatever it sends becomes a per-sample status.

The fake server plays the faults a real deployment meets (a proxy's HTML page with status 200,
``null``, an error object, a cut-off body, a slow drip, a reply of megabytes, a key echoed back),
and every test asserts the status, the detail, what was retried and what reached the cache.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import ragmeter.judge as rj
from ragmeter.judge.limiter import FakeClock
from tests.helpers import invoke
from tests.judge.fake_openai import SENTINEL_KEY
from tests.judge.test_cli import samples, write_jsonl


def ac(tag: str, sid: str = "q") -> rj.Sample:
    return rj.Sample(sid, question="Q", reference=f"Paris. [[rm-test:{tag}]]", answer="Paris.")


def rows(path: Path) -> list[tuple[str, int, str]]:
    """(key, valid, response_json) of every cache entry."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(con.execute("SELECT key, valid, response_json FROM judge_cache"))
    finally:
        con.close()


# -- item 1 and 3: any HTTP-200 body is classified, retried, never cached ------------------------

FAULTS = {
    "bad_json_body": "HTTP 200 with a body that is not JSON (Expecting value at char 22)",
    "html_page": "HTTP 200 with an HTML page instead of JSON",
    "null_body": "HTTP 200 with JSON null instead of a chat completion",
    "array_body": "HTTP 200 with a JSON array instead of a chat completion",
    "error_200": "HTTP 200 with an error object: upstream overloaded",
    "empty_body": "HTTP 200 with an empty body",
    "content_object": "HTTP 200 with a message.content that is a JSON object (expected a string)",
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_body_that_is_not_a_reply_is_retried_then_parse_error(fake, make_config, fault):
    clock = FakeClock()
    res = rj.evaluate(
        [ac(fault, "bad"), ac("ok", "good")],
        ["answer_correctness"],
        config=make_config(max_attempts=3),
        clock=clock,
    )
    # the run goes on: the other sample is scored
    assert res.statuses("answer_correctness") == {"bad": "parse_error", "good": "ok"}
    bad = next(r for r in res.records if r["id"] == "bad")
    assert bad["detail"] == f"{FAULTS[fault]} after 3 attempts"
    assert bad["value"] is None
    # retried like a 5xx (with backoff on the clock), never repaired
    assert sum(1 for r in fake.requests if r.scenario == fault) == 3
    assert not any(r.repair for r in fake.requests)
    assert len(clock.sleeps) == 2
    # never cached as a reply: only the good sample's entry is there
    entries = rows(Path(make_config().cache_path))
    assert len(entries) == 1 and entries[0][1] == 1


@pytest.mark.parametrize("fault", ["bad_json_body", "html_page", "null_body", "content_object"])
def test_a_fault_once_then_a_good_reply_is_ok(fake, make_config, fault):
    res = rj.evaluate(
        [ac(f"{fault}_once")], ["answer_correctness"], config=make_config(), clock=FakeClock()
    )
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert res.values("answer_correctness") == {"q": 1.0}
    assert len(fake.requests) == 2
    (entry,) = rows(Path(make_config().cache_path))
    assert entry[1] == 1


def test_a_body_cut_off_by_the_connection_is_retried_as_a_connection_error(fake, make_config):
    clock = FakeClock()
    res = rj.evaluate(
        [ac("cut_body"), ac("cut_body_once", "once")],
        ["answer_correctness"],
        config=make_config(max_attempts=2),
        clock=clock,
    )
    assert res.statuses("answer_correctness") == {"q": "timeout", "once": "ok"}
    bad = next(r for r in res.records if r["id"] == "q")
    assert bad["detail"] == "connection lost while reading the reply after 2 attempts"


def test_a_re_run_after_a_fault_asks_again(fake, make_config):
    cfg = make_config(max_attempts=1)
    first = rj.evaluate([ac("html_page")], ["answer_correctness"], config=cfg)
    assert first.statuses("answer_correctness") == {"q": "parse_error"}
    assert len(fake.requests) == 1  # no repair call for a page that is not a reply
    again = rj.evaluate([ac("html_page")], ["answer_correctness"], config=cfg)
    assert again.statuses("answer_correctness") == {"q": "parse_error"}
    assert len(fake.requests) == 2  # nothing was cached, so the call is sent again


EMPTY_USAGE = {"prompt_tokens": None, "completion_tokens": None, "cached_prompt_tokens": None}
# what an earlier release stored for a proxy's HTML page (a "reply" with nothing in it), and for
# a message.content that was a JSON object (kept as it came)
LEGACY_FAULTS = {
    "empty": {
        "text": None,
        "refusal": None,
        "finish_reason": None,
        "usage": EMPTY_USAGE,
        "model": None,
        "logprobs": None,
    },
    "object": {
        "text": {"reference_claims": []},
        "refusal": None,
        "finish_reason": "stop",
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "cached_prompt_tokens": None},
        "model": "judge-test-model",
        "logprobs": None,
    },
}


@pytest.mark.parametrize("legacy", sorted(LEGACY_FAULTS))
def test_a_fault_cached_by_an_earlier_release_is_asked_again(fake, make_config, legacy):
    cfg = make_config()
    rj.evaluate([ac("ok")], ["answer_correctness"], config=cfg)
    con = sqlite3.connect(cfg.cache_path)
    con.execute(
        "UPDATE judge_cache SET response_json = ?, valid = 0",
        (json.dumps(LEGACY_FAULTS[legacy]),),
    )
    con.commit()
    con.close()
    res = rj.evaluate([ac("ok")], ["answer_correctness"], config=cfg)
    assert res.statuses("answer_correctness") == {"q": "ok"}
    assert len(fake.requests) == 2


def test_the_cli_reports_a_malformed_body_per_sample_and_exits_0(tmp_path, judge_env, fake):
    rows_in = samples(3)
    rows_in[1]["reference"] += " [[rm-test:bad_json_body]]"
    inp = write_jsonl(tmp_path / "in.jsonl", rows_in)
    per = tmp_path / "per.jsonl"
    res = invoke(
        "judge",
        str(inp),
        "-m",
        "answer_correctness",
        "--max-attempts",
        "2",
        "--per-sample",
        str(per),
    )
    assert res.code == 0, res.stderr
    assert "Traceback" not in res.stderr
    recs = {r["id"]: r for r in map(json.loads, per.read_text().splitlines())}
    assert {k: r["status"] for k, r in recs.items()} == {
        "q0": "ok",
        "q1": "parse_error",
        "q2": "ok",
    }
    assert recs["q1"]["detail"] == (
        "HTTP 200 with a body that is not JSON (Expecting value at char 22) after 2 attempts"
    )
    summary = json.loads(res.stdout)
    assert summary["metrics"]["answer_correctness"]["status_counts"] == {"ok": 2, "parse_error": 1}


# -- item 2: timeout_s and deadline_s bound the total time of a slow drip -------------------------


def test_a_slow_drip_is_cut_at_the_attempt_timeout(fake, make_config):
    # a byte every 50 ms never trips a read timeout; the reply would take about 10 s
    fake.drip_seconds = 0.05
    res = rj.evaluate(
        [ac("drip")],
        ["answer_correctness"],
        config=make_config(timeout_s=0.3, max_attempts=2),
        clock=FakeClock(),
    )
    assert res.statuses("answer_correctness") == {"q": "timeout"}
    assert res.records[0]["detail"] == "read timeout after 2 attempts"
    assert len(fake.requests) == 2


def test_the_deadline_bounds_the_whole_call_and_stops_the_retries(fake, make_config):
    fake.drip_seconds = 0.05
    res = rj.evaluate(
        [ac("drip")],
        ["answer_correctness"],
        config=make_config(timeout_s=60.0, deadline_s=0.4, max_attempts=6),
    )
    assert res.statuses("answer_correctness") == {"q": "timeout"}
    assert res.records[0]["detail"] == "deadline_s 0.4 reached after 1 attempt"
    assert len(fake.requests) == 1


# -- item 5: a reply over max_reply_bytes is not kept ----------------------------------------------


def test_a_huge_reply_is_parse_error_reply_too_large_and_not_stored(fake, make_config):
    fake.huge_bytes = 200_000
    cfg = make_config(max_reply_bytes=20_000)
    res = rj.evaluate([ac("huge_reply"), ac("ok", "good")], ["answer_correctness"], config=cfg)
    assert res.statuses("answer_correctness") == {"q": "parse_error", "good": "ok"}
    bad = next(r for r in res.records if r["id"] == "q")
    assert bad["detail"] == (
        "reply_too_large: the reply has more than 20000 bytes (max_reply_bytes)"
    )
    assert sum(1 for r in fake.requests if r.scenario == "huge_reply") == 1  # no retry, no repair
    entries = {valid: resp for _, valid, resp in rows(Path(cfg.cache_path))}
    assert len(entries[0]) < 500 and json.loads(entries[0])["text"] is None
    assert Path(cfg.cache_path).stat().st_size < 100_000
    # a re-run reproduces the status from the cache without asking again
    sent = len(fake.requests)
    again = rj.evaluate([ac("huge_reply")], ["answer_correctness"], config=cfg)
    assert again.statuses("answer_correctness") == {"q": "parse_error"}
    assert again.records[0]["detail"] == bad["detail"]
    assert len(fake.requests) == sent


def test_the_size_cap_also_holds_for_a_client_that_reads_everything(fake, make_config):
    from ragmeter.judge.client import JudgeResponse

    class Greedy:
        """A client like LiteLLM's: the whole reply arrives before ragmeter sees it."""

        model = "judge-test-model"

        async def complete(self, req):
            return JudgeResponse("x" * 50_000, None, "stop", 10, 5000, None, "m", None, 1.0)

        async def aclose(self):
            return None

    res = rj.evaluate(
        [ac("ok")],
        ["answer_correctness"],
        config=make_config(max_reply_bytes=10_000),
        client=Greedy(),
    )
    assert res.statuses("answer_correctness") == {"q": "parse_error"}
    assert res.records[0]["detail"].startswith("reply_too_large: ")
    assert res.records[0]["tokens_out"] == 5000  # the usage the reply did report is kept


# -- item 4: the key, whole or in part, is never written ------------------------------------------

# what the fake server echoes: the whole key, "sk-test-...L-7f3a" and "sk-test-************7f3a"
LEAKS = (SENTINEL_KEY, "SENTINEL", "sk-test", "L-7f3a", "-7f3a")


def test_an_echoed_key_is_masked_in_every_file(tmp_path, judge_env, fake, capfd):
    rows_in = samples(4)
    tags = ("key_refusal", "key_in_reply", "partial_key_400", "ok")
    for row, tag in zip(rows_in, tags, strict=True):
        row["reference"] += f" [[rm-test:{tag}]]"
    inp = write_jsonl(tmp_path / "in.jsonl", rows_in)
    out = tmp_path / "out"
    res = invoke(
        "judge",
        str(inp),
        "-m",
        "answer_correctness",
        "--cache",
        str(out / "cache.sqlite"),
        "--output",
        str(out / "summary.json"),
        "--per-sample",
        str(out / "per.jsonl"),
        "--ledger",
        str(out / "ledger.jsonl"),
    )
    assert res.code == 0, res.stderr
    fatal = invoke(
        "judge",
        str(write_jsonl(tmp_path / "auth.jsonl", samples(1, tag="partial_key_401"))),
        "-m",
        "answer_correctness",
        "--cache",
        str(out / "cache.sqlite"),
    )
    assert fatal.code == 2
    assert fatal.stderr == (
        "ragmeter judge: HTTP 401: the endpoint refused the credentials "
        "(Incorrect API key provided: ***.)\n"
    )
    recs = {r["id"]: r for r in map(json.loads, (out / "per.jsonl").read_text().splitlines())}
    assert recs["q0"]["status"] == "refused"
    assert recs["q0"]["detail"] == "refusal: I will not use the key *** that you sent."
    assert recs["q1"]["status"] == "ok"
    assert recs["q1"]["answer_correctness_reason"] == "checked with *** (***)"
    assert recs["q2"]["status"] == "refused"
    assert recs["q2"]["detail"] == "HTTP 400: Invalid API key provided: ***"
    # the server did get the key; nothing ragmeter wrote or printed holds any part of it
    assert all(r.headers["authorization"] == f"Bearer {SENTINEL_KEY}" for r in fake.requests)
    captured = capfd.readouterr()
    texts = [res.stdout, res.stderr, fatal.stdout, fatal.stderr, captured.out, captured.err]
    texts += [p.read_bytes().decode("utf-8", "replace") for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in out.rglob("*")} >= {"cache.sqlite", "per.jsonl", "ledger.jsonl"}
    for text in texts:
        for leak in LEAKS:
            assert leak not in text


KEY = "sk-relia-0123456789abcdef9d2c41"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Incorrect API key provided: sk-relia...9d2c41", "Incorrect API key provided: ***"),
        (f"Bad key provided: sk-relia{'*' * 20}9d2c41.", "Bad key provided: ***."),
        ("key \u20269d2c41 was revoked", "key *** was revoked"),
        ("key sk-r...", "key ***"),
        ("the key ending in 9d2c41 is wrong", "the key ending in *** is wrong"),
        ("prefix 0123456789 seen", "prefix *** seen"),
        # not the key: short fragments, other words next to an ellipsis, ordinary text
        ("and so on... the end...", "and so on... the end..."),
        (
            "a word of the key without digits: relia, abcdef",
            "a word of the key without digits: relia, abcdef",
        ),
        ("model gpt-4o... failed after 9d2c retries", "model gpt-4o... failed after 9d2c retries"),
    ],
)
def test_the_redactor_masks_the_key_whole_or_in_part(text, masked):
    from ragmeter.judge.secrets import Redactor

    assert Redactor([KEY])(text) == masked


@pytest.mark.parametrize(
    ("url", "masked", "secrets"),
    [
        (
            "https://me.openai.azure.com/openai/v1?api-version=2024-06-01&api-key=abc123",
            "https://me.openai.azure.com/openai/v1?api-version=2024-06-01&api-key=***",
            ["abc123"],
        ),
        ("https://h/v1?key=AIza999", "https://h/v1?key=***", ["AIza999"]),
        ("https://h/v1?access_token=t0k&model=m", "https://h/v1?access_token=***&model=m", ["t0k"]),
        ("https://h/v1?sv=1&sig=s1g#frag", "https://h/v1?sv=1&sig=***#frag", ["s1g"]),
        ("https://u:pw@h/v1", "https://***@h/v1", ["pw"]),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", []),
    ],
)
def test_credentials_in_a_base_url_are_found_and_masked(url, masked, secrets):
    from ragmeter.judge.secrets import mask_url, url_secrets

    assert mask_url(url) == masked
    assert url_secrets(url) == secrets


def test_a_reply_is_rewritten_only_for_the_configured_key():
    from ragmeter.judge.secrets import Redactor

    r = Redactor(["sk-no-key-required"])  # the llama.cpp server's placeholder key
    text = "A permit is required; authorization: granted to the Bearer bonds holder."
    assert r.reply(text) == text
    assert r.reply("you sent sk-no-key-required") == "you sent ***"
    # placeholders shorter than 8 characters are never masked inside a reply
    assert Redactor(["EMPTY", "none"]).reply('{"verdict": "none", "x": "EMPTY"}') == (
        '{"verdict": "none", "x": "EMPTY"}'
    )
