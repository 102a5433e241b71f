"""Helpers shared by the extraction commands: output, option checks, format detection, loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ragmeter.errors import UsageError

_FORMATS = ("brat", "conll", "heritage")


def _console():
    from ragmeter.cli.console import make_console

    return make_console()  # labels, ids and documents are data: printed as text


def _status(message: str):
    """A transient spinner on stderr (shown only on a terminal)."""
    from ragmeter.cli.console import spinner

    return spinner(message)


def _fmt(x: Any) -> str:
    from ragmeter.cli.console import NO_SCORE, decimals

    return decimals(x, missing=NO_SCORE, only_floats=True)


def _emit_json(data: Any) -> None:
    from ragmeter.io.jsonutil import dumps

    typer.echo(dumps(data, indent=2))


def _write_output(path: str | None, data: Any) -> None:
    if not path:
        return
    from ragmeter.io.files import atomic_write
    from ragmeter.io.jsonutil import dumps

    with atomic_write(path) as fh:
        fh.write(dumps(data, indent=2) + "\n")


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _alts(allowed: tuple[str, ...]) -> str:
    """The choices as the option help lists them: ``a | b | c``."""
    return " | ".join(allowed)


def _choice(command: str, option: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UsageError(f"{option} '{value}' is not one of {', '.join(allowed)}", command=command)
    return value


def _zero_division(command: str, value: str, *, allow_nan: bool = False) -> Any:
    allowed = ("0", "1", "warn", *(("nan",) if allow_nan else ()))
    _choice(command, "--zero-division", value, allowed)
    return value if value in ("warn", "nan") else float(value)


def _detect_format(path: str) -> str:
    p = Path(path)
    if p.is_dir() or p.suffix == ".ann":
        return "brat"
    if p.suffix.lower() in (".json", ".jsonl") or path.endswith((".json.gz", ".jsonl.gz")):
        return "heritage"
    return "conll"


def _warn_lines(warnings: list[str]) -> None:
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)


# -- ner ---------------------------------------------------------------------------------------
def _load_spans(path: str, fmt: str, *, role: str, opts: dict[str, Any]):
    if fmt == "brat":
        from ragmeter.io.brat import load_brat

        return load_brat(
            path,
            role=role,
            on_offset_mismatch=opts["on_offset_mismatch"],
            discontinuous=opts["discontinuous"],
            offset_unit=opts["offset_unit"],
        )
    from ragmeter.io.heritage import load_heritage

    return load_heritage(
        path,
        role=role,
        on_offset_mismatch=opts["on_offset_mismatch"],
        offset_unit=opts["offset_unit"],
    )
