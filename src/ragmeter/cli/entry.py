"""Entry point of the ``ragmeter`` command.

``ragmeter trec`` is dispatched before typer and rich are imported: trec_eval users expect its
lean start (benchmarks/README.md). So is ``ragmeter mcp`` (``_mcp``: an MCP client waits for
every start). Every other command goes through the typer app.
"""

from __future__ import annotations

import contextlib
import os
import sys


def console() -> None:
    """The ``ragmeter`` executable and ``python -m ragmeter``: run, then exit with the status."""
    args = sys.argv[1:]
    code = main(args, own_process=True)
    if args[:1] == ["trec"]:
        # After a parse error in its threaded CSV reader (the fast path falling back to the
        # general parser), Arrow can still have tasks on its worker threads; tearing the
        # interpreter down under them aborts the process now and then ("terminate called
        # without an active exception", exit 134; apache/arrow#34314). trec has written all
        # it will write by now, so it leaves without the teardown.
        with contextlib.suppress(BrokenPipeError):  # the reader left (`| head`): not our error
            sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run the command in ``argv``; ``own_process``: this process exists for it and ends after
    it (the console entry), so ``ragmeter trec`` may set process-wide things up for speed."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["trec"]:
        return _trec(args[1:], own_process=own_process)
    if args[:1] == ["mcp"]:
        return _mcp(args[1:])
    from ragmeter.cli.app import run

    return run(args)


def _trec(args: list[str], *, own_process: bool = False) -> int:
    from ragmeter.cli.trec_main import main as trec_main

    try:
        import ragmeter.retrieval  # noqa: F401  (the engine: absent from a build without it)
    except ModuleNotFoundError as exc:
        if exc.name != "ragmeter.retrieval":
            raise
        print("ragmeter trec: the retrieval engine is not part of this build", file=sys.stderr)
        return 2
    return trec_main(args, own_process=own_process)


def _mcp(args: list[str]) -> int:
    """``ragmeter mcp`` without typer or rich: an MCP client waits for the server on every start.

    ragmeter.mcp sits above the command line (its tools use cli helpers), so it is loaded by
    name, as the typer app loads its command modules, and cli never imports it back.
    """
    import importlib

    name = "ragmeter.mcp.command"
    try:
        command = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name not in ("ragmeter.mcp", name):
            raise
        print("ragmeter mcp: the MCP server is not part of this build", file=sys.stderr)
        return 2
    return int(command.main(args))
