"""The ``ragmeter`` section of pytest's terminal summary and the ``--ragmeter-json`` file.

Both are built from the checks that reached the reporting process (each report's
``ragmeter_checks``), so under pytest-xdist the controller lists the checks of every worker.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter._version import __version__

__all__ = ["summary_lines", "write_json"]

_COLUMNS = ("test", "system", "metric", "value", "expected", "verdict")


def _shown(check: Mapping[str, Any]) -> str:
    if check.get("shown") not in (None, ""):
        return str(check["shown"])
    value = check.get("value")
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _verdict(check: Mapping[str, Any]) -> str:
    verdict = str(check.get("verdict"))
    if verdict == "SKIP":
        counts = check.get("status_counts") or {}
        bad = [s for s in counts if s not in ("ok", "missing_zeroed")]
        return f"SKIP ({', '.join(bad)})" if bad else "SKIP"
    return verdict


def _short_run(run_id: str) -> str:
    # 20260301T120000Z-7f3a1c-hybrid-v1 -> r-…-7f3a1c: enough to find it in the store
    parts = run_id.split("-")
    return f"r-…-{parts[1]}" if len(parts) > 1 else run_id


def _rel(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return rel if len(rel) < len(path) and not rel.startswith("..") else path


def _spend(checks: Sequence[Mapping[str, Any]]) -> str:
    """`` · judge spend $0.42`` over the session's evaluations (unknown prices say so)."""
    spends = {c["evaluation_id"]: c.get("judge_usd") for c in checks if c.get("evaluation_id")}
    if not spends:
        return ""
    if any(v is None for v in spends.values()):
        return " · judge spend unknown (a call of unknown price)"
    return f" · judge spend ${sum(spends.values()):.2f}"


def summary_lines(
    checks: Sequence[Mapping[str, Any]], *, mode: str, store: str, cwd: str
) -> list[tuple[str, dict[str, bool]]]:
    """(text, terminal markup) lines of the section; ``mode`` is full or short."""
    counts = {"pass": 0, "FAIL": 0, "SKIP": 0}
    for c in checks:
        counts[str(c.get("verdict"))] = counts.get(str(c.get("verdict")), 0) + 1
    roots = sorted({str(Path(c["results_dir"]).parent) for c in checks if c.get("results_dir")})
    verdicts = f"checks: {counts['pass']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped"
    where = f" · results under {_rel(roots[0], cwd)}/" if len(roots) == 1 else ""
    tail = verdicts + _spend(checks) + where
    out: list[tuple[str, dict[str, bool]]] = []
    shown = checks if mode == "full" else [c for c in checks if c.get("verdict") == "FAIL"]
    if mode == "full":
        configs = sorted({str(c["config"]) for c in checks if c.get("config")})
        runs = sorted({(str(c["system"]), str(c["run_id"])) for c in checks if c.get("run_id")})
        head = [f"config {', '.join(_rel(p, cwd) for p in configs) or '-'}", f"store: {store}"]
        if runs:
            head.append("runs: " + ", ".join(f"{s} {_short_run(r)}" for s, r in runs))
        out.append((" · ".join(head), {}))
    if shown:
        rows = [_COLUMNS] + [
            (
                str(c.get("nodeid", "")),
                str(c.get("system", "")),
                str(c.get("metric", "")),
                _shown(c),
                str(c.get("expected", "")),
                _verdict(c),
            )
            for c in shown
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        for i, row in enumerate(rows):
            text = "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            verdict = row[-1]
            markup = {}
            if i and verdict == "FAIL":
                markup = {"red": True, "bold": True}
            elif i and verdict.startswith("SKIP"):
                markup = {"yellow": True}
            out.append((text, markup))
    out.append((tail, {"red": True} if counts["FAIL"] else {"green": True}))
    return out


def _clean(check: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("nodeid", "system", "metric", "value", "expected", "verdict", "n", "status_counts")
    out = {k: check.get(k) for k in keys}
    out["reason"] = check.get("reason")
    for extra in ("p_value", "p_adjusted", "ci", "rule", "run_id", "config", "results_dir"):
        if check.get(extra) is not None:
            out[extra] = check[extra]
    return out


def write_json(path: Path, checks: Sequence[Mapping[str, Any]]) -> None:
    """``{"ragmeter": version, "checks": [...], "runs": [...]}``, written atomically."""
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for c in checks:
        if c.get("run_id"):
            runs.setdefault(
                (str(c["system"]), str(c["run_id"])),
                {
                    "system": c["system"],
                    "run_id": c["run_id"],
                    "config": c.get("config"),
                    "results_dir": c.get("results_dir"),
                },
            )
    doc = {
        "ragmeter": __version__,
        "checks": [_clean(c) for c in checks],
        "runs": list(runs.values()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
