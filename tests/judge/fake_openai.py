"""A real OpenAI-compatible HTTP server on 127.0.0.1 that plays scripted replies (docs/judge.md).

stdlib ``http.server.ThreadingHTTPServer`` in a daemon thread: ``POST /v1/chat/completions``
and ``GET /v1/models``. The real ``OpenAIJudgeClient`` talks to it over HTTP. A request is
routed by its stage (the ``ragmeter-task: <id>@<version>`` line of the system message) and by a
scenario tag ``[[rm-test:NAME]]`` embedded in the sample's text. Without a tag the server gives
a valid, deterministic reply for every stage (rules in :func:`default_reply`); tests can add
scripts per scenario name. Every request is recorded: headers, body, arrival time and the number
of requests in flight.

Run ``python -m tests.judge.fake_openai --latency 0.02`` to serve from a separate process
(the benchmark does); it prints the base URL on its first line.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TAG = re.compile(r"\[\[rm-test:([a-z0-9_]+)\]\]")
TASK = re.compile(r"\Aragmeter-task: ([a-z_.]+)@(\d+)")
SENTINEL_KEY = "sk-test-SENTINEL-7f3a"


@dataclass
class Reply:
    status: int = 200
    content: Any = None  # normally a string; anything else is sent as that JSON value
    refusal: str | None = None
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = (100, 20)
    cached_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None  # error body for non-200 replies
    delay: float = 0.0
    logprobs: list[dict[str, Any]] | None = None
    raw: bytes | None = None  # the body as it is, instead of a chat completion (faults)
    content_type: str = "application/json"
    drip: float = 0.0  # seconds between the body's bytes (a slow-drip server)


# bodies that proxies and broken servers send with HTTP 200 (endpoint faults)
FAULT_BODIES: dict[str, tuple[bytes, str]] = {
    "bad_json_body": (b'{"id":"x","choices":[ this is not json', "application/json"),
    "html_page": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "null_body": (b"null", "application/json"),
    "array_body": (b"[1,2,3]", "application/json"),
    "error_200": (
        b'{"error": {"message": "upstream overloaded", "type": "server_error"}}',
        "application/json",
    ),
    "empty_body": (b"", "application/json"),
}


@dataclass
class Request:
    """One recorded request, with the parts scripts route on."""

    headers: dict[str, str]
    body: dict[str, Any]
    arrived: float
    in_flight: int
    stage: str | None
    version: int | None
    scenario: str | None
    repair: bool
    digest: str  # sha256 of the canonical body (same request → same digest)
    path: str = ""  # the request's path and query
    client_port: int = 0  # the client's side of the connection it came on

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def user(self) -> str:
        """The first user message (the original request, also inside a repair)."""
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def max_tokens(self) -> int | None:
        return self.body.get("max_tokens") or self.body.get("max_completion_tokens")

    def block(self, tag: str) -> str | None:
        m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", self.user, re.DOTALL)
        return m.group(1) if m else None

    def numbered(self, tag: str) -> list[str]:
        return [
            m.group(2)
            for m in re.finditer(rf'<{tag} n="(\d+)">\n(.*?)\n</{tag}>', self.user, re.DOTALL)
        ]


Script = Callable[[Request], "Reply | dict[str, Any] | str | None"]


def sentences(text: str) -> list[str]:
    """Statements of a text for the default replies: split after '.', ';' or newlines."""
    text = TAG.sub("", text)
    parts = re.split(r"(?<=[.;])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip() and p.strip() not in (".", ";")]


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", s.lower()).strip()


def default_reply(req: Request) -> dict[str, Any] | str:
    """A valid reply for every ragmeter stage, from simple rules on the request's data.

    - statements: the sentences of the answer / reference;
    - faithfulness verdicts: ``supported`` if the statement (normalised) occurs in a context,
      ``contradicted`` if a context contains "not " + the statement, else ``not_found``;
    - attribution: attributed if the statement occurs in a context;
    - usefulness: useful unless the chunk contains the word "noise";
    - claims: sentences of both texts; matched when equal after normalisation;
    - entities: capitalised word runs and 4-digit numbers;
    - questions: N questions; noncommittal when the answer contains "don't know";
    - rubric: one finding per step, score min(4, max of the scale); rubric steps: three steps.
    """
    stage = req.stage
    if stage in ("faithfulness.statements",):
        return {"statements": sentences(req.block("answer") or "")}
    if stage == "context_recall.statements":
        return {"statements": sentences(req.block("reference") or "")}
    if stage == "faithfulness.verify":
        ctxs = [_norm(c) for c in req.numbered("context")]
        verdicts = []
        for i, s in enumerate(req.numbered("statement"), start=1):
            ns = _norm(s)
            ev = [j for j, c in enumerate(ctxs, start=1) if ns and ns in c]
            contra = [j for j, c in enumerate(ctxs, start=1) if ns and ("not " + ns) in c]
            if contra:
                verdicts.append(
                    {"index": i, "verdict": "contradicted", "evidence": contra, "reason": "r"}
                )
            elif ev:
                verdicts.append({"index": i, "verdict": "supported", "evidence": ev, "reason": "r"})
            else:
                verdicts.append({"index": i, "verdict": "not_found", "evidence": [], "reason": "r"})
        return {"verdicts": verdicts}
    if stage == "context_recall.attribute":
        ctxs = [_norm(c) for c in req.numbered("context")]
        out = []
        for i, s in enumerate(req.numbered("statement"), start=1):
            ns = _norm(s)
            ev = [j for j, c in enumerate(ctxs, start=1) if ns and ns in c]
            out.append({"index": i, "attributed": bool(ev), "evidence": ev, "reason": "r"})
        return {"verdicts": out}
    if stage in ("context_precision.usefulness", "context_utilization.usefulness"):
        return {
            "verdicts": [
                {"index": i, "useful": "noise" not in c.lower(), "reason": "r"}
                for i, c in enumerate(req.numbered("chunk"), start=1)
            ]
        }
    if stage == "answer_correctness.claims":
        ref = sentences(req.block("reference") or "")
        ans = sentences(req.block("answer") or "")
        matches, used = [], set()
        for i, r in enumerate(ref, start=1):
            for j, a in enumerate(ans, start=1):
                if j not in used and _norm(r) == _norm(a):
                    matches.append({"reference": i, "answer": j})
                    used.add(j)
                    break
        return {"reference_claims": ref, "answer_claims": ans, "matches": matches, "reason": "ok"}
    if stage == "context_entity_recall.entities":
        text = TAG.sub("", req.block("text") or "")
        found = re.findall(r"\b(?:[A-Z][a-z]+(?: [A-Z][a-z]+)*|\d{4})\b", text)
        return {"entities": list(dict.fromkeys(found))}
    if stage == "answer_relevance.questions":
        n = int(re.search(r"exactly (\d+) different", req.system).group(1))
        answer = req.block("answer") or ""
        return {
            "questions": [f"Question {i} about {_norm(answer)[:40]}?" for i in range(1, n + 1)],
            "noncommittal": "don't know" in answer.lower(),
        }
    if stage == "rubric.score":
        steps = re.findall(r"^(\d+)\. ", req.system, re.MULTILINE)
        hi = int(re.search(r"integers from -?\d+ to (-?\d+)", req.system).group(1))
        return {
            "findings": [{"step": int(s), "note": "fine"} for s in steps],
            "score": min(4, hi),
            "reason": "mostly right",
        }
    if stage == "rubric.steps":
        return {"steps": ["Check the answer.", "Compare with the criteria.", "Choose the score."]}
    return "2\t2\t2\tfree text reason"


def _json(obj: Any) -> str:
    return json.dumps(obj)


def fault_scenario(
    name: str, count: int, good: Any, req: Request, server: FakeOpenAI
) -> Reply | None:
    """Hostile endpoints: ``<fault>`` always, ``<fault>_once`` on the first try only."""
    base = name.removesuffix("_once")
    if name.endswith("_once") and count > 1:
        return None
    good_text = good if isinstance(good, str) else _json(good)
    key = req.headers.get("authorization", "").removeprefix("Bearer ")
    if base in FAULT_BODIES:
        body, ctype = FAULT_BODIES[base]
        return Reply(raw=body, content_type=ctype)
    if base == "content_object":
        return Reply(content=good)  # a JSON object where a string belongs
    if base == "drip":
        return Reply(content=good_text, drip=server.drip_seconds)
    if base == "key_refusal":
        return Reply(content=None, refusal=f"I will not use the key {key} that you sent.")
    if base == "key_in_reply" and isinstance(good, dict) and "reason" in good:
        return Reply(content=_json({**good, "reason": f"checked with {key} ({key[:7]}...)"}))
    if base == "partial_key_400":
        return Reply(
            status=400,
            error={"message": f"Invalid API key provided: {key[:8]}...{key[-6:]}"},
        )
    if base == "partial_key_401":
        return Reply(
            status=401,
            error={
                "message": f"Incorrect API key provided: {key[:8]}{'*' * 12}{key[-4:]}.",
                "code": "invalid_api_key",
            },
        )
    if base == "cut_body":  # the connection closes halfway through the body
        return Reply(raw=good_text.encode()[:20], content_type="application/json", drip=-1.0)
    if base == "huge_reply":
        return Reply(content=good_text + " " * server.huge_bytes)
    return None


def builtin_scenario(name: str, req: Request, server: FakeOpenAI) -> Reply | None:
    """The scenarios of docs/judge.md (None: fall through to the default reply)."""
    count = server.count(name, req)
    good = default_reply(req)
    good_text = good if isinstance(good, str) else _json(good)
    fault = fault_scenario(name, count, good, req, server)
    if fault is not None:
        return fault
    if name == "ok":
        return Reply(content=good_text)
    if name == "fence":
        return Reply(content=f"```json\n{good_text}\n```")
    if name == "think":
        return Reply(content=f"<think>Let me think about {{this}}.</think>\n{good_text}")
    if name == "malformed_once":
        return Reply(content=good_text if req.repair else "Sure! Here is my verdict: supported.")
    if name == "malformed":
        return Reply(content="I think the answer is mostly supported.")
    if name == "wrong_count":
        if isinstance(good, dict) and "verdicts" in good:
            return Reply(content=_json({"verdicts": good["verdicts"][:-1]}))
        return Reply(content=good_text)
    if name == "verbose_verdict":
        if isinstance(good, dict) and "verdicts" in good:
            bad = [{**v, "verdict": "Yes, it is supported"} for v in good["verdicts"]]
            return Reply(content=_json({"verdicts": bad}))
        return Reply(content=good_text)
    if name == "rate_limited":
        if count <= 2:
            return Reply(
                status=429,
                headers={"retry-after-ms": "50"},
                error={"message": "Rate limit reached", "code": "rate_limit_exceeded"},
            )
        return Reply(content=good_text)
    if name == "server_error":
        if count <= 1:
            return Reply(status=500, error={"message": "internal error"})
        return Reply(content=good_text)
    if name == "always_429":
        return Reply(
            status=429,
            headers={"retry-after-ms": "1"},
            error={"message": "Rate limit reached", "code": "rate_limit_exceeded"},
        )
    if name == "slow":
        return Reply(content=good_text, delay=server.slow_seconds)
    if name == "truncated":
        if (req.max_tokens or 0) < 2 * server.base_max_tokens:
            return Reply(content=good_text[: len(good_text) // 2], finish_reason="length")
        return Reply(content=good_text)
    if name == "always_truncated":
        return Reply(content=good_text[: len(good_text) // 2], finish_reason="length")
    if name == "refusal":
        return Reply(content=None, refusal="I can't help with that request.")
    if name == "content_filter":
        return Reply(content="", finish_reason="content_filter")
    if name == "too_long":
        return Reply(
            status=400,
            error={
                "message": "This model's maximum context length is 8192 tokens "
                "(context length exceeded).",
                "code": "context_length_exceeded",
            },
        )
    if name == "auth":
        return Reply(
            status=401,
            error={
                "message": f"Incorrect API key provided: {req.headers.get('authorization', '')}",
                "code": "invalid_api_key",
            },
        )
    if name == "quota":
        return Reply(
            status=429,
            error={"message": "You exceeded your current quota.", "code": "insufficient_quota"},
        )
    if name == "no_schema_support":
        if "response_format" in req.body:
            return Reply(
                status=400, error={"message": "response_format is not supported by this server"}
            )
        return Reply(content=good_text)
    if name == "no_json_schema":
        rf = req.body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return Reply(
                status=400,
                error={"message": "Invalid response_format: json_schema is not supported"},
            )
        return Reply(content=good_text)
    if name == "reasoning_model":
        if "max_tokens" in req.body:
            return Reply(
                status=400,
                error={
                    "message": "Unsupported parameter: 'max_tokens' is not supported with "
                    "this model. "
                    "Use 'max_completion_tokens' instead.",
                    "code": "unsupported_parameter",
                },
            )
        if "temperature" in req.body:
            return Reply(
                status=400,
                error={
                    "message": "Unsupported value: 'temperature' does not support 0 with "
                    "this model. "
                    "Only the default (1) value is supported.",
                    "code": "unsupported_value",
                },
            )
        return Reply(content=good_text)
    if name == "no_claims":
        if req.stage in ("faithfulness.statements", "context_recall.statements"):
            return Reply(content=_json({"statements": []}))
        if req.stage == "answer_correctness.claims":
            return Reply(
                content=_json(
                    {"reference_claims": [], "answer_claims": [], "matches": [], "reason": "none"}
                )
            )
        if req.stage == "context_entity_recall.entities":
            return Reply(content=_json({"entities": []}))
        return Reply(content=good_text)
    return None


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-request (a judge stopping at a fatal 401 drops its other
    calls) is normal here, and so is the socket error it causes; socketserver would print its
    traceback to ``sys.stderr``, which the in-process CLI tests capture as the command's own
    error output."""

    # a judge opens up to its concurrency of connections at once; socketserver's backlog of 5
    # would drop most of them, which a real endpoint does not
    request_queue_size = 256

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # reset, broken pipe, timeout
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeOpenAI:
    """The server object: start it once, then script, inspect and reset it per test."""

    def __init__(self, *, latency: float = 0.0, model: str = "judge-test-model") -> None:
        self.latency = latency
        self.model = model
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.scripts: dict[str, Script] = {}
        self.counters: Counter[tuple[str, str]] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.completed = 0
        self.admitted = 0
        self.hold_after: int | None = None
        self.release_event = threading.Event()
        self.slow_seconds = 1.0
        self.drip_seconds = 0.05
        self.huge_bytes = 100_000
        self.base_max_tokens = 2048
        self.record = True
        self.httpd: ThreadingHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, port: int = 0) -> FakeOpenAI:
        server = self

        class Handler(_Handler):
            fake = server

        self.httpd = _QuietServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        t = threading.Thread(target=self.httpd.serve_forever, name="fake-openai", daemon=True)
        t.start()
        return self

    def stop(self) -> None:
        self.release_event.set()
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    @property
    def url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.scripts.clear()
            self.counters.clear()
            self.in_flight = self.max_in_flight = self.completed = self.admitted = 0
            self.hold_after = None
            self.release_event = threading.Event()
            self.slow_seconds = 1.0
            self.drip_seconds = 0.05
            self.huge_bytes = 100_000
            self.base_max_tokens = 2048
            self.latency = 0.0

    # -- scripting ---------------------------------------------------------------------------
    def script(self, name: str, fn: Script) -> None:
        self.scripts[name] = fn

    def hold(self, after: int) -> None:
        """Kill switch: serve ``after`` requests, then hold every further one until release."""
        self.hold_after = after

    def release(self) -> None:
        self.release_event.set()

    def count(self, scenario: str, req: Request) -> int:
        """How many times this exact request has been seen under ``scenario`` (1-based)."""
        with self.lock:
            self.counters[(scenario, req.digest)] += 1
            return self.counters[(scenario, req.digest)]

    # -- inspection --------------------------------------------------------------------------
    def stages(self) -> list[str | None]:
        return [r.stage for r in self.requests]

    def respond(self, req: Request) -> Reply:
        name = req.scenario if req.scenario else "*"  # "*" scripts every untagged request
        if name in self.scripts:
            out = self.scripts[name](req)
            if out is not None:
                if isinstance(out, Reply):
                    return out
                return Reply(content=out if isinstance(out, str) else _json(out))
        if req.scenario:
            r = builtin_scenario(req.scenario, req, self)
            if r is not None:
                return r
        good = default_reply(req)
        return Reply(content=good if isinstance(good, str) else _json(good))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeOpenAI

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(
        self,
        status: int,
        obj: Any,
        headers: dict[str, str] | None = None,
        *,
        raw: bytes | None = None,
        content_type: str = "application/json",
        drip: float = 0.0,
    ) -> None:
        data = raw if raw is not None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            if not drip:
                self.wfile.write(data)
                return
            # a slow-drip server: every byte arrives well within any read timeout
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(drip)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(
                200, {"object": "list", "data": [{"id": self.fake.model, "object": "model"}]}
            )
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found"}})
            return
        body = json.loads(raw)
        with fake.lock:
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
            in_flight = fake.in_flight
            fake.admitted += 1
            held = fake.hold_after is not None and fake.admitted > fake.hold_after
        try:
            if held:
                fake.release_event.wait()
                # a released held request is answered with a connection reset
                self.close_connection = True
                return
            messages = body.get("messages", [])
            system = next((m["content"] for m in messages if m["role"] == "system"), "")
            task = TASK.match(system or "")
            texts = " ".join(str(m.get("content") or "") for m in messages)
            tag = TAG.search(texts)
            digest = hashlib.sha256(
                json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
            ).hexdigest()
            req = Request(
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                arrived=time.monotonic(),
                in_flight=in_flight,
                stage=task.group(1) if task else None,
                version=int(task.group(2)) if task else None,
                scenario=tag.group(1) if tag else None,
                repair=any(m["role"] == "assistant" for m in messages),
                digest=digest,
                path=self.path,
                client_port=self.client_address[1],
            )
            if fake.record:
                with fake.lock:
                    fake.requests.append(req)
            reply = fake.respond(req)
            delay = reply.delay or fake.latency
            if delay:
                time.sleep(delay)
            if reply.status != 200:
                self._send(
                    reply.status, {"error": reply.error or {"message": "error"}}, reply.headers
                )
                return
            if reply.raw is not None and reply.drip < 0:  # announce more than is sent
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.raw) * 10))
                self.end_headers()
                self.wfile.write(reply.raw)
                self.wfile.flush()
                self.close_connection = True
                return
            if reply.raw is not None:
                self._send(200, None, reply.headers, raw=reply.raw, content_type=reply.content_type)
                with fake.lock:
                    fake.completed += 1
                return
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.refusal is not None:
                message["refusal"] = reply.refusal
            choice: dict[str, Any] = {
                "index": 0,
                "message": message,
                "finish_reason": reply.finish_reason,
                "logprobs": {"content": reply.logprobs} if reply.logprobs else None,
            }
            out: dict[str, Any] = {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", fake.model),
                "choices": [choice],
            }
            if reply.usage is not None:
                usage: dict[str, Any] = {
                    "prompt_tokens": reply.usage[0],
                    "completion_tokens": reply.usage[1],
                    "total_tokens": reply.usage[0] + reply.usage[1],
                }
                if reply.cached_tokens is not None:
                    usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
                out["usage"] = usage
            self._send(200, out, reply.headers, drip=reply.drip)
            with fake.lock:
                fake.completed += 1
        finally:
            with fake.lock:
                fake.in_flight -= 1


def main() -> None:  # pragma: no cover - used by the benchmark
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    fake = FakeOpenAI(latency=args.latency)
    fake.record = False
    fake.start(args.port)
    print(fake.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
