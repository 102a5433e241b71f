"""One client API over mcp 1.x and 2.x, for the tests of ``ragmeter mcp``.

``open_session(target)`` takes a server object (in-process), ``StdioServerParameters``
(a subprocess) or a URL (streamable HTTP), and yields a :class:`Session` whose ``call_tool``
returns ``(structured, text, is_error)``. mcp 2.x calls the attributes ``structured_content``
and ``is_error``; 1.x ``structuredContent`` and ``isError``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from ragmeter.mcp.sdk import MAJOR


def _strict(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


@dataclass
class ToolInfo:
    name: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]


class Session:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def list_tools(self) -> list[ToolInfo]:
        res = await self.client.list_tools()
        out = []
        for t in res.tools:
            if MAJOR >= 2:
                schema, output = t.input_schema, t.output_schema
            else:
                schema, output = t.inputSchema, t.outputSchema
            ann = (
                t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else {}
            )
            out.append(ToolInfo(t.name, schema, output, ann))
        return out

    async def call_tool(
        self,
        name: str,
        args: dict[str, Any],
        progress: Callable[[float, float | None, str | None], Any] | None = None,
    ) -> tuple[Any, str, bool]:
        res = await self.client.call_tool(name, args, progress_callback=progress)
        if MAJOR >= 2:
            structured, is_error = res.structured_content, res.is_error
        else:
            structured, is_error = res.structuredContent, res.isError
        text = res.content[0].text if res.content else ""
        return structured, text, bool(is_error)

    async def call_cancelled(self, name: str, args: dict[str, Any]) -> None:
        """Start a call, and cancel it over the protocol (``notifications/cancelled``) as soon
        as its first progress notification shows the server working on it."""
        import anyio

        started = anyio.Event()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as tg:
            if MAJOR >= 2:
                # abandoning the request makes the 2.x client send notifications/cancelled
                scope = anyio.CancelScope()

                async def call() -> None:
                    with scope:
                        await self.client.call_tool(name, args, progress_callback=on_progress)

                tg.start_soon(call)
                await started.wait()
                scope.cancel()
                return
            from mcp import types

            errors: list[BaseException] = []

            async def call_1x() -> None:
                try:
                    await self.client.call_tool(name, args, progress_callback=on_progress)
                except Exception as exc:  # the server answers a cancelled request with an error
                    errors.append(exc)

            tg.start_soon(call_1x)
            await started.wait()
            # 1.x clients do not send it themselves: the id of the call in flight is the last one
            rid = self.client._request_id - 1
            await self.client.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=rid, reason="test")
                    )
                )
            )

    async def call_ok(self, name: str, args: dict[str, Any]) -> Any:
        """A call that must succeed; its structured value must equal the strict-JSON text."""
        structured, text, is_error = await self.call_tool(name, args)
        assert not is_error, text
        assert structured == _strict(text)
        return structured


@asynccontextmanager
async def open_session(target: Any, *, mode: str = "auto") -> AsyncIterator[Session]:
    """A connected session to ``target`` (server object, StdioServerParameters or URL)."""
    async with AsyncExitStack() as stack:
        if MAJOR >= 2:
            from mcp import Client

            kwargs = {"mode": mode} if not isinstance(target, str) and _in_process(target) else {}
            client = await stack.enter_async_context(Client(target, **kwargs))
            yield Session(client)
            return
        from mcp import ClientSession, StdioServerParameters

        if isinstance(target, StdioServerParameters):
            from mcp.client.stdio import stdio_client

            read, write = await stack.enter_async_context(stdio_client(target))
        elif isinstance(target, str):
            from mcp.client import streamable_http as sh

            connect = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client
            read, write, *_ = await stack.enter_async_context(connect(target))
        else:
            from mcp.shared.memory import create_connected_server_and_client_session

            session = await stack.enter_async_context(
                create_connected_server_and_client_session(target._mcp_server)
            )
            yield Session(session)
            return
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield Session(session)


def _in_process(target: Any) -> bool:
    from mcp import StdioServerParameters

    return not isinstance(target, StdioServerParameters)


def in_process_modes() -> list[str]:
    """2.x: the framed handshake (``legacy``, UltraRAG's path) and direct dispatch; 1.x: one."""
    return ["legacy", "auto"] if MAJOR >= 2 else ["memory"]
