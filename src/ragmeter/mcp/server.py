"""The MCP server: tools registered on the SDK, one worker thread per call, errors mapped.

Each tool is a plain method of :class:`~ragmeter.mcp.compat.CompatTools`,
:class:`~ragmeter.mcp.tools.OwnTools` or :class:`~ragmeter.mcp.ultrarag.BuildTool`. Here it
gets an async wrapper with the same signature (so the SDK derives the same input schema) that
runs it in a worker thread behind a server-wide limiter, turns ragmeter's one-line errors into
tool errors, hides unexpected exceptions behind one line (traceback to the log), and refuses
NaN at the boundary.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from ragmeter._version import __version__
from ragmeter.errors import RagmeterError, UsageError
from ragmeter.mcp import progress, sdk
from ragmeter.mcp.catalogue import Spec, select
from ragmeter.mcp.settings import Settings

__all__ = ["build_server", "error_text"]

log = logging.getLogger("ragmeter.mcp")

INSTRUCTIONS = (
    "ragmeter evaluates retrieval runs, generated answers, grounded QA and agent steps with "
    "exact reference semantics (trec_eval 10.0, UltraRAG, graphrag-eval), compares stored runs "
    "with significance tests and applies release gates. File paths are relative to the "
    "server's first root."
)


def error_text(exc: RagmeterError, spec: Spec) -> str:
    """The CLI's one-line message; a usage error without a command gets the tool's command."""
    if isinstance(exc, UsageError) and exc.command is None:
        return f"ragmeter {spec.command}: {exc.message}"
    return str(exc)


def _description(fn: Callable[..., Any]) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


def _wrap(
    fn: Callable[..., Any], spec: Spec, settings: Settings, limiter: anyio.CapacityLimiter
) -> Callable[..., Any]:
    """An async tool with ``fn``'s parameters (plus the SDK's context) that runs ``fn`` in a
    worker thread and returns a JSON-safe dict."""
    from ragmeter.io.jsonutil import to_jsonable

    sig = inspect.signature(fn, eval_str=True)
    wrap_key = spec.wrap if settings.ultrarag else None

    async def tool(**kwargs: Any) -> Any:
        ctx = kwargs.pop("ctx", None)
        state = progress.CallState(_sink(ctx))

        def call() -> dict[str, Any]:
            token = progress.bind(state)
            try:
                return to_jsonable(fn(**kwargs))
            finally:
                progress.unbind(token)

        try:
            result = await anyio.to_thread.run_sync(call, limiter=limiter, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            state.cancelled.set()  # the engine stops at its next check; nothing more is written
            raise
        except RagmeterError as exc:
            raise sdk.ToolError(error_text(exc, spec)) from None
        except sdk.ToolError:
            raise
        except Exception:
            log.exception("tool %s failed", spec.name)
            raise sdk.ToolError(
                f"internal error in ragmeter {__version__} (details in the server log)"
            ) from None
        return sdk.result({wrap_key: result} if wrap_key else result)

    params = [*sig.parameters.values()]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=sdk.Context))
    functools.update_wrapper(tool, fn, assigned=("__module__", "__name__", "__qualname__"))
    tool.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation=sdk.RESULT
    )
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": sdk.RESULT}
    return tool


def _sink(ctx: Any) -> Callable[[float, float, str], None] | None:
    """Progress from the worker thread to the client, when the request carries a token."""
    if ctx is None:
        return None

    def send(done: float, total: float, message: str) -> None:
        try:
            anyio.from_thread.run(ctx.report_progress, done, total, message)
        except Exception:  # a client that went away must not fail the computation
            log.debug("progress notification failed", exc_info=True)

    return send


def build_server(
    settings: Settings,
    *,
    tools: str = "all",
    http: dict[str, Any] | None = None,
    max_concurrent: int = 2,
) -> Any:
    """A server object of the installed SDK with the chosen tools registered."""
    from ragmeter.mcp.answers_tool import AnswersTool
    from ragmeter.mcp.compat import CompatTools
    from ragmeter.mcp.judge_tool import JudgeTool
    from ragmeter.mcp.tools import OwnTools
    from ragmeter.mcp.ultrarag import BuildTool

    specs = select(tools, ultrarag=settings.ultrarag)
    server = sdk.new_server("ragmeter", INSTRUCTIONS, __version__, http)
    limiter = anyio.CapacityLimiter(max(1, max_concurrent))
    providers = [
        CompatTools(settings),
        OwnTools(settings),
        AnswersTool(settings),
        JudgeTool(settings),
        BuildTool(settings, specs),
    ]
    for spec in specs:
        fn = next(getattr(p, spec.name) for p in providers if hasattr(p, spec.name))
        sdk.add_tool(
            server,
            _wrap(fn, spec, settings, limiter),
            name=spec.name,
            description=_description(fn),
            read_only=spec.read_only,
            open_world=spec.open_world,
            idempotent=spec.idempotent,
        )
    return server


def configure_logging(level: str) -> None:
    """ragmeter's and the SDK's log records go to stderr (stdout carries only the protocol)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ragmeter mcp: %(levelname)s: %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
