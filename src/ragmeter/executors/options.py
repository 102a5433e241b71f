"""The executor options that commands share (typer annotations; nothing Dask is imported)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

ExecutorOpt = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="local (default, in-process) or dask. Env: RAGMETER_EXECUTOR.",
        rich_help_panel="Scale-out",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Start a local Dask cluster of N worker processes (implies --executor dask).",
        rich_help_panel="Scale-out",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Connect to a Dask scheduler: tcp://HOST:PORT or a scheduler file (implies "
        "--executor dask). Env: RAGMETER_DASK_SCHEDULER.",
        rich_help_panel="Scale-out",
    ),
]
PartitionsOpt = Annotated[
    int | None,
    typer.Option(
        "--partitions", help="Number of shards (default: automatic).", rich_help_panel="Scale-out"
    ),
]
WorkerMemoryOpt = Annotated[
    str | None,
    typer.Option(
        "--worker-memory",
        help="Memory limit per local Dask worker, e.g. 2GiB.",
        rich_help_panel="Scale-out",
    ),
]


def settings_from_flags(command: str, inputs: tuple[str, ...] = (), **flags: Any) -> Any:
    """Resolve the executor of a command from its flags and the environment; usage errors
    name the command. Workers read ``inputs`` themselves, so stdin (``-``) is refused for
    Dask before anything is read."""
    from ragmeter.errors import UsageError
    from ragmeter.executors.settings import resolve_settings

    try:
        settings = resolve_settings(**flags)
    except UsageError as exc:
        raise UsageError(exc.message, command=command) from None
    if not settings.is_local and "-" in inputs:
        raise UsageError(
            "--executor dask reads INPUT from a file every worker can see, not from stdin "
            "(expected a file path)",
            command=command,
        )
    return settings


WorkDirOpt = Annotated[
    str | None,
    typer.Option(
        "--work-dir",
        help="Files for the workers and finished shards a re-run reuses (default "
        ".ragmeter/work; must be visible from every worker).",
        rich_help_panel="Scale-out",
    ),
]
KeepWorkOpt = Annotated[
    bool | None,
    typer.Option(
        "--keep-work/--no-keep-work",
        help="Keep the work dir after a successful run (default: removed).",
        rich_help_panel="Scale-out",
    ),
]
