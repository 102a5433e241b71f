"""The typer application: global options, error handling and the command groups.

Command groups register themselves from their own modules (``register(app)``), so each engine's
commands live next to nothing else. A module listed here that is not part of the build is
skipped; a module that fails to import for another reason is a bug and is raised.
"""

from __future__ import annotations

import importlib
import sys

import typer

from ragmeter._version import __version__
from ragmeter.errors import RagmeterError

COMMAND_MODULES = (
    "ragmeter.cli.trec",
    "ragmeter.cli.answers",
    "ragmeter.cli.judge",
    "ragmeter.cli.steps",
    "ragmeter.cli.extraction",
    "ragmeter.cli.compare",
    "ragmeter.cli.split",
    "ragmeter.cli.datasets",
    "ragmeter.cli.run",
    "ragmeter.cli.systems",
    "ragmeter.cli.baseline",
    "ragmeter.cli.report",
    "ragmeter.cli.metrics",
)

INTERRUPTED = 130  # exit status after Ctrl-C (128 + SIGINT), as shells report it

HELP = (
    "Evaluate retrieval runs, answers, LLM-judged quality, agent steps and information "
    "extraction; compare systems, gate releases, keep every run."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ragmeter {__version__}")
        raise typer.Exit()


def _is_absent(exc: ModuleNotFoundError, module: str) -> bool:
    """True when ``module`` itself (or its ragmeter package) is missing, not a dependency."""
    return (
        bool(exc.name)
        and exc.name.startswith("ragmeter.")
        and (module == exc.name or module.startswith(exc.name + "."))
    )


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="ragmeter",
        help=HELP,
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", "-V", callback=_version, is_eager=True, help="Print the version."
        ),
    ) -> None:
        """ragmeter: exact, fast, offline-first evaluation of RAG, GraphRAG and QA agents."""

    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if _is_absent(exc, name):
                continue
            raise
        module.register(app)
    return app


def run(argv: list[str]) -> int:
    """Run the app on ``argv`` and return the exit status (DESIGN.md "Command line")."""
    app = build_app()
    try:
        rv = app(args=argv, prog_name="ragmeter", standalone_mode=False)
    except RagmeterError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_status
    except typer.TyperException as exc:  # usage errors of the CLI framework print themselves
        exc.show()  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 2))
    except (typer.Abort, KeyboardInterrupt):
        rv = INTERRUPTED
    if rv == INTERRUPTED:
        # typer turns Ctrl-C inside a command into a silent Exit(130), returned here as 130
        print("ragmeter: interrupted (finished work is kept)", file=sys.stderr)
    return rv if isinstance(rv, int) else 0
