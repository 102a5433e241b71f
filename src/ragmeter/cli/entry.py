"""Entry point of the ``ragmeter`` command.

``ragmeter trec`` is dispatched before typer and rich are imported: trec_eval users expect its
lean start (specs/retrieval.md §3.1, §9.6). Every other command goes through the typer app.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["trec"]:
        return _trec(args[1:])
    from ragmeter.cli.app import run

    return run(args)


def _trec(args: list[str]) -> int:
    try:
        from ragmeter.retrieval.cli import main as trec_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("ragmeter.retrieval", "ragmeter.retrieval.cli"):
            raise
        print("ragmeter trec: the retrieval engine is not part of this build", file=sys.stderr)
        return 2
    return trec_main(args)
