"""The dashboard's pages as JSON-ready dicts (``docs/dashboard.md``, "Pages and URLs").

Each function reads the store and returns what one page shows; the app renders it with a
template or returns it as JSON. Nothing here imports Starlette, so the pages are tested without
a server. Query parameters arrive as plain strings and are validated here: a bad one raises
:class:`~ragmeter.errors.UsageError` (400), an unknown run or sample
:class:`~ragmeter.store.read.NotFound` (404).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from ragmeter.errors import InputError, UsageError
from ragmeter.report import analysis
from ragmeter.report.view import (
    build_report,
    metric_info,
    parse_detail,
    record_summary,
    task_order_key,
)
from ragmeter.store import Store, read
from ragmeter.store.store import RUN_FIELDS, iso

if TYPE_CHECKING:
    from ragmeter.judge.cache import CacheReader

__all__ = ["check_params", "compare_page", "run_page", "runs_page", "sample_page", "trends_page"]

PER_PAGE = 50
MAX_PER_PAGE = 500
HEADLINE_COLUMNS = 6
DERIVE_LIMIT = 30_000
"""Above this many per-sample details, a run page counts a confusion matrix or NER errors that
the engine did not store only on request (``?derive=all``)."""
AUTO_TEST_ROWS = 100_000
"""The compare page runs ad-hoc paired tests by itself only while they join at most this many
per-sample rows (about 0.5 s on SQLite); above, a link runs them on request."""


MAX_PARAM_CHARS = 1_000
"""Longest query-parameter value a page accepts: a search, a run id or a list of them is far
shorter, and a longer one only makes the database work (a LIKE pattern of 100,000 characters)."""
MAX_PARAMS = 50
MAX_COMPARE_RUNS = 20
"""Runs one compare page puts side by side (each adds its metrics, tests and a chart series)."""


def check_params(items: Sequence[tuple[str, str]]) -> None:
    """Bound every page's query string before any work is done (a bad one is a 400)."""
    if len(items) > MAX_PARAMS:
        raise UsageError(f"{len(items)} query parameters (expected at most {MAX_PARAMS})")
    for name, value in items:
        if len(value) > MAX_PARAM_CHARS or len(name) > MAX_PARAM_CHARS:
            shown = name if len(name) <= 40 else name[:40] + "..."
            raise UsageError(
                f"{shown}: {max(len(value), len(name)):,} characters long "
                f"(expected at most {MAX_PARAM_CHARS:,})"
            )


def _int(params: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)  # type: ignore[arg-type]
    except ValueError:
        raise UsageError(f"{name}: {raw!r} is not a whole number") from None
    if not lo <= value <= hi:
        raise UsageError(f"{name}: {value} is out of range (expected {lo} to {hi})")
    return value


def _date(params: Mapping[str, str], name: str) -> datetime | None:
    raw = params.get(name)
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(f"{name}: {raw!r} is not a date (expected YYYY-MM-DD)") from None
    if value.tzinfo is not None:
        try:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:  # 9999-12-31T23:00-05:00 is past the last representable day
            raise UsageError(
                f"{name}: {raw!r} is out of range (expected a date from 0001-01-02 to 9999-12-30)"
            ) from None
    return value


def _pager(page: int, per_page: int, total: int) -> dict[str, Any]:
    pages = max(1, math.ceil(total / per_page))
    return {
        "page": page,
        "per_page": per_page,
        "total": total,
        "pages": pages,
        "prev": page - 1 if page > 1 else None,
        "next": page + 1 if page < pages else None,
        "first_row": (page - 1) * per_page + 1 if total else 0,
        "last_row": min(page * per_page, total),
    }


def _run_fields(row: Any) -> dict[str, Any]:
    """A ``runs`` row as ``Store.list_runs`` returns it."""
    import json

    out = {name: getattr(row, name) for name in RUN_FIELDS}
    out["created_at"] = iso(row.created_at)
    out["finished_at"] = iso(row.finished_at)
    out["tags"] = json.loads(row.tags) if row.tags else []
    out["is_baseline"] = bool(row.is_baseline)
    return out


def _must_exist(store: Store, run_id: str) -> None:
    with store.engine.connect() as conn:
        read.run_key(conn, run_id, store.url)


