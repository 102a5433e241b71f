"""``ragmeter mcp`` and ``ragmeter mcp ultrarag-init`` (docs/mcp.md).

The mcp SDK is imported only when a server starts, so ``ragmeter --help`` stays light.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragmeter.errors import UsageError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LEVELS = ("debug", "info", "warning", "error", "critical")
MISSING_SDK = "the MCP server needs the mcp package (pip install 'ragmeter[mcp]')"


def register(app: typer.Typer) -> None:
    mcp_app = typer.Typer(
        help="Serve ragmeter's evaluators as MCP tools (UltraRAG-compatible).",
        invoke_without_command=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(mcp_app, name="mcp")

    @mcp_app.callback()
    def mcp(
        ctx: typer.Context,
        transport: Annotated[
            str, typer.Option("--transport", help="stdio (default) or http (streamable HTTP).")
        ] = "stdio",
        host: Annotated[str, typer.Option("--host", help="HTTP address.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="HTTP port (0: any free port).")] = 8151,
        path: Annotated[str, typer.Option("--path", help="HTTP endpoint path.")] = "/mcp",
        stateless: Annotated[bool, typer.Option("--stateless", help="No HTTP sessions.")] = False,
        json_response: Annotated[
            bool, typer.Option("--json-response", help="Plain JSON instead of SSE responses.")
        ] = False,
        allow_remote: Annotated[
            bool, typer.Option("--allow-remote", help="Allow a --host other than loopback.")
        ] = False,
        root: Annotated[
            list[Path] | None,
            typer.Option("--root", help="Directory tools may read and write (repeat; default .)."),
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option("--config", help="ragmeter.yaml whose store: (and judge:) apply."),
        ] = None,
        store: Annotated[str | None, typer.Option("--store", help="Results store URL.")] = None,
        tools: Annotated[
            str, typer.Option("--tools", help="all, ultrarag, or NAME,NAME,...")
        ] = "all",
        ultrarag: Annotated[
            bool, typer.Option("--ultrarag", help="UltraRAG mode: build tool, wrapped outputs.")
        ] = False,
        read_only: Annotated[
            bool, typer.Option("--read-only", help="Refuse every argument that writes.")
        ] = False,
        judge_max_cost: Annotated[
            float | None, typer.Option("--judge-max-cost", help="USD one call may spend.")
        ] = None,
        max_concurrent: Annotated[
            int, typer.Option("--max-concurrent", min=1, help="Tool calls computing at once.")
        ] = 2,
        log_level: Annotated[str, typer.Option("--log-level", help="Log level.")] = "warning",
    ) -> int:
        """Serve ragmeter's evaluators as MCP tools over stdio (default) or streamable HTTP."""
        if ctx.invoked_subcommand is not None:
            return 0
        if log_level.lower() not in LEVELS:
            raise UsageError(
                f"--log-level {log_level!r} (expected {', '.join(LEVELS)})", command="mcp"
            )
        if transport not in ("stdio", "http"):
            raise UsageError(f"--transport {transport!r} (expected stdio or http)", command="mcp")
        if transport == "http" and host not in LOOPBACK and not allow_remote:
            raise UsageError(
                f"--host {host} is not a loopback address; add --allow-remote to serve other "
                "machines",
                command="mcp",
            )
        try:
            import mcp as _sdk  # noqa: F401
        except ModuleNotFoundError:
            raise UsageError(MISSING_SDK, command="mcp") from None
        import sys

        from ragmeter.mcp import server as srv
        from ragmeter.mcp import transport as tr
        from ragmeter.mcp.paths import Roots
        from ragmeter.mcp.settings import Settings

        settings = Settings(
            roots=Roots([str(r) for r in root] if root else ["."]),
            ultrarag=ultrarag,
            read_only=read_only,
            config=config,
            store=store,
        )
        if config is not None:
            settings.config_data()  # a bad config is a usage error now, not on the first call
        cap = settings.config_data().get("tasks", {}) or {}
        default_cap = ((cap.get("judge") or {}) if isinstance(cap, dict) else {}).get(
            "max_cost_usd", 0.0
        )
        settings.judge_max_cost = float(
            judge_max_cost if judge_max_cost is not None else default_cap or 0.0
        )
        srv.configure_logging(log_level)
        if allow_remote and host not in LOOPBACK:
            print(
                "ragmeter mcp: warning: serving a non-loopback address; anyone who can reach "
                "the port can read files under the roots and spend the judge budget",
                file=sys.stderr,
            )
        http = None
        if transport == "http":
            http = {
                "host": host,
                "port": port,
                "path": path,
                "json_response": json_response,
                "stateless": stateless,
            }
        server = srv.build_server(settings, tools=tools, http=http, max_concurrent=max_concurrent)
        try:
            if http is None:
                tr.serve_stdio(server)
            else:
                tr.serve_http(server, http, log_level)
        except KeyboardInterrupt:
            return 130
        return 0

    @mcp_app.command("ultrarag-init")
    def ultrarag_init(
        directory: Annotated[Path, typer.Argument(help="The server folder to create.")],
        name: Annotated[
            str,
            typer.Option("--name", help="Server key of the README's pipeline example."),
        ] = "evaluation",
        force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    ) -> None:
        """Scaffold an UltraRAG server folder: parameter.yaml, src/<folder>.py, README.md."""
        from ragmeter.mcp.ultrarag import init_folder

        for written in init_folder(str(directory), name=name, force=force):
            typer.echo(f"wrote {written}")
