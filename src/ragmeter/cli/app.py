"""The typer application: global options, error handling and the command groups.

Command groups register themselves from their own modules (``register(app)``), so each engine's
commands live next to nothing else. A module listed here that is not part of the build is
skipped; a module that fails to import for another reason is a bug and is raised.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

import typer

from ragmeter._version import __version__
from ragmeter.cli.guard import guard_outputs
from ragmeter.errors import RagmeterError
from ragmeter.warnings import show_warning

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
    "ragmeter.cli.mcp",
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
        add_completion=True,
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
    guard_outputs(app)  # no output option may name a folder or overwrite an input
    return app


def run(argv: list[str]) -> int:
    """Run the app on ``argv`` and return the exit status (docs/conventions.md)."""
    # typer >= 0.29 vendors click as typer._click; its usage errors are these two classes
    from typer._click.exceptions import NoArgsIsHelpError, UsageError

    with warnings.catch_warnings():
        # a warning raised inside a command is located in typer's dispatcher by Python's default
        # display (two lines, a path into site-packages): show it as one line of ours instead
        warnings.showwarning = show_warning
        command = typer.main.get_command(build_app())
        tidy_help(command)
        try:
            rv = command.main(args=argv, prog_name="ragmeter", standalone_mode=False)
        except RagmeterError as exc:
            print(str(exc), file=sys.stderr)
            return exc.exit_status
        except NoArgsIsHelpError as exc:  # bare `ragmeter` or a bare group: the help page
            exc.show()
            return int(exc.exit_code)
        except UsageError as exc:
            print(usage_line(exc), file=sys.stderr)
            return int(exc.exit_code)
        except typer.TyperException as exc:  # other framework errors print themselves
            exc.show()  # type: ignore[attr-defined]
            return int(getattr(exc, "exit_code", 2))
        except (typer.Abort, KeyboardInterrupt):
            rv = INTERRUPTED
    if rv == INTERRUPTED:
        # typer turns Ctrl-C inside a command into a silent Exit(130), returned here as 130
        print("ragmeter: interrupted (finished work is kept)", file=sys.stderr)
    return rv if isinstance(rv, int) else 0


def usage_line(exc: Any) -> str:
    """A usage error as one line: ``ragmeter COMMAND: message (see 'ragmeter COMMAND --help')``.

    click prints the usage synopsis, a hint and the message on three or four lines; every other
    error of ragmeter is one line, so a usage error is too.
    """
    where = exc.ctx.command_path if exc.ctx is not None else "ragmeter"
    message = " ".join(exc.format_message().split()).rstrip(".")
    return f"{where}: {message} (see '{where} --help')"


def tidy_help(command: Any) -> None:
    """Replace typer's type labels (``<bool>``, ``<list[str]>``, ``<str>``) in help pages.

    A flag shows no type at all; a value shows the conventional upper-case word (``TEXT``,
    ``INTEGER``, ``PATH``); a choice lists its values.
    """
    ctx = typer.Context(command)
    params = list(command.params)
    help_option = command.get_help_option(ctx)  # made on demand; click caches it
    if help_option is not None:
        params.append(help_option)
    for param in params:
        if not hasattr(param, "display_type"):
            continue
        label = _clean_label(param.display_type(ctx))
        if param.param_type_name != "option":
            # an argument's metavar is its name in the usage line: replace only the label
            param.display_type_rich = lambda ctx, label=label: label
        elif param.metavar is None:
            param.metavar = label
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


_LABELS = {"bool": "", "str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH"}


def _clean_label(label: str) -> str:
    inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    if inner.endswith(" range"):  # the range itself is printed next to it
        inner = inner[: -len(" range")]
    return _LABELS.get(inner, inner)
