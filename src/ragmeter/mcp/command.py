"""``ragmeter mcp`` and ``ragmeter mcp ultrarag-init``, parsed without typer (docs/mcp.md).

The command line's entry hands ``ragmeter mcp`` to :func:`main` before typer and rich are
imported: an MCP client starts the server for every session and waits for it, and the SDK's
own import already takes most of the start-up budget (docs/mcp.md, "Performance"). The options
are parsed with :mod:`argparse`; a bad one is the usual one-line usage error with exit status 2.
The typer app keeps an ``mcp`` command, for ``ragmeter --help`` and shell completion, that
hands its arguments back to the entry.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ragmeter.errors import RagmeterError, UsageError
from ragmeter.warnings import show_warning

__all__ = ["HELP", "main"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LEVELS = ("debug", "info", "warning", "error", "critical")
MISSING_SDK = "the MCP server needs the mcp package (pip install 'ragmeter[mcp]')"
HELP = "Serve ragmeter's evaluators as MCP tools (UltraRAG-compatible)."
USAGE = """\
ragmeter mcp [--transport stdio|http] [--host 127.0.0.1] [--port 8151] [--path /mcp]
                    [--stateless] [--json-response] [--allow-remote]
                    [--root DIR ...] [--config ragmeter.yaml] [--store URL]
                    [--tools all|ultrarag|NAME,NAME,...] [--ultrarag] [--read-only]
                    [--judge-max-cost USD] [--max-concurrent 2] [--log-level warning]
       ragmeter mcp ultrarag-init DIR [--name evaluation] [--force]"""
INTERRUPTED = 130  # exit status after Ctrl-C (128 + SIGINT), as everywhere in ragmeter


class _Parser(argparse.ArgumentParser):
    """argparse with ragmeter's one-line usage errors instead of usage text and exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')", command=self.prog[9:])


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not in the range x>=1")
    return value


def parser() -> argparse.ArgumentParser:
    """The parser of ``ragmeter mcp`` with its ``ultrarag-init`` subcommand."""
    ap = _Parser(
        prog="ragmeter mcp",
        usage=USAGE,
        description=HELP.removesuffix(".")
        + " over stdio (default) or streamable HTTP (docs/mcp.md).",
        allow_abbrev=False,
    )
    o = ap.add_argument
    o(
        "--transport",
        default="stdio",
        metavar="stdio|http",
        help="stdio (default) or http (streamable HTTP).",
    )
    o("--host", default="127.0.0.1", metavar="HOST", help="HTTP address (default 127.0.0.1).")
    o(
        "--port",
        type=int,
        default=8151,
        metavar="PORT",
        help="HTTP port (default 8151; 0: any free port).",
    )
    o("--path", default="/mcp", metavar="PATH", help="HTTP endpoint path (default /mcp).")
    o("--stateless", action="store_true", help="No HTTP sessions.")
    o("--json-response", action="store_true", help="Plain JSON instead of SSE responses.")
    o("--allow-remote", action="store_true", help="Allow a --host other than loopback.")
    o(
        "--root",
        action="append",
        type=Path,
        metavar="DIR",
        help="Directory tools may read and write (repeat; default .).",
    )
    o("--config", type=Path, metavar="FILE", help="ragmeter.yaml whose store: (and judge:) apply.")
    o("--store", metavar="URL", help="Results store URL.")
    o("--tools", default="all", metavar="TOOLS", help="all (default), ultrarag, or NAME,NAME,...")
    o("--ultrarag", action="store_true", help="UltraRAG mode: build tool, wrapped outputs.")
    o("--read-only", action="store_true", help="Refuse every argument that writes.")
    o("--judge-max-cost", type=float, metavar="USD", help="USD one call may spend.")
    o(
        "--max-concurrent",
        type=_positive,
        default=2,
        metavar="N",
        help="Tool calls computing at once (default 2).",
    )
    o("--log-level", default="warning", metavar="LEVEL", help="Log level (default warning).")
    sub = ap.add_subparsers(
        dest="command", metavar="COMMAND", title="commands", prog="ragmeter mcp"
    )
    init = sub.add_parser(
        "ultrarag-init",
        help="Scaffold an UltraRAG server folder: parameter.yaml, src/<folder>.py, README.md.",
        description="Scaffold an UltraRAG server folder: parameter.yaml, src/<folder>.py, "
        "README.md.",
        allow_abbrev=False,
    )
    init.add_argument("directory", type=Path, metavar="DIR", help="The folder to create.")
    init.add_argument(
        "--name", default="evaluation", help="Server key of the README's pipeline example."
    )
    init.add_argument("--force", action="store_true", help="Overwrite existing files.")
    return ap


