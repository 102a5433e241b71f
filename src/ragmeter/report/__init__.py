"""The single-file HTML report (``docs/dashboard.md``, "The report").

:func:`write_report` reads runs from the results store and writes one self-contained HTML file:
every stylesheet, script and number inlined, no request to any other host, readable from a
``file://`` URL, a CI artifact or an e-mail attachment.

Usage, on the store a ``ragmeter run`` wrote::

    from ragmeter.report import write_report
    write_report("sqlite:///.ragmeter/ragmeter.db", ["latest"], "report.html")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["build_report", "render_report", "write_evaluation_report", "write_report"]


def _open(store: Any) -> tuple[Any, bool]:
    from ragmeter.store import Store

    if isinstance(store, Store) or hasattr(store, "connected"):  # a Store, or a reader of one
        return store, False
    return Store(store, readonly=True), True  # a report reads; it never creates or upgrades


def resolve_runs(store: Any, refs: Sequence[str]) -> list[str]:
    """Run ids named by ``refs`` (run ids, evaluation ids, unique prefixes, ``latest``)."""
    ids: list[str] = []
    for ref in refs:
        ids.extend(i for i in store.resolve(ref) if i not in ids)
    return ids


def build_report(store: Any, runs: Sequence[str], **options: Any) -> dict[str, Any]:
    """The report's content as a JSON-ready dict (see :mod:`ragmeter.report.view`)."""
    from ragmeter.report.view import build_report as build

    handle, owned = _open(store)
    try:
        return build(handle, resolve_runs(handle, runs), **options)
    finally:
        if owned:
            handle.close()


def render_report(store: Any, runs: Sequence[str], **options: Any) -> str:
    """The report's HTML text."""
    from ragmeter.report.render import render_report_html

    return render_report_html(build_report(store, runs, **options))


def write_report(
    store: Any, runs: Sequence[str], output: str | os.PathLike[str], **options: Any
) -> Path:
    """Write the report of ``runs`` (refs as :meth:`Store.resolve` takes them) to ``output``.

    ``store`` is a store URL, a path, an open :class:`~ragmeter.store.Store`, ``None`` for the
    default store, or a reader of :mod:`ragmeter.store.reader` (such as
    :class:`~ragmeter.store.memory.MemoryReader` over runs that were not stored). The file is
    written atomically. Options: ``worst`` (samples per metric in the error analysis, default
    5), ``bins`` (histogram bins, default 20), ``title``.
    """
    from ragmeter.io.files import atomic_write

    html = render_report(store, runs, **options)
    path = Path(output)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        fh.write(html)
    return path


def write_evaluation_report(
    result: Any, output: str | os.PathLike[str] | None = None, **options: Any
) -> Path:
    """The report of an :class:`~ragmeter.runner.evaluation.EvaluationResult` (``ragmeter run
    --report``): read back from the store it was saved to, or, when it was not stored
    (``--no-store``), from its run records in memory (no database). ``output`` defaults to
    ``report.html`` in the results folder (else the working directory)."""
    from ragmeter.store.memory import MemoryReader

    saved = getattr(result, "saved", None) or {}
    if output is None:
        folder = saved.get("results_dir")
        output = Path(folder) / "report.html" if folder else Path("report.html")
    run_ids = list(result.run_ids.values())
    if saved.get("store"):
        return write_report(saved["store"], run_ids, output, **options)
    return write_report(MemoryReader(result.run_records()), run_ids, output, **options)
