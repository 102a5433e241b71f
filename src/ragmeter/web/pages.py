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
from ragmeter.report.common import metric_info, parse_detail, record_summary, task_order_key
from ragmeter.report.view import build_report
from ragmeter.store import Store, read
from ragmeter.store.rows import RUN_FIELDS, iso
from ragmeter.web import compare
from ragmeter.web.compare import MAX_COMPARE_RUNS  # noqa: F401  (its old home)

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
    with store.connect() as conn:
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
    with store.connect() as conn:
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
    with store.connect() as conn:
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
        with store.connect() as conn:
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
                if text is None and resp.get("fault"):  # a reply the judge did not keep
                    text = f"(reply not kept) {resp['fault']}"
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
                "tooltip": info["tooltip"],
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


# -- /trends ----------------------------------------------------------------------------------
def trends_page(store: Store, params: Mapping[str, str]) -> dict[str, Any]:
    """A metric over time per system in one project, each point labelled with the version."""
    with store.connect() as conn:
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


# -- /compare ---------------------------------------------------------------------------------
def compare_page(store: Store, params: Mapping[str, Any]) -> dict[str, Any]:
    """Runs side by side (see :func:`ragmeter.web.compare.compare_page`), with the ad-hoc tests
    run by themselves up to :data:`AUTO_TEST_ROWS` joined rows."""
    return compare.compare_page(store, params, auto_test_rows=AUTO_TEST_ROWS)
