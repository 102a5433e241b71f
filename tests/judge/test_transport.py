"""The judge's HTTP transport: the SDK's URL, headers and error reading, over aiohttp."""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import warnings

import pytest

from ragmeter.judge.client import JudgeRequest, OpenAIJudgeClient, TransientError
from ragmeter.judge.transport import Transport, status_error
from tests.judge.fake_openai import SENTINEL_KEY, Reply


def _request(i: int, timeout_s: float = 10.0) -> JudgeRequest:
    return JudgeRequest(
        messages=[{"role": "user", "content": f"Say hi {i}"}],
        schema=None,
        schema_name="reply",
        params={"temperature": 0.0, "max_tokens": 16},
        timeout_s=timeout_s,
    )


def _once(client: OpenAIJudgeClient, req: JudgeRequest | None = None) -> None:
    """One call on a loop of its own, the client closed after it."""

    async def go() -> None:
        try:
            await client.complete(req or _request(0))
        finally:
            await client.aclose()

    asyncio.run(go())


def _sdk(base_url: str):
    import openai

    return openai.AsyncOpenAI(base_url=base_url, api_key=SENTINEL_KEY, max_retries=0)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8000/v1/",
        "https://api.example.com",
        "http://[::1]:11434/v1",
    ],
)
def test_the_url_is_the_sdks(base_url):
    transport = Transport(base_url=base_url, api_key=SENTINEL_KEY, timeout_s=5.0)
    assert transport.url == str(_sdk(base_url)._prepare_url("/chat/completions"))


def test_a_query_in_the_base_url_stays_after_the_path():
    # the SDK would append the path after the query (".../d1/?api-version=...chat/completions")
    base = "https://me.openai.azure.com/openai/deployments/d1?api-version=2024-06-01"
    transport = Transport(base_url=base, api_key=SENTINEL_KEY, timeout_s=5.0)
    assert transport.url == (
        "https://me.openai.azure.com/openai/deployments/d1/chat/completions?api-version=2024-06-01"
    )


def test_the_headers_are_the_sdks(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-7")
    _once(OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY))
    (req,) = fake.requests
    sdk = _sdk(fake.url)
    sdk_headers = {**sdk.default_headers, **sdk.auth_headers}.items()
    expected = {k.lower(): v for k, v in sdk_headers if isinstance(v, str)}
    assert expected["authorization"] == f"Bearer {SENTINEL_KEY}"
    assert expected["openai-organization"] == "org-42"
    assert expected["openai-project"] == "proj-7"
    assert {k: req.headers.get(k) for k in expected} == expected
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "judge-test-model"


def test_calls_share_keep_alive_connections(fake):
    fake.latency = 0.2  # the first 24 calls are all in flight together
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)

    async def go() -> None:
        try:
            await asyncio.gather(*(judge.complete(_request(i)) for i in range(24)))
            for i in range(24, 48):  # one at a time: each reuses an idle connection
                await judge.complete(_request(i))
        finally:
            await judge.aclose()

    asyncio.run(go())
    ports = [r.client_port for r in fake.requests]
    assert len(ports) == 48
    assert len(set(ports[:24])) == 24
    assert set(ports[24:]) <= set(ports[:24])


def test_no_session_is_left_open(fake, caplog):
    """A client used on two event loops, closed on the second only: aiohttp does not complain
    of an unclosed session or connector, now or when they are collected."""
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.DEBUG, "asyncio"):
        warnings.simplefilter("always")
        asyncio.run(judge.complete(_request(0)))  # this loop ends with its session open

        _once(judge, _request(1))
        del judge
        gc.collect()
    assert len(fake.requests) == 2
    assert fake.requests[0].client_port != fake.requests[1].client_port
    # aiohttp's own complaints (a socket of the first loop, which closed with it still open,
    # is closed when collected, with Python's ResourceWarning, ignored unless asked for)
    aiohttp_says = ("Unclosed client session", "Unclosed connector")
    assert not [str(w.message) for w in seen if str(w.message).startswith(aiohttp_says)]
    assert not [r.getMessage() for r in caplog.records if r.getMessage().startswith(aiohttp_says)]


