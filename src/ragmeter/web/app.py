"""The dashboard's ASGI app: Starlette routes over :mod:`ragmeter.web.pages`, read-only.

Plain URLs, JSON for every page (``.json`` suffix or ``Accept: application/json``), static
assets served from the package, no write route. Responses carry a Content-Security-Policy that
allows scripts and styles from this server only, and requests whose ``Host`` is not one the
server answers to are refused (a page on another site cannot read the dashboard through DNS
rebinding).

Work is bounded per request (validated, length-limited parameters; paged queries) and across
requests: at most ``max_busy`` pages are built at once, each on its own store connection, and a
request that finds them all busy for ``busy_wait_s`` gets a quick 503 with ``Retry-After``
instead of queueing until the connection pool times out.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ragmeter.errors import UsageError
from ragmeter.io.jsonutil import to_jsonable
from ragmeter.report.render import STATIC_DIR, environment, url_id
from ragmeter.status import STATUSES
from ragmeter.store import Store, read
from ragmeter.store.read import NotFound
from ragmeter.web import pages

__all__ = ["create_app"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_BUSY = 8
BUSY_WAIT_S = 1.0


def link_run(run_id: str) -> str:
    return f"/runs/{url_id(run_id)}"


def link_sample(run_id: str, sample_id: str) -> str:
    return f"/runs/{url_id(run_id)}/samples/{url_id(sample_id)}"


class _Guard:
    """Adds the security headers to every response and refuses unknown ``Host`` headers."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str] | None) -> None:
        self.app = app
        self.hosts = None if hosts is None else {h.lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        if self.hosts is not None:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            name = name.strip("[]")
            if name not in self.hosts:
                response = PlainTextResponse("unknown Host header", status_code=400)
                await response(scope, receive, self._send(send, start))
                return
        await self.app(scope, receive, self._send(send, start))

    @staticmethod
    def _send(send: Send, start: float) -> Send:
        async def wrapped(message: Mapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                headers.extend((k, v) for k, v in SECURITY_HEADERS if k not in have)
                # the time spent answering, for the benchmark and the browser's devtools
                took = (time.perf_counter() - start) * 1000
                headers.append((b"server-timing", f"app;dur={took:.1f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        return wrapped


def _wants_json(request: Request, suffix: bool) -> bool:
    if suffix:
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def create_app(
    store: Store | str | None = None,
    *,
    allowed_hosts: Iterable[str] | None = LOOPBACK,
    judge_cache: str | os.PathLike[str] | None = None,
    max_busy: int = MAX_BUSY,
    busy_wait_s: float = BUSY_WAIT_S,
) -> Starlette:
    """The dashboard over ``store`` (a :class:`Store` or URL, opened read-only). ``allowed_hosts``:
    host names the ``Host`` header may carry (``None``: any, for a server bound to a public
    address). ``judge_cache``: the judge's cache file, read-only, whose prompts and replies the
    sample page shows (``None``: not shown; a path that does not exist: the page says so).
    ``max_busy``: pages built at once; a request waits at most ``busy_wait_s`` for a turn, then
    gets a 503."""
    from ragmeter.judge.cache_open import open_reader
    from ragmeter.store.errors import describe, is_database_error

    if max_busy < 1:
        raise UsageError(f"max_busy must be at least 1 (got {max_busy})")
    handle = store if isinstance(store, Store) else Store(store, readonly=True, pool_size=max_busy)
    busy: dict[str, asyncio.Semaphore] = {}
    reader = None if judge_cache is None else open_reader(judge_cache)
    env = environment(link_run=link_run, link_sample=link_sample)
    cache = pages.ReportCache()

    def render(request: Request, template: str, data: dict[str, Any], json: bool) -> Response:
        if json:
            return JSONResponse(to_jsonable(data))
        current = list(request.query_params.multi_items())

        def query_with(**changes: Any) -> str:
            kept = [(k, v) for k, v in current if k not in changes]
            return urlencode([*kept, *((k, str(v)) for k, v in changes.items())])

        html = env.get_template(template).render(
            view=data,
            charts=data.get("charts", {}),
            inline=False,
            query_with=query_with,
            statuses=STATUSES,
        )
        return HTMLResponse(html)

    def error(request: Request, status: int, message: str, json: bool) -> Response:
        if json:
            return JSONResponse({"error": message, "status": status}, status_code=status)
        html = env.get_template("error.html").render(
            view={"status": status, "message": message}, charts={}, inline=False
        )
        return HTMLResponse(html, status_code=status)

    def bounded(
        endpoint: Callable[[Request], Response], *, suffix: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        """Validate the query string, wait at most ``busy_wait_s`` for a turn (else 503) and
        build the page in a worker thread; errors become pages. The wait happens on the event
        loop, so a saturated server answers 503s without tying up its worker threads."""

        async def run(request: Request) -> Response:
            json = _wants_json(request, suffix or request.url.path.endswith(".json"))
            try:
                pages.check_params(request.query_params.multi_items())
            except UsageError as exc:
                return error(request, 400, str(exc), json)
            turns = busy.get("turns")
            if turns is None:  # created on the server's event loop
                turns = busy["turns"] = asyncio.Semaphore(max_busy)
            try:
                await asyncio.wait_for(turns.acquire(), busy_wait_s)
            except (asyncio.TimeoutError, TimeoutError):
                response = error(
                    request,
                    503,
                    f"the dashboard is busy ({max_busy} pages in progress); try again in a moment",
                    json,
                )
                response.headers["retry-after"] = "1"
                return response
            try:
                return await run_in_threadpool(endpoint, request)
            except NotFound as exc:
                return error(request, 404, str(exc), json)
            except UsageError as exc:
                return error(request, 400, str(exc), json)
            except Exception as exc:
                if not is_database_error(exc):
                    raise
                return error(request, 503, describe(exc, handle.url, writing=False), json)
            finally:
                turns.release()

        return run

    def page(
        template: str, build: Callable[[Request], dict[str, Any]], *, suffix: bool = False
    ) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            return render(request, template, build(request), _wants_json(request, suffix))

        return bounded(endpoint, suffix=suffix)

    def runs_dispatch(request: Request) -> Response:
        parts, suffix = _split(request)
        json = _wants_json(request, suffix)
        params = dict(request.query_params)
        try:
            if len(parts) == 1:
                data = pages.run_page(handle, parts[0], params, cache=cache)
                return render(request, "run.html", data, json)
            if len(parts) == 3 and parts[1] == "samples":
                data = pages.sample_page(handle, parts[0], parts[2], judge_cache=reader)
                return render(request, "sample.html", data, json)
            if not parts:
                return RedirectResponse("/", status_code=307)
            raise NotFound(f"no page at {request.url.path}")
        except NotFound as exc:
            return error(request, 404, str(exc), json)
        except UsageError as exc:
            return error(request, 400, str(exc), json)

    def _split(request: Request) -> tuple[list[str], bool]:
        """Path segments after ``/runs/`` (each percent-decoded on its own, so ids may hold
        ``/``) and whether the page was asked for as ``.json``. A trailing ``.json`` is taken
        as the suffix unless the id without it does not exist and the id with it does."""
        raw = request.scope.get("raw_path")
        path = raw.decode("latin-1") if raw else request.url.path
        rest = path.split("?", 1)[0][len("/runs") :].strip("/")
        parts = [unquote(p) for p in rest.split("/")] if rest else []
        if parts and parts[-1].endswith(".json"):
            bare = [*parts[:-1], parts[-1][: -len(".json")]]
            if _exists(bare) or not _exists(parts):
                return bare, True
        return parts, False

    def _exists(parts: list[str]) -> bool:
        with handle.connect() as conn:
            if len(parts) == 1:
                return read.run_exists(conn, parts[0])
            if len(parts) == 3:
                return read.sample_exists(conn, parts[0], parts[2])
        return False

    def runs(request: Request) -> dict[str, Any]:
        return pages.runs_page(handle, dict(request.query_params))

    def compare(request: Request) -> dict[str, Any]:
        return pages.compare_page(handle, _multi(request))

    def trends(request: Request) -> dict[str, Any]:
        return pages.trends_page(handle, dict(request.query_params))

    routes = [
        Route("/", page("runs.html", runs)),
        Route("/index.json", page("runs.html", runs, suffix=True)),
        Route("/.json", page("runs.html", runs, suffix=True)),
        Route("/compare", page("compare.html", compare)),
        Route("/compare.json", page("compare.html", compare, suffix=True)),
        Route("/trends", page("trends.html", trends)),
        Route("/trends.json", page("trends.html", trends, suffix=True)),
        Route("/runs", bounded(runs_dispatch)),
        Route("/runs/{rest:path}", bounded(runs_dispatch)),
        Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"),
    ]

    def not_found(request: Request, exc: Exception) -> Response:
        json = _wants_json(request, request.url.path.endswith(".json"))
        return error(request, 404, f"no page at {request.url.path}", json)

    app = Starlette(routes=routes, exception_handlers={404: not_found})
    app.state.store = handle
    app.state.report_cache = cache
    app.state.judge_cache = reader
    app.add_middleware(_Guard, hosts=allowed_hosts)
    return app


def _multi(request: Request) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.query_params)
    params["run"] = request.query_params.getlist("run")
    return params
