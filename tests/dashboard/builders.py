"""Stores for the report and dashboard tests, written through the real store API.

:func:`write_evaluation` writes one evaluation (two or three systems of a small heritage-like
project) whose tasks have the shapes the engines produce (``Result.to_result()`` of each spec):

- retrieval: per-query ``nDCG@10``, ``RR``, ``P@5``, ``R@100`` and the 11 ``IPrec@r`` points;
- answers: ``em``, ``f1``, ``rouge-l`` per question;
- judge: ``faithfulness`` with the judge's explanation as JSON detail on ``ok`` rows and
  ``parse_error`` / ``timeout`` / ``needs_llm`` rows with their reasons;
- classification: per-item ``accuracy`` with ``{"gold", "pred"}`` details, ``labels_used`` in
  the task metadata, an invalid predicted label;
- ner: per-document ``overall.<schema>.{precision,recall,f1}`` (counts as the detail of the
  ``f1`` row) for the strict, exact and type schemas, micro aggregates from summed counts;

plus per-stratum aggregates, CIs, comparisons against the baseline (paired t-test, Holm, d_z,
computed from the values with scipy and statsmodels), gate outcomes, and each unit's record.
``evil=True`` puts XSS payloads into ids, system names, answers, explanations and labels.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np

from ragmeter.result import Aggregate, Result
from ragmeter.store import RunRecord, SampleRecord, Store, TaskRecord

T0 = datetime(2025, 6, 2, 9, 30, tzinfo=timezone.utc)

XSS_SCRIPT = "<script>alert('xss-script')</script>"
XSS_IMG = '"><img src=x onerror="alert(\'xss-img\')">'
XSS_CLOSE = "</script><script>alert('xss-close')</script>"
PAYLOADS = (XSS_SCRIPT, XSS_IMG, XSS_CLOSE)

LABELS = ["A", "G", "L", "M", "R"]
IPREC = [f"IPrec@{r / 10:.1f}" for r in range(11)]
FACTORS = {
    "custodian_type": ["M", "A", "L", "G"],
    "country": ["NL", "BE", "DE"],
    "data_tier": ["1", "2", "3"],
}
CITIES = ["Amsterdam", "Leiden", "Gent", "Brugge", "Köln", "Haarlem", "Utrecht", "Antwerpen"]
KINDS = {"M": "Museum", "A": "Archief", "L": "Bibliotheek", "G": "Galerie"}


@dataclass
class SystemSpec:
    name: str
    version: str | None
    quality: float
    tags: tuple[str, ...] = ()
    judge_ok: bool = True


THREE = [
    SystemSpec("bm25-v3", "3.1.0", 0.50, ("nightly",)),
    SystemSpec("hybrid-v1", "1.4.2", 0.66, ("nightly", "candidate")),
    SystemSpec("dense-e5", None, 0.60, (), judge_ok=False),
]
"""A baseline, a better candidate, and a system whose judge task was skipped."""


@dataclass
class Evaluation:
    """What was written, for assertions."""

    evaluation_id: str
    run_ids: list[str]
    systems: list[SystemSpec]
    sample_ids: list[str]
    qids: list[str]
    results: dict[str, dict[str, Result]] = field(default_factory=dict)
    records: dict[str, dict[str, dict[str, dict]]] = field(default_factory=dict)
    comparisons: dict[str, list[dict]] = field(default_factory=dict)


def _bootstrap_ci(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    idx = rng.integers(0, len(values), size=(400, len(values)))
    means = values[idx].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def _with_cis(result: Result, rng: np.random.Generator) -> Result:
    for metric in result.metrics:
        agg = result.aggregates.get(metric)
        if agg is None or agg.value is None:
            continue
        vals = np.array(list(result.values(metric).values()), dtype=float)
        ci = _bootstrap_ci(vals, rng)
        if ci:
            result.aggregates[metric] = Aggregate(
                agg.value, agg.n, agg.status_counts, ci[0], ci[1], agg.reason
            )
    return result


def _strata(result: Result, strata_of: dict[str, dict[str, str]], metrics: Sequence[str]) -> None:
    out: dict[str, dict[str, dict[str, Aggregate]]] = {}
    for factor in FACTORS:
        levels: dict[str, dict[str, Aggregate]] = {}
        for metric in metrics:
            values = result.values(metric)
            statuses = result.statuses(metric)
            by_level: dict[str, list[float]] = {}
            counts: dict[str, dict[str, int]] = {}
            for sid, status in sorted(statuses.items()):
                lv = strata_of[sid][factor]
                counts.setdefault(lv, {})
                counts[lv][status] = counts[lv].get(status, 0) + 1
                if sid in values:
                    by_level.setdefault(lv, []).append(values[sid])
            for lv in sorted(counts):
                vals = by_level.get(lv, [])
                levels.setdefault(lv, {})[metric] = (
                    Aggregate(math.fsum(vals) / len(vals), len(vals), counts[lv])
                    if vals
                    else Aggregate(None, 0, counts[lv], reason="no scored samples")
                )
        out[factor] = levels
    result.strata = out


def write_evaluation(
    store: Store,
    *,
    project: str = "heritage-rag",
    systems: Sequence[SystemSpec] | None = None,
    n: int = 40,
    seed: int = 7,
    created: datetime = T0,
    evil: bool = False,
    evaluation_id: str | None = None,
    tasks: Sequence[str] = ("retrieval", "answers", "judge", "classification", "ner"),
) -> Evaluation:
    """Write one evaluation of every system; the first system is the baseline."""
    rng = np.random.default_rng(seed)
    if systems is None:
        systems = [
            SystemSpec("bm25-v3", "3.1.0", 0.50, ("nightly",)),
            SystemSpec("hybrid-v1", "1.4.2", 0.66, ("nightly", "candidate")),
        ]
    systems = list(systems)
    if evil:
        systems[-1] = SystemSpec(
            "hyb" + XSS_SCRIPT, "1.0" + XSS_IMG, systems[-1].quality, ("x" + XSS_IMG,)
        )
    evaluation_id = evaluation_id or created.strftime("%Y%m%dT%H%M%SZ") + f"-{seed:06x}"
    sample_ids = [f"eval_{i:03d}" for i in range(n)]
    if evil:
        sample_ids[0] = "eval_" + XSS_IMG
        sample_ids[1] = "eval_" + XSS_SCRIPT
        sample_ids[2] = "eval/../x#1?y=" + XSS_CLOSE
    qids = [f"{s}-q1" for s in sample_ids]
    strata_of = {
        s: {
            "custodian_type": FACTORS["custodian_type"][i % 4],
            "country": FACTORS["country"][(i // 4) % 3],
            "data_tier": FACTORS["data_tier"][(i + i // 3) % 3],
        }
        for i, s in enumerate(sample_ids)
    }
    qstrata = {q: strata_of[s] for q, s in zip(qids, sample_ids, strict=True)}
    years = rng.integers(1780, 1990, size=n)
    cities = [CITIES[i % len(CITIES)] for i in range(n)]
    questions = [
        f"Wanneer is het {KINDS[strata_of[s]['custodian_type']]} {c} opgericht?"
        for s, c in zip(sample_ids, cities, strict=True)
    ]
    gold_types = [LABELS[(i * 3) % len(LABELS)] for i in range(n)]
    difficulty = rng.uniform(-0.25, 0.25, size=n)
    ev = Evaluation(evaluation_id, [], systems, sample_ids, qids)
    records_out: list[RunRecord] = []
    per_system_values: dict[str, dict[str, dict[str, float]]] = {}
    for idx, sys in enumerate(systems):
        run_id = f"{evaluation_id}-{sys.name}"
        ev.run_ids.append(run_id)
        q = sys.quality
        skill = np.clip(q - difficulty + rng.normal(0, 0.12, size=n), 0, 1)
        results: dict[str, Result] = {}
        recs: dict[str, list[SampleRecord]] = {}
        # -- retrieval --------------------------------------------------------------------------
        if "retrieval" in tasks:
            ndcg = np.round(skill, 6)
            rr = np.where(
                skill > 0.55, 1.0, np.where(skill > 0.3, 0.5, np.where(skill > 0.1, 0.25, 0.0))
            )
            p5 = np.round(np.clip(skill + rng.normal(0, 0.1, n), 0, 1) * 5) / 5
            r100 = np.clip(skill + 0.3, 0, 1)
            values = {"nDCG@10": ndcg, "RR": rr, "P@5": p5, "R@100": r100}
            ip = np.clip(skill[:, None] + 0.25 - np.linspace(0, 1, 11)[None, :] * 0.9, 0, 1)
            ip = np.minimum.accumulate(ip, axis=1)  # interpolated precision never rises
            for j, name in enumerate(IPREC):
                values[name] = np.round(ip[:, j], 6)
            statuses = ["ok"] * n
            statuses[5] = "missing_zeroed"
            columns = {k: [float(x) for x in v] for k, v in values.items()}
            for k in columns:
                columns[k][5] = 0.0
            res = Result.from_columns("retrieval", qids, columns, statuses=statuses)
            _strata(res, qstrata, ["nDCG@10", "RR"])
            results["retrieval"] = _with_cis(res, rng)
            recs["retrieval"] = [
                SampleRecord(
                    qid,
                    sid,
                    strata_of[sid],
                    {
                        "input": {"question": questions[i]},
                        "gold": {"relevant": {f"doc-{i}": 2, f"doc-{i + 100}": 1}},
                        "output": {"ranking": [f"doc-{(i + k * 7) % (n + 3)}" for k in range(5)]},
                    },
                )
                for i, (qid, sid) in enumerate(zip(qids, sample_ids, strict=True))
            ]
        # -- answers ----------------------------------------------------------------------------
        answers = []
        for i in range(n):
            right = skill[i] > 0.45
            year = int(years[i]) if right else int(years[i]) + 1 + i % 7
            text = f"Het werd opgericht in {year}."
            if evil and i == 3:
                text = "Het antwoord is " + XSS_CLOSE + XSS_IMG
            answers.append((text, right))
        if "answers" in tasks:
            em = [1.0 if r else 0.0 for _, r in answers]
            f1 = [
                1.0 if r else round(0.2 + 0.4 * float(skill[i]), 6)
                for i, (_, r) in enumerate(answers)
            ]
            rouge = [round(min(1.0, v + 0.1), 6) for v in f1]
            statuses = ["ok"] * n
            statuses[7] = "no_gold"
            res = Result.from_columns(
                "answers",
                qids,
                {"em": em, "f1": f1, "rouge-l": rouge},
                statuses=statuses,
            )
            _strata(res, qstrata, ["em", "f1"])
            results["answers"] = _with_cis(res, rng)
            recs["answers"] = [
                SampleRecord(
                    qid,
                    sid,
                    strata_of[sid],
                    {
                        "input": {"question": questions[i]},
                        "gold": {"answers": [str(int(years[i]))]},
                        "output": {"answer": answers[i][0]},
                    },
                )
                for i, (qid, sid) in enumerate(zip(qids, sample_ids, strict=True))
            ]
        # -- judge ------------------------------------------------------------------------------
        if "judge" in tasks:
            faith, fstat, fdetail = [], [], []
            for i in range(n):
                if not sys.judge_ok:
                    faith.append(None)
                    fstat.append("needs_llm")
                    fdetail.append("no judge endpoint configured (judge.base_url)")
                elif i % 13 == 4:
                    faith.append(None)
                    fstat.append("parse_error")
                    fdetail.append("verdict count 3 != statements 4")
                elif i % 17 == 9:
                    faith.append(None)
                    fstat.append("timeout")
                    fdetail.append("HTTP 429 after 6 attempts")
                else:
                    supported = round(float(skill[i]) * 4)
                    v = supported / 4
                    faith.append(v)
                    fstat.append("ok")
                    expl = f"{supported} of 4 statements are supported by the contexts."
                    if evil and i in (0, 3):
                        expl += " " + XSS_IMG + XSS_CLOSE
                    fdetail.append(
                        json.dumps(
                            {
                                "explanation": expl,
                                "statements": 4,
                                "supported": supported,
                                "prompt_versions": ["faithfulness@1"],
                                "spread": None,
                            }
                        )
                    )
            res = Result.from_columns(
                "judge",
                qids,
                {"faithfulness": faith},
                statuses=fstat,
                details={"faithfulness": fdetail},
                metadata={"judge": {"model": "qwen2.5-72b-instruct"}, "cost": {"usd": 0.0}},
            )
            if sys.judge_ok:
                _strata(res, qstrata, ["faithfulness"])
                results["judge"] = _with_cis(res, rng)
            else:
                results["judge"] = res
            recs["judge"] = [
                SampleRecord(
                    qid,
                    sid,
                    strata_of[sid],
                    {
                        "input": {
                            "question": questions[i],
                            "contexts": [f"doc-{i}#1", f"doc-{i}#2"],
                        },
                        "gold": {"answer": f"In {int(years[i])}."},
                        "output": {"answer": answers[i][0]},
                    },
                )
                for i, (qid, sid) in enumerate(zip(qids, sample_ids, strict=True))
            ]
        # -- classification ---------------------------------------------------------------------
        if "classification" in tasks:
            preds = []
            for i in range(n):
                if i == 11:
                    preds.append("__INVALID__")
                elif skill[i] > 0.4:
                    preds.append(gold_types[i])
                else:
                    preds.append(LABELS[(LABELS.index(gold_types[i]) + 1 + i % 2) % len(LABELS)])
            gold_labels = list(gold_types)
            if evil:
                gold_labels[0] = preds[0] = "Q" + XSS_SCRIPT
            correct = [1.0 if g == p else 0.0 for g, p in zip(gold_labels, preds, strict=True)]
            details = [
                json.dumps({"gold": g, "pred": p}) for g, p in zip(gold_labels, preds, strict=True)
            ]
            acc = sum(correct) / n
            labels_used = sorted(set(gold_labels) | (set(preds) - {"__INVALID__"}))
            aggs = {
                "accuracy": Aggregate(acc, n, {"ok": n}),
                "macro.f1": Aggregate(round(acc * 0.9, 6), n, {"ok": n}),
                "balanced_accuracy": Aggregate(round(acc * 0.95, 6), n, {"ok": n}),
            }
            res = Result.from_columns(
                "classification",
                sample_ids,
                {"accuracy": correct},
                details={"accuracy": details},
                aggregates=aggs,
                metadata={"labels_used": labels_used, "invalid_labels": {"pred": {"museum": 1}}},
            )
            _strata(res, strata_of, ["accuracy"])
            results["classification"] = _with_cis(res, rng)
            recs["classification"] = [
                SampleRecord(
                    sid,
                    sid,
                    strata_of[sid],
                    {
                        "input": {
                            "text": f"{KINDS[strata_of[sid]['custodian_type']]} {cities[i]} ..."
                        },
                        "gold": {"primary_type": gold_labels[i]},
                        "output": {"primary_type": preds[i]},
                    },
                )
                for i, sid in enumerate(sample_ids)
            ]
        # -- ner --------------------------------------------------------------------------------
        if "ner" in tasks:
            columns: dict[str, list[float | None]] = {}
            details: dict[str, list[str | None]] = {}
            totals = {
                s: dict.fromkeys(("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT"), 0)
                for s in ("strict", "exact", "type")
            }
            per_doc = []
            for i in range(n):
                g = 3 + i % 4
                c = round(g * float(skill[i]))
                wt = 1 if (g - c) > 1 and i % 2 else 0
                wb = 1 if (g - c - wt) > 1 else 0
                bb = 1 if (g - c - wt - wb) > 1 and i % 3 == 0 else 0
                ms = g - c - wt - wb - bb
                sp = i % 3
                per_doc.append((c, wt, wb, bb, ms, sp))
            for schema_name in ("strict", "exact", "type"):
                p_col, r_col, f_col, d_col = [], [], [], []
                for c, wt, wb, bb, ms, sp in per_doc:
                    cor = c + (wt if schema_name == "exact" else wb if schema_name == "type" else 0)
                    inc = (wt + wb + bb) - (cor - c)
                    pos = c + wt + wb + bb + ms
                    act = c + wt + wb + bb + sp
                    counts = {
                        "COR": cor,
                        "INC": inc,
                        "PAR": 0,
                        "MIS": ms,
                        "SPU": sp,
                        "POS": pos,
                        "ACT": act,
                    }
                    for k2, v2 in counts.items():
                        totals[schema_name][k2] += v2
                    p = cor / act if act else 0.0
                    r = cor / pos if pos else 0.0
                    f = 2 * p * r / (p + r) if p + r else 0.0
                    p_col.append(p)
                    r_col.append(r)
                    f_col.append(f)
                    d_col.append(json.dumps(counts))
                columns[f"overall.{schema_name}.precision"] = p_col
                columns[f"overall.{schema_name}.recall"] = r_col
                columns[f"overall.{schema_name}.f1"] = f_col
                details[f"overall.{schema_name}.f1"] = d_col
            aggs = {}
            for schema_name, t in totals.items():
                p = t["COR"] / t["ACT"]
                r = t["COR"] / t["POS"]
                aggs[f"overall.{schema_name}.precision"] = Aggregate(p, n, {"ok": n})
                aggs[f"overall.{schema_name}.recall"] = Aggregate(r, n, {"ok": n})
                aggs[f"overall.{schema_name}.f1"] = Aggregate(2 * p * r / (p + r), n, {"ok": n})
            res = Result.from_columns(
                "ner",
                sample_ids,
                columns,
                details=details,
                aggregates=aggs,
                metadata={"settings": {"schemas": ["strict", "exact", "type"]}},
            )
            _strata(res, strata_of, ["overall.strict.f1"])
            results["ner"] = res
            recs["ner"] = [
                SampleRecord(
                    sid,
                    sid,
                    strata_of[sid],
                    {
                        "input": {
                            "text": f"Het {KINDS[strata_of[sid]['custodian_type']]} {cities[i]} ..."
                        },
                        "gold": {"entities": [{"text": cities[i], "type": "LOC"}]},
                        "output": {
                            "entities": [{"text": cities[i], "type": "LOC" if i % 2 else "ORG"}]
                        },
                    },
                )
                for i, sid in enumerate(sample_ids)
            ]
            ev.records.setdefault(run_id, {})["ner_totals"] = totals  # type: ignore[assignment]
        ev.results[run_id] = results
        per_system_values[run_id] = {
            f"{t}.{m}": r.values(m) for t, r in results.items() for m in r.metrics
        }
        task_records = []
        for t in tasks:
            res = results[t]
            skipped = t == "judge" and not sys.judge_ok
            task_records.append(
                TaskRecord(
                    t,
                    "skipped" if skipped else "ok",
                    reason="no judge endpoint configured (judge.base_url)" if skipped else None,
                    input_hash=f"{idx:02d}" * 32,
                    metrics=_asked(t),
                    result=res,
                    records=recs[t],
                    metadata=res.metadata,
                    warnings=["2 answers were empty"] if t == "answers" and idx == 0 else [],
                )
            )
        task_records.append(
            TaskRecord(
                "steps",
                "skipped",
                reason=f"{sys.name} has no traces output (systems[].outputs.traces)",
            )
        )
        records_out.append(
            RunRecord(
                id=run_id,
                evaluation_id=evaluation_id,
                project=project,
                system=sys.name,
                system_version=sys.version,
                created_at=created,
                finished_at=created + timedelta(seconds=42),
                config_hash="c0" * 32,
                dataset_hash="d1" * 32,
                dataset_path="data/gold.jsonl",
                n_samples=n,
                is_baseline=idx == 0,
                baseline_run_id=None if idx == 0 else f"{evaluation_id}-{systems[0].name}",
                tags=list(sys.tags),
                notes="nightly evaluation",
                config={"project": project},
                metadata={"stratify_by": list(FACTORS)},
                tasks=task_records,
            )
        )
    # comparisons against the baseline (paired t on common scored samples, Holm per pair)
    from scipy import stats as sst
    from statsmodels.stats.multitest import multipletests

    base = ev.run_ids[0]
    compared = [
        m
        for m in (
            "retrieval.nDCG@10",
            "retrieval.RR",
            "answers.f1",
            "judge.faithfulness",
            "classification.accuracy",
        )
        if m.split(".")[0] in tasks
    ]
    for rec in records_out[1:]:
        rows = []
        for name in compared:
            a = per_system_values[base].get(name, {})
            b = per_system_values[rec.id].get(name, {})
            common = sorted(set(a) & set(b))
            task, metric = name.split(".", 1)
            if len(common) < 2:
                rows.append(
                    {
                        "task": task,
                        "metric": metric,
                        "test": "t",
                        "n": len(common),
                        "p_value": None,
                        "reason": "fewer than 2 paired samples",
                        "degenerate": True,
                    }
                )
                continue
            xa = np.array([a[i] for i in common])
            xb = np.array([b[i] for i in common])
            d = xb - xa
            t = sst.ttest_rel(xb, xa)
            half = sst.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
            rows.append(
                {
                    "task": task,
                    "metric": metric,
                    "test": "t",
                    "n": len(common),
                    "mean": float(xb.mean()),
                    "baseline_mean": float(xa.mean()),
                    "mean_diff": float(d.mean()),
                    "statistic": float(t.statistic),
                    "p_value": float(t.pvalue),
                    "ci_low": float(d.mean() - half),
                    "ci_high": float(d.mean() + half),
                    "effect_size": float(d.mean() / d.std(ddof=1)),
                    "alpha": 0.05,
                    "correction": "holm",
                    "seed": 42,
                    "degenerate": False,
                }
            )
        ps = [r["p_value"] for r in rows if r.get("p_value") is not None]
        adj = iter(multipletests(ps, method="holm")[1]) if ps else iter(())
        for r in rows:
            if r.get("p_value") is not None:
                r["p_adjusted"] = float(next(adj))
                r["significant"] = r["p_adjusted"] <= 0.05
            r["baseline_run_id"] = base
        rec.comparisons = rows
        ev.comparisons[rec.id] = rows
    # gates
    for rec in records_out:
        ndcg = (
            ev.results[rec.id]["retrieval"].aggregates["nDCG@10"].value
            if "retrieval" in tasks
            else None
        )
        gates = [
            {
                "rule": "retrieval.nDCG@10 >= 0.55",
                "kind": "min",
                "metric": "retrieval.nDCG@10",
                "value": ndcg,
                "threshold": 0.55,
                "verdict": "PASS" if ndcg is not None and ndcg >= 0.55 else "FAIL",
                "reason": None,
            },
            {
                "rule": "judge.faithfulness >= 0.5",
                "kind": "min",
                "metric": "judge.faithfulness",
                "value": None,
                "threshold": 0.5,
                "verdict": "SKIP",
                "reason": "judge.faithfulness has no value (task judge skipped)",
            },
        ]
        rec.gates = gates
        rec.gate_status = "fail" if any(g["verdict"] == "FAIL" for g in gates) else "pass"
    store.write(records_out)
    return ev


def _asked(task: str) -> list[str]:
    return {
        "retrieval": ["nDCG@10", "RR", "P@5", "R@100", *IPREC],
        "answers": ["em", "f1", "rouge-l"],
        "judge": ["faithfulness"],
        "classification": ["accuracy", "macro.f1"],
        "ner": ["overall.strict.f1", "overall.exact.f1", "overall.type.f1"],
    }[task]


def write_history(
    store: Store, *, weeks: int = 5, project: str = "heritage-rag"
) -> list[Evaluation]:
    """Weekly evaluations with rising quality and new versions (for trends)."""
    out = []
    for w in range(weeks):
        systems = [
            SystemSpec("bm25-v3", f"3.{w}.0", 0.45 + 0.01 * w, ("nightly",)),
            SystemSpec("hybrid-v1", f"1.{w}.0", 0.5 + 0.04 * w, ("nightly",)),
        ]
        out.append(
            write_evaluation(
                store,
                project=project,
                systems=systems,
                n=16,
                seed=100 + w,
                created=T0 - timedelta(days=7 * (weeks - w)),
                tasks=("retrieval", "answers"),
            )
        )
    return out
