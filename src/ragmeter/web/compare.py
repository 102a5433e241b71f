"""The dashboard's compare page: runs side by side, each run's difference from the first with
its CI, p-value and corrected p-value, and a chart of every metric per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.report import analysis
from ragmeter.report.common import metric_info, task_order_key
from ragmeter.store import Store, read

__all__ = ["MAX_COMPARE_RUNS", "compare_page"]

MAX_COMPARE_RUNS = 20
"""Runs one compare page puts side by side (each adds its metrics, tests and a chart series)."""


def _run_refs(params: Mapping[str, Any]) -> list[str]:
    refs: list[str] = []
    raw = params.get("runs")
    if raw:
        refs.extend(x.strip() for x in str(raw).split(",") if x.strip())
    extra = params.get("run")
    if isinstance(extra, (list, tuple)):
        refs.extend(x for x in extra if x)
    elif extra:
        refs.append(str(extra))
    return list(dict.fromkeys(refs))


def compare_page(store: Store, params: Mapping[str, Any], *, auto_test_rows: int) -> dict[str, Any]:
    """Runs side by side: every metric per run, and for each run after the first its
    difference from the first with CI, p-value and corrected p-value.

    A stored comparison (the run's own baseline test, ``docs/runner.md``, "Comparisons with the
    baseline") is shown where one exists for the pair. Otherwise the page runs a paired t-test
    on the samples both runs scored, in the database, with Holm's correction over the metrics of
    the pair; corpus-level metrics get the difference only, and the tests run by themselves only
    while they join at most ``auto_test_rows`` per-sample rows.
    """
    refs = _run_refs(params)
    recent = [
        {k: r[k] for k in ("id", "project", "system", "system_version", "created_at")}
        for r in store.list_runs(limit=30)
    ]
    base_page = {"page_kind": "compare", "refs": refs, "recent": recent, "charts": {}}
    if len(refs) < 2:
        return {**base_page, "runs": [], "rows": [], "message": "choose two or more runs"}
    if len(refs) > MAX_COMPARE_RUNS:
        raise UsageError(
            f"runs: {len(refs)} runs named (a compare page shows at most {MAX_COMPARE_RUNS})"
        )
    run_ids: list[str] = []
    for ref in refs:
        try:
            ids = [store.resolve_one(ref)]
        except UsageError as exc:
            raise read.NotFound(str(exc)) from None
        run_ids.extend(i for i in ids if i not in run_ids)
    if len(run_ids) < 2:
        raise UsageError("runs: name two or more different runs")
    runs = [store.get_run(rid, full=False) for rid in run_ids]
    for i, r in enumerate(runs):
        r["series"] = i
    overall = {rid: {(m["task"], m["metric"]): m for m in store.metrics(rid)} for rid in run_ids}
    tasks = {rid: {t["task"]: t for t in store.tasks(rid)} for rid in run_ids}
    stored = {rid: store.comparisons(rid) for rid in run_ids}
    for rid in run_ids:
        if stored[rid]:
            config = store.get_run(rid, full=True).get("config")
            for c in stored[rid]:
                c["ci_reason"] = analysis.ci_reason(c, config)
    order_key = task_order_key
    pairs: list[tuple[str, str]] = []
    for rid in run_ids:
        for t in sorted(tasks[rid], key=order_key):
            pairs.extend((t, m) for m in tasks[rid][t]["metrics"])
    for rid in run_ids:
        pairs.extend(sorted(overall[rid], key=lambda p: order_key(p[0])))
    pairs = [p for p in dict.fromkeys(pairs) if any(p in overall[rid] for rid in run_ids)]
    pairs.sort(key=lambda p: analysis.iprec_point(p[1]) is not None)  # the 11 points last
    ref_id = run_ids[0]
    mode = params.get("tests") or "auto"
    if mode not in ("auto", "all", "none"):
        raise UsageError(f"tests: {mode!r} (expected auto, all or none)")
    # an ad-hoc test joins the two runs' per-sample values: estimate how many rows that reads
    joined = sum(
        min(overall[ref_id][p]["n"], overall[rid][p]["n"])
        for rid in run_ids[1:]
        for p in pairs
        if p in overall[ref_id] and p in overall[rid] and not _stored(stored, ref_id, rid, p)
    )
    run_tests = mode == "all" or (mode == "auto" and joined <= auto_test_rows)
    rows = []
    with store.connect() as conn:
        keys = {rid: read.run_key(conn, rid, store.url) for rid in run_ids}
        for task, metric in pairs:
            info = metric_info(task, metric)
            cells = []
            for rid in run_ids:
                m = overall[rid].get((task, metric))
                cells.append(
                    {
                        "value": m["value"] if m else None,
                        "n": m["n"] if m else None,
                        "ci_low": m["ci_low"] if m else None,
                        "ci_high": m["ci_high"] if m else None,
                        "reason": (m["reason"] if m else "not in this run"),
                    }
                )
            flags = analysis.best_flags([c["value"] for c in cells], info["direction"])
            for c, best in zip(cells, flags, strict=True):
                c["best"] = best
            deltas = []
            for rid in run_ids[1:]:
                deltas.append(
                    _delta(conn, keys, stored, ref_id, rid, task, metric, info, overall, run_tests)
                )
            rows.append({**info, "cells": cells, "deltas": deltas})
    # Holm over each pair's ad-hoc tests (stored comparisons keep their own correction)
    for j in range(len(run_ids) - 1):
        adhoc = [r["deltas"][j] for r in rows if r["deltas"][j]["source"] == "ad hoc"]
        adjusted = analysis.holm([d["p_value"] for d in adhoc])
        for d, p in zip(adhoc, adjusted, strict=True):
            d["p_adjusted"] = p
            d["correction"] = f"holm over {sum(x['p_value'] is not None for x in adhoc)}"
            d["significant"] = p is not None and p <= 0.05
            d["verdict"] = _verdict(d, d["direction"])
    for r in rows:
        for d in r["deltas"]:
            if d["ci_reason"] is None and (d["ci_low"] is None or d["ci_high"] is None):
                d["ci_reason"] = "no CI"  # the reason is the row's own, shown with it
    charts = _compare_chart(rows, runs)
    return {
        **base_page,
        "runs": runs,
        "rows": rows,
        "charts": charts,
        "message": None,
        "tests": {
            "mode": mode,
            "ran": run_tests,
            "paired_rows": joined,
            "auto_limit": auto_test_rows,
        },
    }


def _stored(
    stored: Mapping[str, Sequence[Mapping[str, Any]]], a: str, b: str, pair: tuple[str, str]
) -> bool:
    return any(
        c["baseline_run_id"] == other and (c["task"], c["metric"]) == pair
        for run, other in ((b, a), (a, b))
        for c in stored[run]
    )


def _verdict(d: Mapping[str, Any], direction: str) -> str | None:
    if not d.get("significant") or d.get("mean_diff") is None:
        return None
    if direction not in ("higher", "lower"):
        return None
    return "better" if (d["mean_diff"] > 0) == (direction == "higher") else "worse"


def _delta(
    conn: Any,
    keys: Mapping[str, int],
    stored: Mapping[str, Sequence[Mapping[str, Any]]],
    ref_id: str,
    rid: str,
    task: str,
    metric: str,
    info: Mapping[str, Any],
    overall: Mapping[str, Mapping[tuple[str, str], Any]],
    run_test: bool,
) -> dict[str, Any]:
    """The difference rid − ref_id of one metric, from a stored comparison when there is one."""
    out: dict[str, Any] = {
        "run_id": rid,
        "direction": info["direction"],
        "source": None,
        "mean_diff": None,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "p_adjusted": None,
        "significant": None,
        "effect_size": None,
        "n": None,
        "test": None,
        "correction": None,
        "reason": None,
        "ci_reason": None,
        "verdict": None,
    }
    for c in stored[rid]:
        if c["baseline_run_id"] == ref_id and c["task"] == task and c["metric"] == metric:
            out.update({k: c.get(k) for k in out if k in c and k not in ("run_id", "direction")})
            out["source"] = "stored"
            out["verdict"] = _verdict(out, info["direction"])
            return out
    for c in stored[ref_id]:  # the reference was compared against rid: flip the sign
        if c["baseline_run_id"] == rid and c["task"] == task and c["metric"] == metric:
            flip = {
                "mean_diff": _neg(c.get("mean_diff")),
                "ci_low": _neg(c.get("ci_high")),
                "ci_high": _neg(c.get("ci_low")),
                "effect_size": _neg(c.get("effect_size")),
            }
            out.update({k: c.get(k) for k in ("p_value", "p_adjusted", "significant", "n", "test")})
            out.update(
                flip,
                correction=c.get("correction"),
                reason=c.get("reason"),
                ci_reason=c.get("ci_reason"),
            )
            out["source"] = "stored"
            out["verdict"] = _verdict(out, info["direction"])
            return out
    a, b = overall[ref_id].get((task, metric)), overall[rid].get((task, metric))
    if a is None or b is None or a["value"] is None or b["value"] is None:
        out["reason"] = "no value in one of the runs"
        return out
    if not isinstance(a["value"], (int, float)) or not isinstance(b["value"], (int, float)):
        out["reason"] = "not a number"
        return out
    out["mean_diff"] = b["value"] - a["value"]
    if info["level"] == "corpus":
        out["source"] = "difference"
        out["reason"] = "corpus-level metric: ragmeter compare resamples documents"
        return out
    if not run_test:
        out["source"] = "difference"
        out["reason"] = "paired test not run (large runs: compute paired tests)"
        return out
    n, sd, sd2 = read.paired_sums(conn, keys[ref_id], keys[rid], task, metric)
    if n == 0:
        out["source"] = "difference"
        out["reason"] = "no per-sample values scored by both runs"
        return out
    test = analysis.paired_t(n, sd, sd2)
    out.update({k: test[k] for k in ("mean_diff", "ci_low", "ci_high", "p_value", "effect_size")})
    out.update(n=n, test="paired t", reason=test["reason"], source="ad hoc")
    return out


def _neg(x: Any) -> Any:
    return -x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _compare_chart(rows: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]]) -> dict:
    """Grouped bars of the first metrics in [0, 1] (the asked-for ones come first)."""

    def unit_interval(r: Mapping[str, Any]) -> bool:
        values = [c["value"] for c in r["cells"] if isinstance(c["value"], (int, float))]
        if r["range"] != [None, None]:
            return r["range"] == [0.0, 1.0] and bool(values)
        return bool(values) and all(0.0 <= v <= 1.0 for v in values)  # not in this build's registry

    picked = [r for r in rows if analysis.iprec_point(r["metric"]) is None and unit_interval(r)]
    picked = picked[:12]
    if not picked:
        return {}
    return {
        "compare": {
            "kind": "bars",
            "title": "metrics side by side",
            "categories": [r["name"] for r in picked],
            "y_range": [0, 1],
            "series": [
                {
                    "label": run["system"]
                    + (f" {run['system_version']}" if run["system_version"] else ""),
                    "color": i,
                    "values": [
                        c["value"] if isinstance(c["value"], (int, float)) else None
                        for c in (r["cells"][i] for r in picked)
                    ],
                }
                for i, run in enumerate(runs)
            ],
        }
    }