def test_a_read_timeout_is_transient(fake):
    fake.script("slow", lambda req: Reply(content="late", delay=1.0))
    judge = OpenAIJudgeClient(base_url=fake.url, model="judge-test-model", api_key=SENTINEL_KEY)
    req = JudgeRequest(
        messages=[{"role": "user", "content": "[[rm-test:slow]] hi"}],
        schema=None,
        schema_name="reply",
        params={},
        timeout_s=0.2,
    )

    with pytest.raises(TransientError) as err:
        _once(judge, req)
    assert (err.value.kind, err.value.label) == ("timeout", "read timeout")


def test_a_refused_connection_is_transient():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = OpenAIJudgeClient(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=SENTINEL_KEY
    )

    with pytest.raises(TransientError) as err:
        _once(judge)
    assert (err.value.kind, err.value.label) == ("connection", "connection error")


WITH_MESSAGE = [
    b'{"error": {"message": "bad max_tokens", "type": "invalid_request_error", "code": null}}',
    b'{"error": {"message": "quota", "code": "insufficient_quota"}}',
    b'{"error": {"error": {"message": "nested", "code": 7}}}',
    b'{"error": {"error": "an inner string", "code": "c1"}}',
    b'{"message": "no error key", "type": "t"}',
    b'{"object": "error", "message": "vLLM style", "type": "BadRequestError", "code": 400}',
    '{"error": {"message": "caf\u00e9 \u2014 unicode"}}'.encode(),
]


@pytest.mark.parametrize("status", [400, 404, 429, 500])
@pytest.mark.parametrize("content", WITH_MESSAGE)
def test_an_error_message_is_read_as_through_the_sdk(status, content):
    """The installed SDK's own status error for the same reply, read the way the client read
    it when the SDK sent the requests: the error object's message, or the plain string that
    stands for it; its code, else its type, else the SDK's code."""
    import openai

    # the SDK's HTTP library (httpx, or httpx2 in later SDK releases)
    http = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__)
    sdk = _sdk("http://127.0.0.1:1/v1")
    response = http.Response(status, content=content, request=http.Request("POST", "http://x/"))
    exc = sdk._make_status_error_from_response(response)
    assert isinstance(exc, openai.APIStatusError)
    body = exc.body
    err = body.get("error", body)
    if isinstance(err, dict):
        message = str(err["message"])
        found = err.get("code") or err.get("type")
        code = str(found) if found else None
    else:
        message, code = err, exc.code
    assert status_error(status, content) == (message, code)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"error": {"message": "", "type": "server_error", "code": "boom"}}', None),
        (b'{"detail": "FastAPI style"}', "Error code: 400 - {'detail': 'FastAPI style'}"),
        (b'["a", "list"]', "Error code: 400 - ['a', 'list']"),
        (b'{"error": "outer", "code": 3}', "Error code: 400 - {'error': 'outer', 'code': 3}"),
        (b'"a JSON string"', "Error code: 400 - a JSON string"),
        (b"null", "Error code: 400 - None"),
        (b"<html><body>502 Bad Gateway</body></html>", "<html><body>502 Bad Gateway</body></html>"),
        (b"", "Error code: 400"),
        (b"  plain text  ", "plain text"),
    ],
)
def test_without_a_message_the_body_is_shown(content, message):
    got, code = status_error(400, content)
    if message is None:  # an empty message: the body, and the error object's code
        assert got.startswith("Error code: 400 - {'error': {'message': ''")
        assert code == "boom"
    else:
        assert (got, code) == (message, None)


def test_a_proxy_from_the_environment_carries_the_requests(fake, monkeypatch):
    """``HTTP_PROXY`` is read once, as the SDK's client reads it: the fake server stands in for
    the proxy and sees the absolute URL; ``NO_PROXY`` exempts a host."""
    root = fake.url.rsplit("/v1", 1)[0]
    monkeypatch.setenv("HTTP_PROXY", root)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    judge = OpenAIJudgeClient(
        base_url="http://judge.invalid/v1", model="judge-test-model", api_key=SENTINEL_KEY
    )
    _once(judge)
    assert [r.path for r in fake.requests] == ["http://judge.invalid/v1/chat/completions"]
    monkeypatch.setenv("NO_PROXY", "judge.invalid")
    exempt = OpenAIJudgeClient(
        base_url="http://judge.invalid/v1", model="judge-test-model", api_key=SENTINEL_KEY
    )
    with pytest.raises(TransientError) as err:
        _once(exempt)
    assert err.value.kind == "connection"
    assert len(fake.requests) == 1
