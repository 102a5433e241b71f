"""``ragmeter report`` and ``ragmeter serve`` (docs/dashboard.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ragmeter.cli.stores import STORE_HELP, open_existing_store, stored

LOOPBACK = ("127.0.0.1", "localhost", "::1")
DASHBOARD_WORKERS = 8
"""Requests the dashboard works on at once (one store connection each); more get a quick 503."""


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        runs: Annotated[
            list[str],
            typer.Argument(
                help="Runs to report on: run ids, evaluation ids (all their systems), unique "
                "prefixes, or 'latest' (the newest evaluation)."
            ),
        ],
        output: Annotated[
            Path, typer.Option("--output", "-o", help="The HTML file to write.")
        ] = Path("report.html"),
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        worst: Annotated[
            int,
            typer.Option("--worst", min=1, max=100, help="Worst samples shown per metric."),
        ] = 5,
        bins: Annotated[
            int, typer.Option("--bins", min=2, max=200, help="Bins of the per-query histograms.")
        ] = 20,
        title: Annotated[
            str | None, typer.Option("--title", help="Title (default: the project names).")
        ] = None,
    ) -> None:
        """Write one self-contained HTML report of stored runs (no request to any other host).

        Prints the report's path on stdout.
        """
        from ragmeter.errors import UsageError
        from ragmeter.report import resolve_runs

        with stored(store, "report") as handle:
            ids = resolve_runs(handle, runs)
            from ragmeter.report import write_report

            try:
                path = write_report(handle, ids, output, worst=worst, bins=bins, title=title)
            except OSError as exc:
                raise UsageError(
                    f"cannot write {output}: {exc.strerror or exc}", command="report"
                ) from None
        size = path.stat().st_size
        typer.echo(
            f"wrote {path} ({len(ids)} run{'s' if len(ids) != 1 else ''}, {size / 1024:.0f} KB)",
            err=True,
        )
        typer.echo(str(path.resolve()))

    @app.command("serve")
    def serve(
        store: Annotated[str | None, typer.Option("--store", help=STORE_HELP)] = None,
        host: Annotated[
            str,
            typer.Option("--host", help="Address to listen on (127.0.0.1: this machine only)."),
        ] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8150,
        judge_cache: Annotated[
            str | None,
            typer.Option(
                "--judge-cache",
                help="The judge's cache file or postgresql:// URL, read-only: sample pages show "
                "each judge call's "
                "prompt and reply (default: $RAGMETER_JUDGE_CACHE, else "
                ".ragmeter/judge-cache.sqlite).",
            ),
        ] = None,
    ) -> None:
        """Start the read-only dashboard over the results store (needs ragmeter\\[web])."""
        from ragmeter.errors import UsageError

        try:
            import starlette  # noqa: F401
            import uvicorn
        except ModuleNotFoundError as exc:
            raise UsageError(
                f"the dashboard needs ragmeter[web] ({exc.name} is not installed): "
                "pip install 'ragmeter[web]'",
                command="serve",
            ) from None
        from ragmeter.judge.cache import shown_cache
        from ragmeter.judge.cache_open import open_reader

        cache_path = _judge_cache_path(judge_cache)
        # the store first: a bad --store is named even when --host or --port is wrong too
        handle = open_existing_store(store, "serve", pool_size=DASHBOARD_WORKERS)
        _check_port(host, port)
        from ragmeter.web import create_app

        public = host not in LOOPBACK
        hosts = None if host in ("0.0.0.0", "::") else [*LOOPBACK, host]
        app = create_app(
            handle, allowed_hosts=hosts, judge_cache=cache_path, max_busy=DASHBOARD_WORKERS
        )
        shown = f"[{host}]" if ":" in host else host
        cache_shown = shown_cache(cache_path)
        cache_note = f"judge cache {cache_shown}; " if open_reader(cache_path).exists() else ""
        print(
            f"ragmeter dashboard: http://{shown}:{port}/  (store {handle.url}; {cache_note}"
            "read-only; Ctrl+C stops it)",
            file=sys.stderr,
            flush=True,
        )
        if public:
            print(
                f"ragmeter serve: listening on {host}, not only on this machine; the dashboard has "
                "no login, so anyone who can reach it can read every stored run",
                file=sys.stderr,
                flush=True,
            )
        try:
            uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
        finally:
            handle.close()


def _judge_cache_path(text: str | None) -> Path | str:
    """The judge cache the sample pages read: ``--judge-cache`` (which must exist), else
    ``$RAGMETER_JUDGE_CACHE``, else the judge's default file. Those two may be absent: the
    dashboard starts all the same and a sample page with judge calls says the cache is missing.
    A ``postgresql://`` URL is kept as it is (read-only sessions; docs/judge.md).
    """
    import os

    from ragmeter.errors import UsageError
    from ragmeter.judge.cache import is_cache_url

    env = os.environ.get("RAGMETER_JUDGE_CACHE")
    try:
        if is_cache_url(text if text is not None else env):
            return text if text is not None else env  # type: ignore[return-value]
    except UsageError as exc:
        raise UsageError(exc.message, command="serve") from None
    given = None if text is None else Path(text)
    if given is not None:
        if not given.is_file():
            what = "is a folder" if given.is_dir() else "does not exist"
            raise UsageError(
                f"--judge-cache {given} {what} (expected the judge's cache file, "
                "e.g. .ragmeter/judge-cache.sqlite)",
                command="serve",
            )
        return given.absolute()
    return Path(env or ".ragmeter/judge-cache.sqlite").absolute()


def _check_port(host: str, port: int) -> None:
    """A clear one-line error when the address cannot be listened on, instead of uvicorn's log
    and exit: an invalid host, an address this machine does not have, a port in use."""
    import errno
    import socket

    from ragmeter.errors import UsageError

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        why = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise UsageError(
            f"--host {host!r} is not a valid address or a name this machine can resolve ({why}); "
            "use e.g. 127.0.0.1",
            command="serve",
        ) from None
    family, _, _, _, address = infos[0]
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        why = exc.strerror or str(exc)
        if exc.errno == errno.EADDRINUSE:
            hint = "pick another --port"
        elif exc.errno == errno.EADDRNOTAVAIL:
            hint = f"{host} is not an address of this machine; use e.g. 127.0.0.1"
        elif exc.errno == errno.EACCES:
            hint = "ports below 1024 need privileges; pick another --port"
        else:
            hint = "check --host and --port"
        raise UsageError(
            f"cannot listen on {host}:{port} ({why}); {hint}", command="serve"
        ) from None
