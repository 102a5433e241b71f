"""The rich summary ``ragmeter run`` prints: metric tables per task, strata, comparisons, gates.

Command-line presentation, so it lives in ``cli`` (it was ``ragmeter.runner.display``); the
runner computes the summary dict it prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragmeter.cli.console import decimals, make_console, styled

__all__ = ["print_gate_report", "print_summary"]

VERDICT_STYLE = {"PASS": "bold green", "FAIL": "bold red", "SKIP": "yellow"}


def _cell(agg: Mapping[str, Any] | None, marker: str = "") -> Text:
    if agg is None:
        return Text("–", style="dim")
    if agg.get("value") is None:
        return Text(f"n/a ({agg.get('reason') or 'undefined'})", style="dim")
    text = Text(decimals(agg["value"]))
    if agg.get("ci_low") is not None and agg.get("ci_high") is not None:
        text.append(f" [{agg['ci_low']:.3f}, {agg['ci_high']:.3f}]", style="dim")
    if marker:
        text.append(" " + marker, style="bold green" if marker.startswith("▲") else "bold red")
    return text


def _marker(comp: Mapping[str, Any] | None, direction: str) -> str:
    if not comp or not comp.get("significant"):
        return ""
    diff = comp.get("mean_diff") or 0.0
    better = diff < 0 if direction == "lower" else diff > 0
    return "▲" if better else "▼"


def _direction(task: str, metric: str) -> str:
    from ragmeter import registry

    try:
        return registry.resolve(metric, task=task).definition.direction
    except (registry.UnknownMetricError, ValueError):
        return "higher"


def print_summary(summary: Mapping[str, Any], console: Console | None = None) -> None:
    """Print a run's summary (the dict ``EvaluationResult.summary``)."""
    console = console or make_console()
    systems = [s["name"] for s in summary["systems"]]
    baseline = summary.get("baseline")
    ds = summary["dataset"]
    split = f", split {ds['split']}" if ds.get("split") else ""
    console.print(
        styled(
            (str(summary["project"]), "bold"),
            f"  evaluation {summary['evaluation_id']}  "
            f"· {ds['n_samples']} gold samples ({ds['path']}{split})",
        )
    )
    for s in summary["systems"]:
        if s.get("calls"):  # a live system: what its calls cost (docs/systems.md)
            # styled pieces, not markup: the console prints strings as they are
            pieces: list[str | tuple[str, str]] = [f"{s['name']}: "]
            for i, (m, v) in enumerate(s["calls"].items()):
                pieces.append(
                    f"{' · ' if i else ''}{m} {v['calls']} calls, {v['cache_hits']} cached"
                )
                if v["errors"]:
                    pieces += [", ", (f"{v['errors']} failed", "red")]
            console.print(styled(*pieces), highlight=False)
    comps: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for c in summary.get("comparisons", []):
        if c.get("baseline") == baseline:
            comps[(c["system"], c["task"], c["metric"])] = c
    skipped: list[str] = []
    for task, block in summary["tasks"].items():
        metrics = block["metrics"]
        shown = dict(zip(block["metrics"], block["requested"], strict=False))
        table = Table(title=styled((task, "bold")), title_justify="left", show_lines=False)
        table.add_column("metric")
        active = [s for s in systems if block["systems"].get(s, {}).get("aggregates") is not None]
        for name in active:
            label = f"{name} (baseline)" if name == baseline else name
            table.add_column(label, justify="right")
        table.add_column("n", justify="right", style="dim")
        reasons = {
            name: entry["reason"]
            for name, entry in block["systems"].items()
            if entry["status"] == "skipped"
        }
        if reasons and len(reasons) == len(systems) and len(set(reasons.values())) == 1:
            skipped.append(f"{task}: {next(iter(reasons.values()))}")
        else:
            skipped.extend(f"{task} · {name}: {why}" for name, why in reasons.items())
        if not active or all(block["systems"][name]["status"] == "skipped" for name in active):
            continue
        for metric in metrics:
            row: list[Any] = [shown.get(metric, metric)]
            n_values = []
            for name in active:
                agg = block["systems"][name]["aggregates"].get(metric)
                marker = ""
                if name != baseline:
                    marker = _marker(comps.get((name, task, metric)), _direction(task, metric))
                row.append(_cell(agg, marker))
                if agg is not None:
                    n_values.append(str(agg.get("n", "")))
            row.append("/".join(dict.fromkeys(n_values)))
            table.add_row(*row)
        console.print(table)
    if skipped:
        console.print("skipped", style="yellow")
        for line in dict.fromkeys(skipped):
            console.print(f"  {line}", highlight=False, soft_wrap=True)
    _print_strata(summary, systems, console)
    _print_comparisons(summary, console)
    gates = summary.get("gates") or {}
    if gates.get("rules"):
        print_gate_report(gates, console)
    for note in summary.get("comparison_notes", []):
        console.print(note, style="dim")
    saved = summary.get("saved") or {}
    if saved:
        if saved.get("results_dir"):
            console.print(f"results: {saved['results_dir']}/", highlight=False, soft_wrap=True)
        if saved.get("store"):
            runs = ", ".join(saved.get("run_ids", []))
            console.print(
                f"store:   {saved['store']}  (runs {runs})", highlight=False, soft_wrap=True
            )