def main(argv: Sequence[str]) -> int:
    """Run ``ragmeter mcp ARGV`` and return the exit status (0, 2 for bad usage, 130)."""
    with warnings.catch_warnings():
        warnings.showwarning = show_warning
        try:
            try:
                args = parser().parse_args(list(argv))
            except SystemExit as exc:  # --help printed its page
                return exc.code if isinstance(exc.code, int) else 0
            if args.command == "ultrarag-init":
                return _ultrarag_init(args)
            return _serve(args)
        except RagmeterError as exc:
            print(str(exc), file=sys.stderr)
            return exc.exit_status
        except KeyboardInterrupt:
            print("ragmeter: interrupted (finished work is kept)", file=sys.stderr)
            return INTERRUPTED


def _ultrarag_init(args: argparse.Namespace) -> int:
    from ragmeter.mcp.ultrarag import init_folder

    for written in init_folder(str(args.directory), name=args.name, force=args.force):
        print(f"wrote {written}")
    return 0


def _check(args: argparse.Namespace) -> None:
    """The option checks that need no SDK, in the order the messages are documented."""
    if args.log_level.lower() not in LEVELS:
        raise UsageError(
            f"--log-level {args.log_level!r} (expected {', '.join(LEVELS)})", command="mcp"
        )
    if args.transport not in ("stdio", "http"):
        raise UsageError(f"--transport {args.transport!r} (expected stdio or http)", command="mcp")
    if args.transport == "http" and args.host not in LOOPBACK and not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is not a loopback address; add --allow-remote to serve other "
            "machines",
            command="mcp",
        )


def _serve(args: argparse.Namespace) -> int:
    _check(args)
    try:
        import mcp as _sdk  # noqa: F401
    except ModuleNotFoundError:
        raise UsageError(MISSING_SDK, command="mcp") from None
    from ragmeter.mcp import server as srv
    from ragmeter.mcp import transport as tr
    from ragmeter.mcp.paths import Roots
    from ragmeter.mcp.settings import Settings

    settings = Settings(
        roots=Roots([str(r) for r in args.root] if args.root else ["."]),
        ultrarag=args.ultrarag,
        read_only=args.read_only,
        config=args.config,
        store=args.store,
    )
    if args.config is not None:
        settings.config_data()  # a bad config is a usage error now, not on the first call
    settings.judge_max_cost = _judge_cap(settings, args.judge_max_cost)
    srv.configure_logging(args.log_level)
    if args.allow_remote and args.host not in LOOPBACK:
        print(
            "ragmeter mcp: warning: serving a non-loopback address; anyone who can reach "
            "the port can read files under the roots and spend the judge budget",
            file=sys.stderr,
        )
    http = None
    if args.transport == "http":
        http = {
            "host": args.host,
            "port": args.port,
            "path": args.path,
            "json_response": args.json_response,
            "stateless": args.stateless,
        }
    server = srv.build_server(
        settings, tools=args.tools, http=http, max_concurrent=args.max_concurrent
    )
    if http is None:
        tr.serve_stdio(server)
    else:
        tr.serve_http(server, http, args.log_level)
    return 0


def _judge_cap(settings: Any, flag: float | None) -> float:
    """``--judge-max-cost``, else the config's ``tasks.judge.max_cost_usd``, else 0."""
    if flag is not None:
        return float(flag)
    tasks = settings.config_data().get("tasks", {}) or {}
    judge = (tasks.get("judge") or {}) if isinstance(tasks, dict) else {}
    return float(judge.get("max_cost_usd", 0.0) or 0.0)
