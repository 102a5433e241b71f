"""The output guard every command runs before its own code: outputs never destroy inputs.

A command's output options are recognised by name (``--output``/``-o``, ``--per-sample``,
``--details``, ``--ledger``, ``--aggregates``, ``--out-file``, ``--results-dir``, ``cache
export``'s OUT, and the caches ``--cache``/``--cache-dir``, which are written too); every other
argument that names an existing file, or a ``sqlite:///`` store, is
an input. The check (:func:`ragmeter.io.files.check_outputs`) runs before the command reads
anything, so ``ragmeter split gold.jsonl -o gold.jsonl`` stops with one line and the gold set
untouched (issue 17). ``ragmeter trec`` does not go through typer and calls the same check.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

import typer

from ragmeter.io.files import check_outputs

# parameter name → how the option is spelled in messages
OUTPUT_PARAMS = {
    "output": "--output",
    "per_sample": "--per-sample",
    "details": "--details",
    "ledger": "--ledger",
    "aggregates": "--aggregates",
    "out_file": "--out-file",
    "out": "OUT",
    "results_dir": "--results-dir",
    # written as well as read: the judge's cache file and the runner's task cache
    "cache": "--cache",
    "cache_dir": "--cache-dir",
}
FOLDER_PARAMS = frozenset({"--results-dir", "--cache-dir"})
SQLITE = "sqlite:///"


def _paths(value: Any) -> Iterator[str]:
    """The file paths an argument value names (lists are walked; store URLs are unwrapped)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _paths(item)
    elif isinstance(value, (str, os.PathLike)):
        name = os.fspath(value)
        if name.startswith(SQLITE):
            name = name[len(SQLITE) :].split("?", 1)[0]
        if name and name != "-" and os.path.isfile(name):
            yield name


def check_arguments(kwargs: dict[str, Any]) -> None:
    """Refuse output paths that are folders, lie below a file, or resolve to an input."""
    outputs: dict[str, Any] = {}
    inputs: list[str] = []
    for key, value in kwargs.items():
        option = OUTPUT_PARAMS.get(key)
        if option and isinstance(value, (str, os.PathLike)):
            outputs[option] = value
        else:
            inputs.extend(_paths(value))
    if outputs:
        check_outputs(outputs, inputs, folders=FOLDER_PARAMS)


def guarded(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` with :func:`check_arguments` run first (typer reads the wrapped signature)."""

    @functools.wraps(callback)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_arguments(kwargs)
        return callback(*args, **kwargs)

    return wrapper


def guard_outputs(app: typer.Typer) -> None:
    """Wrap every command of ``app`` and of its sub-apps (``runs``, ``cache``, ``dataset``)."""
    for info in app.registered_commands:
        if info.callback is not None:
            info.callback = guarded(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_outputs(group.typer_instance)