# -- / ----------------------------------------------------------------------------------------
def runs_page(store: Store, params: Mapping[str, str]) -> dict[str, Any]:
    """Runs newest first, filtered by project, system, tag and date, with headline metrics."""
    filters = {k: (params.get(k) or None) for k in ("project", "system", "tag")}
    since, until = _date(params, "since"), _date(params, "until")
    if until is not None and len(params.get("until", "")) <= 10:
        try:
            until = until + timedelta(days=1)  # a date means "up to the end of that day"
        except OverflowError:  # 9999-12-31 has no next day in Python's calendar
            raise UsageError(
                f"until: {params['until']!r} is out of range (expected a date up to 9999-12-30)"
            ) from None
    per_page = _int(params, "per_page", PER_PAGE, 1, MAX_PER_PAGE)
    page = _int(params, "page", 1, 1, 10**9)
    with store.engine.connect() as conn:
        rows, total = read.list_runs(
            conn,
            limit=per_page,
            offset=(page - 1) * per_page,
            since=since,
            until=until,
            **filters,
        )
        keys = [r.key for r in rows]
        firsts = read.first_metrics(conn, keys)
        headline: list[tuple[str, str]] = []
        for key in keys:
            for pair in firsts.get(key, []):
                if pair not in headline:
                    headline.append(pair)
        first_seen = {pair: i for i, pair in enumerate(headline)}
        headline = sorted(headline, key=lambda p: (task_order_key(p[0]), first_seen[p]))
        headline = headline[:HEADLINE_COLUMNS]
        values = read.headline_rows(conn, keys, headline)
        options = {
            "projects": read.distinct(conn, "project"),
            "systems": read.distinct(conn, "system"),
            "tags": read.all_tags(conn),
        }
    runs = []
    for r in rows:
        d = _run_fields(r)
        d["headline"] = [values.get(r.key, {}).get(pair) for pair in headline]
        runs.append(d)
    return {
        "page_kind": "runs",
        "filters": {
            **filters,
            "since": params.get("since") or None,
            "until": params.get("until") or None,
        },
        "options": options,
        "headline": [{"task": t, "metric": m, "name": f"{t}.{m}"} for t, m in headline],
        "runs": runs,
        "pager": _pager(page, per_page, total),
        "charts": {},
    }


