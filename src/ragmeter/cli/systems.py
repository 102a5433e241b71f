"""``ragmeter systems check CONFIG``: call each live system's methods once (docs/systems.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def _short(value: object, width: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def register(app: typer.Typer) -> None:
    systems_app = typer.Typer(
        help="Live systems: the runner calls the system under test.",
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(systems_app, name="systems")

    @systems_app.command("check")
    def check(
        config: Annotated[Path, typer.Argument(help="The ragmeter.yaml whose systems to check.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    ) -> int:
        """Import every call: system, list its methods and the tasks they enable, call each
        method once on the first gold sample and show what came back.

        Exit status: 0 every call worked, 2 an import or a call failed.
        """
        from ragmeter.runner.config import load_config
        from ragmeter.systems.check import check_systems

        cfg = load_config(config)
        report = check_systems(cfg)
        failed = [
            (name, m, e["error"])
            for name, s in report.items()
            for m, e in s["methods"].items()
            if "error" in e
        ]
        if as_json:
            from ragmeter.io.jsonutil import dumps

            typer.echo(dumps(report, indent=2))
        elif not report:
            typer.echo("no live systems in the config (a system with call: is one)")
        else:
            for name, s in report.items():
                typer.echo(f"{name}: {s['call']} (version {s['version'] or '-'})")
                for method, e in s["methods"].items():
                    tasks = ", ".join(e["tasks"])
                    if "error" in e:
                        typer.echo(f"  {method} [{tasks}]: FAILED {e['error']}")
                    else:
                        typer.echo(
                            f"  {method} [{tasks}] on {e['unit']!r} ({e['seconds']:.3f} s): "
                            f"{_short(e['result'])}"
                        )
        if failed:
            name, method, error = failed[0]
            typer.echo(
                f"ragmeter systems check: {len(failed)} method(s) failed; first: "
                f"{name}.{method}: {error}",
                err=True,
            )
            return 2
        return 0
