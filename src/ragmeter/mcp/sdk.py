"""The one place that knows which major of the official ``mcp`` SDK is installed.

mcp 2.x calls the high-level server ``MCPServer`` (``mcp.server.mcpserver``) and takes HTTP
settings as arguments of ``streamable_http_app``; mcp 1.x calls it ``FastMCP``
(``mcp.server.fastmcp``) and takes them in the constructor. Everything else in
``ragmeter.mcp`` goes through the functions here, so both majors behave alike.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Annotated, Any

__all__ = [
    "MAJOR",
    "RESULT",
    "Context",
    "ToolError",
    "add_tool",
    "http_app",
    "loopback_security",
    "new_server",
    "result",
    "run_stdio",
]

try:  # mcp 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as _Server
    from mcp.server.mcpserver.exceptions import ToolError

    MAJOR = 2
except ModuleNotFoundError:  # mcp 1.x (1.24 is the floor UltraRAG's fastmcp allows)
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as _Server
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

    MAJOR = 1

from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations

if MAJOR >= 2:
    #: The return annotation of every tool: the output schema clients see is that of
    #: ``dict[str, Any]`` (an object) on both majors.
    RESULT: Any = dict[str, Any]

    def result(value: dict[str, Any]) -> Any:
        """What a tool returns to the SDK: 2.x takes the structured value as it is."""
        return value

else:
    import pydantic_core
    from mcp.types import CallToolResult, TextContent

    # 1.x's low-level server checks a plain structured result against the output schema with
    # jsonschema.validate, which first checks the schema itself against the metaschema on every
    # call (1-2 ms a call here, 5-13 ms on a loaded machine); a CallToolResult is checked by
    # FastMCP's pydantic model of the same schema instead, and passed on as it is
    RESULT = Annotated[CallToolResult, dict[str, Any]]

    def result(value: dict[str, Any]) -> Any:
        """What a tool returns to the SDK: 1.x's own text rendering and the structured value."""
        text = pydantic_core.to_json(value, fallback=str, indent=2).decode()
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structuredContent=value
        )


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_security(host: str) -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding, passed explicitly (not left to defaults).

    For a loopback host only loopback ``Host`` headers and origins are accepted; for any other
    host (``--allow-remote``) that host is added to the loopback ones.
    """
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if host not in LOOPBACK:
        shown = f"[{host}]" if ":" in host else host
        hosts.append(f"{shown}:*")
        origins.append(f"http://{shown}:*")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


@contextlib.contextmanager
def _own_logging() -> Iterator[None]:
    """The server's constructor without the SDK's logging setup.

    Both majors' constructors call ``configure_logging``, which imports rich to build a handler
    for ``logging.basicConfig``; ``ragmeter mcp`` has configured the root logger already, so
    basicConfig drops that handler, and the import alone is ~30-45 ms of every start. In a
    library user's process the root logger stays theirs to configure.
    """
    module = sys.modules[_Server.__module__]
    original = getattr(module, "configure_logging", None)
    if original is None:  # an SDK release that no longer configures logging here
        yield
        return
    module.configure_logging = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        module.configure_logging = original  # type: ignore[attr-defined]


def new_server(name: str, instructions: str, version: str, http: dict[str, Any] | None) -> Any:
    """A server object; ``http`` holds the HTTP settings 1.x wants in its constructor."""
    if MAJOR >= 2:
        with _own_logging():
            return _Server(name=name, instructions=instructions, version=version)
    kwargs: dict[str, Any] = {"instructions": instructions}
    if http is not None:
        kwargs.update(
            host=http["host"],
            port=http["port"],
            streamable_http_path=http["path"],
            json_response=http["json_response"],
            stateless_http=http["stateless"],
            transport_security=loopback_security(http["host"]),
        )
    import warnings

    with warnings.catch_warnings(), _own_logging():
        # 1.x's settings model warns about its own 'lifespan' annotation on every start; the
        # first stderr line must be ragmeter's "serving" line, and the warning is not the user's
        warnings.simplefilter("ignore")
        server = _Server(name, **kwargs)
    if version:  # 1.x has no version argument; clients see it in serverInfo
        server._mcp_server.version = version
    return server


def add_tool(
    server: Any,
    fn: Callable[..., Any],
    *,
    name: str,
    description: str,
    read_only: bool,
    open_world: bool,
    idempotent: bool,
) -> None:
    """Register ``fn`` with structured output and the annotation hints."""
    annotations = ToolAnnotations(
        readOnlyHint=read_only, openWorldHint=open_world, idempotentHint=idempotent
    )
    server.add_tool(
        fn, name=name, description=description, annotations=annotations, structured_output=True
    )


async def run_stdio(server: Any) -> None:
    await server.run_stdio_async()


def http_app(server: Any, http: dict[str, Any]) -> Any:
    """The Starlette app of streamable HTTP; ragmeter serves it with uvicorn itself."""
    if MAJOR >= 2:
        return server.streamable_http_app(
            streamable_http_path=http["path"],
            json_response=http["json_response"],
            stateless_http=http["stateless"],
            transport_security=loopback_security(http["host"]),
            host=http["host"],
        )
    return server.streamable_http_app()