# -- /runs/<id> -------------------------------------------------------------------------------
class ReportCache:
    """The report part of recently viewed run pages, so that paging, sorting and searching the
    per-sample table does not recompute histograms and error analysis. A stored run never
    changes, and the key holds the run's row key as well as its id, so an entry cannot
    outlive its run."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...], build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key]
        value = build()
        with self.lock:
            self.entries[key] = value
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
        return value


def run_page(
    store: Store, run_id: str, params: Mapping[str, str], *, cache: ReportCache | None = None
) -> dict[str, Any]:
    """The report of one run plus its per-sample table (paged, sorted and searched in SQL)."""
    with store.engine.connect() as conn:
        run_key = read.run_key(conn, run_id, store.url)
    worst = _int(params, "worst", 5, 1, 50)
    derive = params.get("derive") or ""
    if derive not in ("", "all"):
        raise UsageError(f"derive: {derive!r} (expected all)")
    limit = None if derive == "all" else DERIVE_LIMIT

    def build() -> dict[str, Any]:
        return build_report(store, [run_id], worst=worst, derive_limit=limit)

    key = (store.url, run_key, run_id, worst, limit)
    view = dict(cache.get(key, build) if cache else build())
    series = view["series"]
    wanted = params.get("series") or ""
    selected = next((s for s in series if s["name"] == wanted), None)
    if wanted and selected is None:
        raise UsageError(
            f"series: run {run_id!r} has no per-sample values for {wanted!r}"
            + (f" (expected one of {', '.join(s['name'] for s in series[:8])})" if series else "")
        )
    if selected is None and series:
        selected = series[0]
    sort = params.get("sort") or "sample_id"
    if sort not in read.SORTS:
        raise UsageError(f"sort: {sort!r} (expected one of {', '.join(read.SORTS)})")
    order = params.get("order") or "asc"
    if order not in ("asc", "desc"):
        raise UsageError(f"order: {order!r} (expected asc or desc)")
    per_page = _int(params, "per_page", PER_PAGE, 1, MAX_PER_PAGE)
    page = _int(params, "page", 1, 1, 10**9)
    search = (params.get("q") or "").strip() or None
    status = params.get("status") or None
    rows: list[dict[str, Any]] = []
    total = 0
    if selected is not None:
        with store.engine.connect() as conn:
            key = read.run_key(conn, run_id, store.url)
            rows, total = read.sample_page(
                conn,
                key,
                selected["task"],
                selected["metric"],
                search=search,
                search_records=params.get("fields") == "all",
                status=status,
                sort=sort,
                descending=order == "desc",
                limit=per_page,
                offset=(page - 1) * per_page,
            )
        for r in rows:
            d = parse_detail(r.pop("detail"))
            r["reason"] = d["reason"]
            r["explanation"] = d["explanation"]
            r["fields"] = d["fields"]
    view.update(
        {
            "page_kind": "run",
            "run": view["runs"][0],
            "samples": {
                "series": series,
                "selected": selected,
                "q": search,
                "fields": "all" if params.get("fields") == "all" else "ids",
                "status": status,
                "sort": sort,
                "order": order,
                "rows": rows,
                "pager": _pager(page, per_page, total),
            },
        }
    )
    return view


# -- /runs/<id>/samples/<sample-id> -----------------------------------------------------------
NO_CACHE_GIVEN = "no judge cache given (ragmeter serve --judge-cache PATH shows these calls)"
ENTRY_PRUNED = "not in the judge cache (pruned, or the run used another cache file)"
NO_REQUEST = "prompt not stored (the judge ran with cache_requests off)"


def _judge_calls(
    values: Sequence[dict[str, Any]], reader: CacheReader | None
) -> dict[str, Any] | None:
    """Resolve each value's ``cache_keys`` into ``judge_calls`` (stage, prompt messages,
    response text) from the judge cache, read-only; returns the cache's state for the page, or
    ``None`` when no value has any."""
    keys = [ref["key"] for v in values for ref in v["cache_keys"]]
    if not keys:
        return None
    state: dict[str, Any] = {"path": None if reader is None else str(reader.path)}
    entries: dict[str, dict[str, Any]] = {}
    if reader is None:
        state.update(status="off", message=NO_CACHE_GIVEN)
    else:
        try:
            entries = reader.lookup(keys)
            state.update(status="ok", message=None)
        except FileNotFoundError:
            state.update(status="missing", message=f"judge cache not found at {reader.path}")
        except InputError as exc:
            state.update(status="unreadable", message=str(exc))
    for v in values:
        calls = []
        for ref in v["cache_keys"]:
            entry = entries.get(ref["key"])
            call: dict[str, Any] = {
                "stage": str(ref.get("stage") or ""),
                "kind": str(ref.get("kind") or "call"),
                "repeat": ref.get("repeat") if isinstance(ref.get("repeat"), int) else 0,
                "key": ref["key"],
                "found": entry is not None,
                "messages": None,
                "response": None,
                "finish_reason": None,
                "model": None,
                "valid": None,
                "note": None,
            }
            if entry is not None:
                resp = entry["response"] if isinstance(entry["response"], dict) else {}
                text = resp.get("text")
                if text is None and resp.get("refusal"):
                    text = f"(refusal) {resp['refusal']}"
                messages = entry["messages"]
                call.update(
                    messages=[
                        {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
                        for m in messages
                        if isinstance(m, dict)
                    ]
                    if isinstance(messages, list)
                    else None,
                    response=None if text is None else str(text),
                    finish_reason=resp.get("finish_reason"),
                    model=resp.get("model") or entry["model"],
                    valid=entry["valid"],
                    note=None if isinstance(messages, list) else NO_REQUEST,
                )
            elif state["status"] == "ok":
                call["note"] = ENTRY_PRUNED
            calls.append(call)
        v["judge_calls"] = calls
        v["judge_cache_note"] = state["message"] if calls else None
    return state


def sample_page(
    store: Store, run_id: str, sample_id: str, *, judge_cache: CacheReader | None = None
) -> dict[str, Any]:
    """One unit: its inputs, gold and outputs per task, every metric with its reason and the
    judge's explanation, and each judge call's prompt and reply looked up by the cache keys its
    detail records in ``judge_cache`` (read-only; a line says when the cache or an entry is
    missing)."""
    _must_exist(store, run_id)
    run = store.get_run(run_id, full=False)
    try:
        data = store.sample(run_id, sample_id)
    except UsageError as exc:
        raise read.NotFound(str(exc)) from None
    tasks: dict[str, dict[str, Any]] = {}
    for task, rec in data["records"].items():
        tasks.setdefault(task, {"task": task, "record": rec, "values": []})
    for v in data["values"]:
        entry = tasks.setdefault(v["task"], {"task": v["task"], "record": None, "values": []})
        info = metric_info(v["task"], v["metric"])
        entry["values"].append(
            {
                "metric": v["metric"],
                "name": info["name"],
                "direction": info["direction"],
                "value": v["value"],
                "status": v["status"],
                **parse_detail(v["detail"]),
                "judge_calls": [],
                "judge_cache_note": None,
            }
        )
    asked = {t["task"]: t["metrics"] for t in store.tasks(run_id)}
    for t in tasks.values():
        names = asked.get(t["task"], [])
        t["values"].sort(
            key=lambda v, names=names: (
                analysis.iprec_point(v["metric"]) is not None,
                names.index(v["metric"]) if v["metric"] in names else len(names),
                v["metric"],
            )
        )
    ordered = sorted(tasks.values(), key=lambda t: task_order_key(t["task"]))
    for t in ordered:
        t["summary"] = record_summary(t["record"])
    cache_state = _judge_calls([v for t in ordered for v in t["values"]], judge_cache)
    for t in ordered:
        for v in t["values"]:
            del v["cache_keys"]  # resolved into judge_calls
    return {
        "page_kind": "sample",
        "run": run,
        "sample_id": sample_id,
        "tasks": ordered,
        "judge_cache": cache_state,
        "charts": {},
    }


# -- /compare ---------------------------------------------------------------------------------
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


def compare_page(store: Store, params: Mapping[str, Any]) -> dict[str, Any]:
    """Runs side by side: every metric per run, and for each run after the first its
    difference from the first with CI, p-value and corrected p-value.

    A stored comparison (the run's own baseline test, ``docs/runner.md``, "Comparisons
    with the baseline") is shown where one
    exists for the pair. Otherwise the page runs a paired t-test on the samples both runs
    scored, in the database, with Holm's correction over the metrics of the pair; corpus-level
    metrics get the difference only.
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
    run_tests = mode == "all" or (mode == "auto" and joined <= AUTO_TEST_ROWS)
    rows = []
    with store.engine.connect() as conn:
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
            "auto_limit": AUTO_TEST_ROWS,
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


# -- /trends ----------------------------------------------------------------------------------
def trends_page(store: Store, params: Mapping[str, str]) -> dict[str, Any]:
    """A metric over time per system in one project, each point labelled with the version."""
    with store.engine.connect() as conn:
        projects = read.distinct(conn, "project")
        project = params.get("project") or (projects[0] if len(projects) == 1 else None)
        available = read.project_metrics(conn, project) if project else []
    order_key = task_order_key
    available.sort(key=lambda p: (order_key(p[0]), p[1]))
    names = [f"{t}.{m}" for t, m in available]
    asked = params.get("metric") or ""
    page: dict[str, Any] = {
        "page_kind": "trends",
        "project": project,
        "projects": projects,
        "metric": asked or None,
        "metrics": names,
        "system": params.get("system") or None,
        "points": [],
        "systems": [],
        "charts": {},
    }
    if project and project not in projects:
        raise read.NotFound(f"no project {project!r} in {store.url}")
    if not project or not asked:
        return page
    task, metric = _split_metric(asked, available)
    points = store.trends(project, task, metric)
    if page["system"]:
        points = [p for p in points if p["system"] == page["system"]]
    systems = list(dict.fromkeys(p["system"] for p in points))
    times = sorted({p["created_at"] for p in points})
    xs = [_epoch(t) for t in times]
    series = []
    for i, name in enumerate(systems):
        mine = {p["created_at"]: p for p in points if p["system"] == name}
        series.append(
            {
                "label": name,
                "color": i,
                "values": [mine[t]["value"] if t in mine else None for t in times],
                "point_labels": [mine[t]["system_version"] if t in mine else None for t in times],
            }
        )
    page.update(
        {
            "task": task,
            "metric_name": metric,
            "metric": f"{task}.{metric}",
            "points": points,
            "systems": systems,
        }
    )
    if points:
        info = metric_info(task, metric)
        page["charts"] = {
            "trend": {
                "kind": "lines",
                "title": f"{task}.{metric} in {project}",
                "x": xs,
                "x_time": True,
                "x_label": "run created (UTC)",
                "y_label": f"{task}.{metric}",
                "y_range": info["range"] if info["range"] == [0.0, 1.0] else [None, None],
                "series": series,
            }
        }
    return page


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _split_metric(name: str, available: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """``task.metric`` (any alias the registry knows) to the stored canonical pair."""
    from ragmeter import registry

    try:
        task, metric = registry.split_name(name)
    except UsageError as exc:
        raise UsageError(f"metric: {exc}") from None
    if (task, metric) in available:
        return task, metric
    try:
        canonical = registry.resolve(metric, task=task).canonical
    except Exception:
        canonical = metric
    if (task, canonical) in available:
        return task, canonical
    close = registry.suggest(name, [f"{t}.{m}" for t, m in available], n=2)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UsageError(f"metric: no run of this project has a value of {name!r}{hint}")
