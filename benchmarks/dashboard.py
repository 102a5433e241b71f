"""Speed of the dashboard and the HTML report (issue 9 targets; benchmarks/README.md).

    python -m benchmarks.dashboard [--repeat 7] [--store URL] [--rebuild] [--samples 100000]

Targets: with 1,000 runs in the store and a run of 100,000 samples, every page answers in under
0.5 s server-side; the report of that run is written in under 10 s.

The store (``benchmarks/data/dashboard/store.db``, built once and kept; ``--rebuild`` redoes it)
holds 1,000 runs written through ``ragmeter.store``: 998 small runs (50 samples, retrieval and
answers) of three projects and five systems over two years, and one evaluation of two systems on
100,000 gold samples with every task the report analyses:

- retrieval: nDCG@10, RR, P@5, R@100 and the 11 IPrec@r points per query (15 series);
- answers: em, f1, rouge-l; judge: faithfulness with a JSON explanation per sample;
- classification: accuracy with {"gold", "pred"} details (confusion matrix from the details);
- ner: strict, exact and type precision/recall/f1 per document, counts as JSON details;

each with a record (input, gold, output) per unit, per-stratum aggregates (3 factors),
comparisons against the baseline and gate outcomes: 2 × 2.9 million per-sample rows.

Every page is requested ``--repeat`` times in this process through Starlette's test client;
the figure is the app's own time to the response headers (the ``Server-Timing`` header), median
and max, next to the wall time of the request. There is no anchor implementation of this
dashboard to run side by side (the comparable tools' dashboards are hosted services), so the
ratio printed is against the budget: budget / median (above 1 is within the target).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DATA = Path(__file__).resolve().parent / "data" / "dashboard"
FORMAT = "dashboard-bench/2"
PAGE_BUDGET_S = 0.5
REPORT_BUDGET_S = 10.0
IPREC = [f"IPrec@{r / 10:.1f}" for r in range(11)]
LABELS = ["A", "G", "L", "M", "R", "S", "U", "X"]
PROJECTS = ["heritage-rag", "archive-search", "library-qa"]
SYSTEMS = ["bm25-v3", "hybrid-v1", "dense-e5", "colbert", "rerank-xl"]
BIG_PROJECT = "national-heritage-100k"


def _result(task: str, ids: list[str], columns: dict[str, np.ndarray], **kw: Any) -> Any:
    """A Result built from already sorted ids without per-row Python work (status ok)."""
    from ragmeter.result import Aggregate, Result

    n = len(ids)
    details: dict[str, list[str] | None] = kw.pop("details", {})
    statuses: dict[str, np.ndarray] = kw.pop("statuses", {})
    aggregates = dict(kw.pop("aggregates", {}))
    parts = []
    for metric, values in columns.items():
        status = statuses.get(metric)
        status_arr = pa.array(status if status is not None else ["ok"] * n, pa.string())
        scored = (
            np.ones(n, dtype=bool) if status is None else np.isin(status, ["ok", "missing_zeroed"])
        )
        vals = np.where(scored, values, np.nan)
        parts.append(
            pa.table(
                {
                    "id": pa.array(ids, pa.string()),
                    "metric": pa.array([metric] * n, pa.string()),
                    "value": pa.array(vals, pa.float64(), from_pandas=True),
                    "status": status_arr,
                    "detail": pa.array(details.get(metric) or [None] * n, pa.string()),
                }
            )
        )
        if metric not in aggregates:
            v = vals[scored]
            counts = {"ok": int(scored.sum())}
            if status is not None:
                counts = {s: int((status == s).sum()) for s in np.unique(status)}
            half = 1.96 * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else None
            mean = float(v.mean()) if len(v) else None
            aggregates[metric] = Aggregate(
                mean,
                int(scored.sum()),
                counts,
                None if half is None else mean - half,
                None if half is None else mean + half,
                None if len(v) else "no scored samples",
            )
    table = pa.concat_tables(parts) if parts else None
    return Result(task, table, aggregates, **kw)


def _strata(result: Any, levels: dict[str, np.ndarray], metrics: list[str]) -> None:
    from ragmeter.result import Aggregate

    out: dict[str, dict[str, dict[str, Any]]] = {}
    values = {
        m: result.samples.filter(pc.equal(result.samples["metric"], m))["value"].to_numpy(
            zero_copy_only=False
        )
        for m in metrics
    }
    for factor, lv in levels.items():
        per: dict[str, dict[str, Any]] = {}
        for level in np.unique(lv):
            mask = lv == level
            for m in metrics:
                v = values[m][mask]
                v = v[~np.isnan(v)]
                per.setdefault(str(level), {})[m] = Aggregate(
                    float(v.mean()) if len(v) else None,
                    len(v),
                    {"ok": len(v)},
                    reason=None if len(v) else "no scored samples",
                )
        out[factor] = per
    result.strata = out


def make_run(
    run_id: str,
    evaluation: str,
    project: str,
    system: str,
    version: str,
    created: datetime,
    n: int,
    quality: float,
    seed: int,
    *,
    full: bool,
    baseline: str | None = None,
    engine_metadata: bool = True,
) -> Any:
    """One run with ``n`` samples (``full``: every task, else retrieval and answers)."""
    from ragmeter.store import RunRecord, SampleRecord, TaskRecord

    rng = np.random.default_rng(seed)
    width = max(5, len(str(n - 1)))
    sids = [f"s{i:0{width}d}" for i in range(n)]
    qids = [f"{s}-q1" for s in sids]
    difficulty = np.random.default_rng(12345).uniform(-0.3, 0.3, n)  # same for every system
    skill = np.clip(quality - difficulty + rng.normal(0, 0.12, n), 0, 1)
    levels = {
        "custodian_type": np.array(["M", "A", "L", "G"])[np.arange(n) % 4],
        "country": np.array(["NL", "BE", "DE", "FR", "LU"])[(np.arange(n) // 4) % 5],
        "data_tier": np.array(["1", "2", "3"])[(np.arange(n) // 20) % 3],
    }
    strata_rows = [
        {f: str(levels[f][i]) for f in levels} for i in range(n)
    ]  # shared by every record of a sample
    tasks: list[Any] = []
    # retrieval
    cols = {
        "nDCG@10": np.round(skill, 6),
        "RR": np.where(
            skill > 0.55, 1.0, np.where(skill > 0.3, 0.5, np.where(skill > 0.1, 0.25, 0.0))
        ),
        "P@5": np.round(np.clip(skill + rng.normal(0, 0.1, n), 0, 1) * 5) / 5,
        "R@100": np.round(np.clip(skill + 0.3, 0, 1), 6),
    }
    ip = np.minimum.accumulate(
        np.clip(skill[:, None] + 0.25 - np.linspace(0, 1, 11)[None, :] * 0.9, 0, 1), axis=1
    )
    for j, name in enumerate(IPREC):
        cols[name] = np.round(ip[:, j], 6)
    res = _result("retrieval", qids, cols)
    _strata(res, levels, ["nDCG@10", "RR"])
    records = [
        SampleRecord(
            q,
            s,
            strata_rows[i],
            {
                "input": {"question": f"When was institution {i} founded?"},
                "gold": {"relevant": {f"doc-{i}": 2}},
                "output": {"ranking": [f"doc-{(i + k * 7) % n}" for k in range(5)]},
            },
        )
        for i, (q, s) in enumerate(zip(qids, sids, strict=True))
    ]
    tasks.append(
        TaskRecord(
            "retrieval",
            "ok",
            metrics=["nDCG@10", "RR", "P@5", "R@100", *IPREC],
            result=res,
            records=records,
        )
    )
    # answers
    right = skill > 0.45
    f1 = np.where(right, 1.0, np.round(0.2 + 0.4 * skill, 6))
    res = _result(
        "answers", qids, {"em": right.astype(float), "f1": f1, "rouge-l": np.minimum(1.0, f1 + 0.1)}
    )
    _strata(res, levels, ["em", "f1"])
    answers = [f"It was founded in {1800 + (i % 190) + (0 if right[i] else 1)}." for i in range(n)]
    records = [
        SampleRecord(
            q,
            s,
            strata_rows[i],
            {
                "input": {"question": f"When was institution {i} founded?"},
                "gold": {"answers": [str(1800 + i % 190)]},
                "output": {"answer": answers[i]},
            },
        )
        for i, (q, s) in enumerate(zip(qids, sids, strict=True))
    ]
    tasks.append(
        TaskRecord("answers", "ok", metrics=["em", "f1", "rouge-l"], result=res, records=records)
    )
    if full:
        # judge
        supported = np.round(skill * 4).astype(int)
        status = np.where(
            np.arange(n) % 97 == 3, "parse_error", np.where(np.arange(n) % 89 == 5, "timeout", "ok")
        )
        details = [
            json.dumps(
                {
                    "explanation": f"{k} of 4 statements are supported by the contexts.",
                    "statements": 4,
                    "supported": int(k),
                }
            )
            if st == "ok"
            else (
                "verdict count 3 != statements 4"
                if st == "parse_error"
                else "HTTP 429 after 6 attempts"
            )
            for k, st in zip(supported.tolist(), status.tolist(), strict=True)
        ]
        res = _result(
            "judge",
            qids,
            {"faithfulness": supported / 4},
            statuses={"faithfulness": status},
            details={"faithfulness": details},
        )
        _strata(res, levels, ["faithfulness"])
        tasks.append(
            TaskRecord(
                "judge",
                "ok",
                metrics=["faithfulness"],
                result=res,
                records=[
                    SampleRecord(
                        q,
                        s,
                        strata_rows[i],
                        {
                            "input": {"question": f"When was institution {i} founded?"},
                            "output": {"answer": answers[i]},
                        },
                    )
                    for i, (q, s) in enumerate(zip(qids, sids, strict=True))
                ],
            )
        )
        # classification
        gold = np.array(LABELS)[np.arange(n) % len(LABELS)]
        shift = np.array(LABELS)[(np.arange(n) + 1 + np.arange(n) % 3) % len(LABELS)]
        pred = np.where(skill > 0.4, gold, shift)
        correct = (gold == pred).astype(float)
        pairs = {(g, p): json.dumps({"gold": g, "pred": p}) for g in LABELS for p in LABELS}
        details = [pairs[(g, p)] for g, p in zip(gold.tolist(), pred.tolist(), strict=True)]
        meta: dict[str, Any] = {"labels_used": LABELS}
        if engine_metadata:  # what TypeReport.to_result() puts in the metadata
            index = {lab: i for i, lab in enumerate(LABELS)}
            cm = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
            np.add.at(cm, ([index[x] for x in gold.tolist()], [index[x] for x in pred.tolist()]), 1)
            meta["confusion_matrix"] = {"labels": LABELS, "matrix": cm.tolist()}
        res = _result(
            "classification",
            sids,
            {"accuracy": correct},
            details={"accuracy": details},
            metadata=meta,
        )
        _strata(res, levels, ["accuracy"])
        tasks.append(
            TaskRecord(
                "classification",
                "ok",
                metrics=["accuracy"],
                result=res,
                metadata=meta,
                records=[
                    SampleRecord(
                        s,
                        s,
                        strata_rows[i],
                        {
                            "gold": {"primary_type": str(gold[i])},
                            "output": {"primary_type": str(pred[i])},
                        },
                    )
                    for i, s in enumerate(sids)
                ],
            )
        )
        # ner
        g = 3 + np.arange(n) % 4
        c = np.round(g * skill).astype(int)
        wt = ((g - c) > 1).astype(int)
        ms = g - c - wt
        sp = np.arange(n) % 3
        cols, details_by = {}, {}
        counts_meta: dict[str, dict[str, int]] = {}
        for schema in ("strict", "exact", "type"):
            cor = c + (wt if schema == "exact" else 0)
            inc = wt - (cor - c)
            pos, act = g, c + wt + sp
            p = np.where(act > 0, cor / np.maximum(act, 1), 0.0)
            r = cor / pos
            f = np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)
            counts_meta[schema] = {
                "COR": int(cor.sum()),
                "INC": int(inc.sum()),
                "PAR": 0,
                "MIS": int(ms.sum()),
                "SPU": int(sp.sum()),
                "POS": int(pos.sum()),
                "ACT": int(act.sum()),
            }
            cols[f"overall.{schema}.precision"] = p
            cols[f"overall.{schema}.recall"] = r
            cols[f"overall.{schema}.f1"] = f
            details_by[f"overall.{schema}.f1"] = [
                f'{{"COR": {a}, "INC": {b}, "PAR": 0, "MIS": {m}, "SPU": {s_}, '
                f'"POS": {po}, "ACT": {ac}}}'
                for a, b, m, s_, po, ac in zip(
                    cor.tolist(),
                    inc.tolist(),
                    ms.tolist(),
                    sp.tolist(),
                    pos.tolist(),
                    act.tolist(),
                    strict=True,
                )
            ]
        ner_meta = {"counts": counts_meta} if engine_metadata else {}  # NerReport overall counts
        res = _result("ner", sids, cols, details=details_by, metadata=ner_meta)
        _strata(res, levels, ["overall.strict.f1"])
        tasks.append(
            TaskRecord(
                "ner",
                "ok",
                metrics=["overall.strict.f1", "overall.exact.f1", "overall.type.f1"],
                result=res,
                metadata=res.metadata,
                records=[
                    SampleRecord(
                        s,
                        s,
                        strata_rows[i],
                        {"input": {"text": f"Document {i} ..."}, "gold": {"entities": int(g[i])}},
                    )
                    for i, s in enumerate(sids)
                ],
            )
        )
    ndcg = float(cols_mean(tasks[0].result, "nDCG@10"))
    gates = [
        {
            "rule": "retrieval.nDCG@10 >= 0.55",
            "kind": "min",
            "metric": "retrieval.nDCG@10",
            "value": ndcg,
            "threshold": 0.55,
            "verdict": "PASS" if ndcg >= 0.55 else "FAIL",
        }
    ]
    return RunRecord(
        id=run_id,
        evaluation_id=evaluation,
        project=project,
        system=system,
        system_version=version,
        created_at=created,
        finished_at=created + timedelta(minutes=3),
        config_hash="c" * 64,
        dataset_hash="d" * 64,
        dataset_path="data/gold.jsonl",
        n_samples=n,
        gate_status="pass" if ndcg >= 0.55 else "fail",
        is_baseline=baseline is None,
        baseline_run_id=baseline,
        tags=["nightly"] + (["release"] if seed % 10 == 0 else []),
        metadata={"stratify_by": ["custodian_type", "country", "data_tier"]},
        tasks=tasks,
        gates=gates,
    )


def cols_mean(result: Any, metric: str) -> float:
    return float(result.aggregates[metric].value)


def comparisons(base: Any, cand: Any) -> list[dict[str, Any]]:
    """Paired t-tests of the candidate against the baseline on a few metrics, Holm-corrected."""
    from scipy import stats as sst

    from ragmeter.report.analysis import holm

    rows = []
    for task, metric in (
        ("retrieval", "nDCG@10"),
        ("retrieval", "RR"),
        ("answers", "f1"),
        ("judge", "faithfulness"),
    ):
        a = _values(base, task, metric)
        b = _values(cand, task, metric)
        ok = ~np.isnan(a) & ~np.isnan(b)
        d = b[ok] - a[ok]
        t = sst.ttest_rel(b[ok], a[ok])
        half = sst.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
        rows.append(
            {
                "task": task,
                "metric": metric,
                "test": "t",
                "n": int(ok.sum()),
                "mean": float(b[ok].mean()),
                "baseline_mean": float(a[ok].mean()),
                "mean_diff": float(d.mean()),
                "statistic": float(t.statistic),
                "p_value": float(t.pvalue),
                "ci_low": float(d.mean() - half),
                "ci_high": float(d.mean() + half),
                "effect_size": float(d.mean() / d.std(ddof=1)),
                "alpha": 0.05,
                "correction": "holm",
                "baseline_run_id": base.id,
            }
        )
    for r, p in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        r["p_adjusted"] = p
        r["significant"] = p is not None and p <= 0.05
    return rows


def _values(run: Any, task: str, metric: str) -> np.ndarray:
    res = next(t.result for t in run.tasks if t.task == task)
    rows = res.samples.filter(pc.equal(res.samples["metric"], metric))
    return rows["value"].to_numpy(zero_copy_only=False)


def build_store(url: str, n_big: int) -> dict[str, Any]:
    """Write the benchmark store (1,000 runs) and return what the pages need."""
    from ragmeter.store import open_store

    t0 = datetime(2023, 6, 1, tzinfo=timezone.utc)
    info: dict[str, Any] = {"format": FORMAT, "n_big": n_big}
    with open_store(url) as store:
        i = 0
        start = time.perf_counter()
        while i < 998:  # 499 evaluations of 2 systems each
            project = PROJECTS[i % len(PROJECTS)]
            created = t0 + timedelta(hours=17 * i)
            ev = created.strftime("%Y%m%dT%H%M%SZ") + f"-{i:06x}"
            a, b = SYSTEMS[i % len(SYSTEMS)], SYSTEMS[(i + 1) % len(SYSTEMS)]
            runs = [
                make_run(
                    f"{ev}-{a}",
                    ev,
                    project,
                    a,
                    f"1.{i // 40}.{i % 7}",
                    created,
                    50,
                    0.45 + 0.0002 * i,
                    i,
                    full=False,
                ),
                make_run(
                    f"{ev}-{b}",
                    ev,
                    project,
                    b,
                    f"2.{i // 40}.{i % 5}",
                    created,
                    50,
                    0.5 + 0.0002 * i,
                    i + 1,
                    full=False,
                    baseline=f"{ev}-{a}",
                ),
            ]
            store.write(runs)
            i += 2
        print(f"  998 small runs written in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        created = t0 + timedelta(days=800)
        ev = created.strftime("%Y%m%dT%H%M%SZ") + "-big000"
        start = time.perf_counter()
        base = make_run(
            f"{ev}-bm25-v3",
            ev,
            BIG_PROJECT,
            "bm25-v3",
            "3.2.0",
            created,
            n_big,
            0.5,
            1,
            full=True,
            engine_metadata=False,
        )
        cand = make_run(
            f"{ev}-hybrid-v1",
            ev,
            BIG_PROJECT,
            "hybrid-v1",
            "1.5.0",
            created,
            n_big,
            0.56,
            2,
            full=True,
            baseline=base.id,
        )
        cand.comparisons = comparisons(base, cand)
        print(
            f"  two runs of {n_big:,} samples built in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
        start = time.perf_counter()
        store.write([base, cand])
        print(f"  ... written in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        info.update(
            evaluation=ev,
            big=cand.id,
            baseline=base.id,
            sample=f"s{n_big // 2:0{max(5, len(str(n_big - 1)))}d}-q1",
            search=f"s{n_big - 7:0{max(5, len(str(n_big - 1)))}d}",
            runs=store.count_runs(),
        )
    return info


def timed(
    client: Any, url: str, repeat: int, cache: Any = None
) -> tuple[list[float], list[float], int, int]:
    """Request ``url`` ``repeat`` times; with ``cache``, empty the dashboard's report cache
    before each request, so that every run page is built from the store (a first view)."""
    server, wall = [], []
    status = size = 0
    for _ in range(repeat):
        if cache is not None:
            cache.entries.clear()
        t = time.perf_counter()
        r = client.get(url)
        wall.append(time.perf_counter() - t)
        status, size = r.status_code, len(r.content)
        timing = r.headers.get("server-timing", "")
        server.append(float(timing.split("dur=")[1]) / 1000 if "dur=" in timing else wall[-1])
    return server, wall, status, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--samples", type=int, default=100_000, help="samples of the big run")
    parser.add_argument("--store", help="store URL (default: benchmarks/data/dashboard/store.db)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the generated store")
    args = parser.parse_args(argv)

    from urllib.parse import quote

    from starlette.testclient import TestClient

    from ragmeter.report import write_report
    from ragmeter.store import open_store
    from ragmeter.web import create_app

    DATA.mkdir(parents=True, exist_ok=True)
    db = DATA / f"store-{args.samples}.db"
    url = args.store or f"sqlite:///{db}"
    meta_path = DATA / f"store-{args.samples}.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else None
    if (
        args.rebuild
        or meta is None
        or meta.get("format") != FORMAT
        or (not args.store and not db.exists())
    ):
        if not args.store:
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
        print(f"building the benchmark store {url} ...", file=sys.stderr)
        meta = build_store(url, args.samples)
        meta_path.write_text(json.dumps(meta, indent=1))
    store = open_store(url)
    app = create_app(store)
    cache = app.state.report_cache
    client = TestClient(app, base_url="http://127.0.0.1:8150")
    run, base, sample = (
        quote(meta["big"], safe=""),
        quote(meta["baseline"], safe=""),
        quote(meta["sample"], safe=""),
    )
    small = store.list_runs(project=PROJECTS[0], limit=1)[0]["id"]
    # two runs of different evaluations: no stored comparison, so the page tests them itself
    small_pair = ",".join(
        quote(r["id"], safe="") for r in store.list_runs(project=PROJECTS[0], limit=4)[::3]
    )
    pages = [
        ("runs list", "/"),
        ("runs list, page 10, filtered", f"/?project={PROJECTS[1]}&tag=nightly&page=10"),
        ("runs list as JSON", "/index.json?per_page=200"),
        ("run (100k samples)", f"/runs/{run}"),
        ("run (100k, no engine counts)", f"/runs/{base}"),
        ("run as JSON", f"/runs/{run}.json"),
        (
            "run, samples by value, deep page",
            f"/runs/{run}?series=retrieval.nDCG@10&sort=value&order=desc&page=1500",
        ),
        ("run, samples searched", f"/runs/{run}?series=answers.f1&q={meta['search']}"),
        ("run, samples by status", f"/runs/{run}?series=judge.faithfulness&sort=status&page=40"),
        ("small run", f"/runs/{quote(small, safe='')}"),
        ("sample", f"/runs/{run}/samples/{sample}"),
        ("compare (2 × 100k, stored tests)", f"/compare?runs={base},{run}"),
        ("compare (2 × 100k, reversed)", f"/compare?runs={run},{base}"),
        ("compare (2 small runs, ad-hoc tests)", f"/compare?runs={small_pair}"),
        ("trends", f"/trends?project={PROJECTS[0]}&metric=retrieval.nDCG@10"),
        ("trends as JSON", f"/trends.json?project={BIG_PROJECT}&metric=answers.f1"),
        ("static chart library", "/static/vendor/uplot/uPlot.iife.min.js"),
    ]
    print(
        f"\nragmeter dashboard: {meta['runs']} runs in the store, big run {meta['big']} "
        f"({meta['n_big']:,} samples × 29 metrics); {args.repeat} requests per page\n"
    )
    header = (
        f"{'page':36} {'status':>6} {'server median':>14} {'server max':>11} "
        f"{'wall median':>12} {'budget/median':>14}"
    )
    print(header)
    print("-" * len(header))
    worst = 0.0
    for name, path in pages:
        client.get(path)  # first request: template compilation, page cache of SQLite
        server, wall, status, _ = timed(client, path, args.repeat, cache)
        med = statistics.median(server)
        worst = max(worst, max(server))
        print(
            f"{name:36} {status:>6} {med * 1000:>11.1f} ms {max(server) * 1000:>8.1f} ms "
            f"{statistics.median(wall) * 1000:>9.1f} ms {PAGE_BUDGET_S / med:>13.1f}x"
        )
    print(f"\nslowest single request: {worst * 1000:.1f} ms (budget {PAGE_BUDGET_S * 1000:.0f} ms)")
    path = f"/runs/{run}?series=retrieval.nDCG@10&sort=value&page=700"
    client.get(path)
    server, _, _, _ = timed(client, path, args.repeat)
    print(
        f"run page again (report part cached, another page of the sample table): median "
        f"{statistics.median(server) * 1000:.1f} ms, max {max(server) * 1000:.1f} ms"
    )
    # an action, not a page: paired t-tests asked for on the compare page of two runs that were
    # not compared when stored (here: the candidate against the baseline's per-sample values,
    # for every sample-level metric), which joins 100,000 rows per metric
    path = f"/runs/{base}?derive=all"
    server, wall, status, _ = timed(client, path, 3, cache)
    print(
        f"on request: run page counting the confusion matrix and NER errors from 100k details "
        f"(derive=all): median {statistics.median(server):.2f} s server-side (status {status})"
    )
    path = f"/compare?runs={base},{run}&tests=all"
    server, wall, status, _ = timed(client, path, 1, cache)
    print(
        f"on request: paired t-tests of every metric of 2 × 100k runs (compare&tests=all): "
        f"{server[0]:.2f} s server-side (status {status})"
    )
    out = DATA / "report.html"
    for label, refs in (
        ("report of the 100k run", [meta["big"]]),
        ("report of the evaluation (2 × 100k)", [meta["evaluation"]]),
    ):
        times = []
        for _ in range(max(3, args.repeat // 2)):
            t = time.perf_counter()
            write_report(store, refs, out)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        print(
            f"{label}: median {med:.2f} s, max {max(times):.2f} s "
            f"({out.stat().st_size / 1024:.0f} KB; budget {REPORT_BUDGET_S:.0f} s, "
            f"{REPORT_BUDGET_S / med:.1f}x)"
        )
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