def _print_strata(summary: Mapping[str, Any], systems: Sequence[str], console: Console) -> None:
    """One table per factor: the first metric of each task (rows) by stratum value (columns),
    each cell the systems' values in order."""
    factors = summary.get("stratify_by") or []
    if not factors:
        return
    heads = []  # (task, metric, shown) of each evaluated task's first metric
    for task, block in summary["tasks"].items():
        if block["metrics"] and any(e.get("status") == "ok" for e in block["systems"].values()):
            heads.append((task, block["metrics"][0], block["requested"][0]))
    max_levels = 8
    for factor in factors:
        levels: list[str] = []
        for task, _, _ in heads:
            for s in systems:
                entry = summary["tasks"][task]["systems"].get(s, {})
                levels.extend(entry.get("strata", {}).get(factor, {}))
        levels = sorted(dict.fromkeys(levels))
        if not levels:
            continue
        shown_levels = levels[:max_levels]
        table = Table(
            title=styled((f"by {factor}", "bold"), f"  ({' / '.join(systems)})"),
            title_justify="left",
        )
        table.add_column("metric")
        for level in shown_levels:
            table.add_column(level, justify="right")
        for task, metric, shown in heads:
            row = [f"{task}.{shown}"]
            for level in shown_levels:
                parts = []
                for s in systems:
                    strata = summary["tasks"][task]["systems"].get(s, {}).get("strata", {})
                    agg = strata.get(factor, {}).get(level, {}).get(metric)
                    parts.append(decimals(agg.get("value") if agg else None, 3))
                row.append("/".join(parts))
            table.add_row(*row)
        console.print(table)
        if len(levels) > max_levels:
            console.print(
                f"{len(levels) - max_levels} more {factor} values in summary.json", style="dim"
            )


def _print_comparisons(summary: Mapping[str, Any], console: Console) -> None:
    every = summary.get("comparisons") or []
    comps = [c for c in every if c.get("p_value") is not None]
    if not comps:
        return
    untested = len(every) - len(comps)
    with_ci = any(c.get("ci_low") is not None for c in comps)
    first = comps[0]
    table = Table(
        title=styled(
            (f"vs {summary.get('baseline')}", "bold"),
            f"  ({first.get('test')} test, "
            f"{first.get('correction')} correction, alpha {first.get('alpha')})",
        ),
        title_justify="left",
    )
    columns = [("system", "left"), ("metric", "left"), ("difference", "right")]
    if with_ci:
        columns.append(("95% CI", "right"))
    columns += [("p", "right"), ("p adj.", "right"), ("d_z", "right"), ("", "left")]
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for c in comps:
        if c.get("baseline") != summary.get("baseline"):
            continue
        ci = (
            f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
            if c.get("ci_low") is not None and c.get("ci_high") is not None
            else ""
        )
        sig = Text("significant", style="bold") if c.get("significant") else Text("")
        cells: list[Any] = [
            c["system"],
            f"{c['task']}.{c['metric']}",
            "–" if c.get("mean_diff") is None else f"{c['mean_diff']:+.4f}",
        ]
        if with_ci:
            cells.append(ci)
        cells += [
            decimals(c.get("p_value")),
            decimals(c.get("p_adjusted")),
            decimals(c.get("effect_size"), 2),
        ]
        table.add_row(*cells, sig)
    console.print(table)
    if untested:
        console.print(f"{untested} comparisons not tested (reasons in summary.json)", style="dim")


def _short(text: str, limit: int = 70) -> str:
    """A reason trimmed for a table cell (``--json`` has it in full)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def print_gate_report(gates: Mapping[str, Any], console: Console | None = None) -> None:
    """Print gate outcomes (``GateReport.to_dict()``), one row per rule and run."""
    console = console or make_console()
    table = Table(title=styled(("gates", "bold")), title_justify="left")
    for col in ("rule", "system", "value", "threshold / p", "verdict", "reason"):
        table.add_column(
            col,
            justify="right" if col in ("value", "threshold / p") else "left",
            no_wrap=col in ("rule", "system", "verdict"),
        )
    for o in gates["rules"]:
        if o["kind"] == "no_regression":
            value = "–" if o.get("value") is None else f"{o['value']:+.4f}"
            thr = "–" if o.get("p_value") is None else f"p={o['p_value']:.4g}"
        else:
            value = decimals(o.get("value"))
            thr = "–" if o.get("threshold") is None else f"{o['threshold']:g}"
        table.add_row(
            o["rule"],
            o.get("system") or "",
            value,
            thr,
            Text(o["verdict"], style=VERDICT_STYLE.get(o["verdict"], "")),
            _short(o.get("reason") or ""),
        )
    console.print(table)
    counts = gates.get("counts", {})
    verdict = "PASS" if gates.get("passed") else "FAIL"
    console.print(
        Text(f"gates: {verdict}", style=VERDICT_STYLE[verdict])
        + Text(
            f"  ({counts.get('PASS', 0)} pass, {counts.get('FAIL', 0)} fail, "
            f"{counts.get('SKIP', 0)} skip)"
        )
    )
