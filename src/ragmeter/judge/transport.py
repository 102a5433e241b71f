"""The judge's HTTP transport: Chat Completions POSTs over aiohttp (docs/judge.md, "The HTTP
client").

The ``openai`` SDK still decides what is sent: the URL under ``base_url``, and its headers
(``Authorization``, ``OpenAI-Organization`` and ``OpenAI-Project`` from the environment, its
``User-Agent``). The request itself goes through one aiohttp session per event loop, with
keep-alive connections and the TLS context the SDK's HTTP library builds by default. Through
the SDK's request path (its request builder, its HTTP library's connection pool and the async
layer under it) the client took about 1.9 ms of CPU per call, profiled on a Dask worker; here
about 0.2 ms. At hundreds of calls a second that, not the endpoint, bounded a process
(docs/scaleout.md, "The judge across workers").

Errors come back as the runtime's classes, and an HTTP error's message and code are read from
its body by the SDK's own rules (:func:`status_error`), so the runtime sees what it saw through
the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from ragmeter.judge.call_errors import ReplyTooLarge, TransientError

__all__ = ["Transport", "status_error"]

CHUNK = 65536


class Transport:
    """POSTs to ``{base_url}/chat/completions``; one aiohttp session per running event loop."""

    def __init__(self, *, base_url: str, api_key: str, timeout_s: float) -> None:
        import openai

        http = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__)
        # the CA bundle and the SSL_CERT_* variables as the SDK's HTTP library reads them
        self.tls = http.create_ssl_context()
        sdk = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout_s,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=self.tls),
        )
        # the path goes after the base URL's path, before its query (Azure's api-version),
        # which SDK releases put after the query or cut
        parts = urllib.parse.urlsplit(base_url)
        self.url = urllib.parse.urlunsplit(
            parts._replace(path=parts.path.rstrip("/") + "/chat/completions")
        )
        # SDK releases differ on whether the default headers carry the key already
        headers = {**sdk.default_headers, **sdk.auth_headers}
        self.headers = {k: v for k, v in headers.items() if isinstance(v, str)}
        import aiohttp

        self.proxy, user = env_proxy(self.url)
        self.proxy_auth = None if user is None else aiohttp.BasicAuth(*user)
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # a session's connections belong to the loop that opened them
            self._drop()
            # the proxy was read once, as the SDK's client reads it: aiohttp's trust_env reads
            # the environment and ~/.netrc again on every request (0.5 ms of CPU a call)
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self.tls, limit=0)
            )
            self._loop = loop
        return self._session

    async def post(
        self, body: Mapping[str, Any], timeout_s: float, limit: int | None
    ) -> tuple[int, dict[str, str], bytes]:
        """The reply's status, headers and body, at most ``limit`` bytes of a 2xx body.

        Raises :class:`~ragmeter.judge.call_errors.TransientError` for timeouts and connection
        errors, and :class:`~ragmeter.judge.call_errors.ReplyTooLarge`."""
        import aiohttp

        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        # httpx's read timeout: the longest wait for the next bytes, not a total
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s)
        with _transient("connection error"):
            response = await self._current().post(
                self.url,
                data=data.encode(),
                headers=self.headers,
                timeout=timeout,
                proxy=self.proxy,
                proxy_auth=self.proxy_auth,
            )
        async with response:
            headers = dict(response.headers)
            with _transient("connection lost while reading the reply"):
                content = await _read(response, limit if response.status < 400 else None)
        return response.status, headers, content

    async def aclose(self) -> None:
        if self._session is not None and self._loop is asyncio.get_running_loop():
            session = self._session
            self._session = self._loop = None
            await session.close()
        else:
            self._drop()

    def _drop(self) -> None:
        """Forget a session of another (usually finished) loop without awaiting it: its
        connections are closed now if that loop still runs, else when collected, and aiohttp
        never warns of an unclosed session or connector."""
        session, self._session, self._loop = self._session, None, None
        if session is None:
            return
        connector = session.connector
        session.detach()
        if connector is not None:
            with contextlib.suppress(Exception):
                connector._close()


@contextlib.contextmanager
def _transient(connection_label: str) -> Iterator[None]:
    """aiohttp's timeouts and connection errors as the runtime's transient errors."""
    import aiohttp

    try:
        yield
    except (asyncio.TimeoutError, TimeoutError):
        raise TransientError("timeout", None, "read timeout") from None
    except aiohttp.ClientError:
        raise TransientError("connection", None, connection_label) from None


def env_proxy(url: str) -> tuple[str | None, tuple[str, str] | None]:
    """The proxy for ``url`` from ``HTTPS_PROXY``, ``HTTP_PROXY`` or ``ALL_PROXY`` unless
    ``NO_PROXY`` exempts its host, with the credentials in the proxy's URL apart.

    >>> import os
    >>> os.environ["HTTPS_PROXY"] = "http://me:pw@proxy.local:3128"
    >>> env_proxy("https://api.example.com/v1/chat/completions")
    ('http://proxy.local:3128', ('me', 'pw'))
    >>> os.environ["NO_PROXY"] = "example.com"
    >>> env_proxy("https://api.example.com/v1/chat/completions")
    (None, None)
    >>> del os.environ["HTTPS_PROXY"], os.environ["NO_PROXY"]
    """
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):
        return None, None
    p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    user = None
    if p.username is not None:
        user = (urllib.parse.unquote(p.username), urllib.parse.unquote(p.password or ""))
    netloc = p.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if p.port is not None:
        netloc += f":{p.port}"
    return urllib.parse.urlunsplit(p._replace(netloc=netloc)), user


async def _read(response: Any, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(CHUNK):
        size += len(chunk)
        if limit is not None and size > limit:
            # leaving unread closes the connection: the rest of the body is never read
            raise ReplyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def status_error(status: int, content: bytes) -> tuple[str, str | None]:
    """The message and code of an HTTP error reply: the error object's ``message`` and its
    ``code`` or ``type``, as the ``openai`` SDK reads them; without a message, the body itself
    as the SDK's 1.x releases show it (its 2.x and later releases show only the status, which
    hides what servers such as FastAPI's put in ``detail``, and what the negotiation of
    parameters reads).

    >>> status_error(400, b'{"error": {"message": "bad max_tokens", "type": "invalid"}}')
    ('bad max_tokens', 'invalid')
    >>> status_error(422, b'{"detail": "max_tokens is not supported"}')
    ("Error code: 422 - {'detail': 'max_tokens is not supported'}", None)
    >>> status_error(502, b"  <html>Bad Gateway</html>")
    ('<html>Bad Gateway</html>', None)
    """
    text = content.decode("utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text or f"Error code: {status}", None
    message = f"Error code: {status} - {body}"
    # the SDK keeps the body's error object, then the client looked inside that again
    data = body.get("error", body) if isinstance(body, Mapping) else body
    if not isinstance(data, Mapping):
        return message, None
    err = data.get("error", data)
    if isinstance(err, Mapping):
        found = err.get("code") or err.get("type")
        return str(err["message"]) if err.get("message") else message, (
            str(found) if found else None
        )
    found = data.get("code")
    return err if isinstance(err, str) else message, None if found is None else str(found)
