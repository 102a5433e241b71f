"""Serving: stdio, or streamable HTTP served by uvicorn on a socket ragmeter binds itself.

The first stderr line says where the server listens (``ragmeter mcp: serving stdio`` or
``ragmeter mcp: serving http://127.0.0.1:PORT/mcp``); with ``--port 0`` it carries the port the
system picked. SIGTERM ends the process with status 0 (writes are atomic, so nothing is left
half-written); Ctrl-C with 130.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import Any

import anyio

from ragmeter.errors import UsageError
from ragmeter.mcp import sdk

__all__ = ["serve_http", "serve_stdio"]


def _exit_on_sigterm() -> None:
    def handler(signum: int, frame: Any) -> None:
        sys.stderr.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, handler)


def serve_stdio(server: Any) -> None:
    """Speak the protocol on stdin/stdout until the client closes stdin."""
    _exit_on_sigterm()
    print("ragmeter mcp: serving stdio", file=sys.stderr, flush=True)
    anyio.run(sdk.run_stdio, server)


def serve_http(server: Any, http: dict[str, Any], log_level: str) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/PATH`` until SIGTERM or Ctrl-C."""
    import uvicorn

    host, port = http["host"], http["port"]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}; try another --port)",
            command="mcp",
        ) from None
    sock.listen(128)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = sdk.http_app(server, http)
    config = uvicorn.Config(app, log_level=log_level.lower(), lifespan="on", access_log=False)
    _exit_on_sigterm()  # uvicorn re-raises the signal after its graceful shutdown
    print(f"ragmeter mcp: serving http://{shown}:{port}{http['path']}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])
