"""Benchmark of the evaluation runner and the results store (issue 8 targets).

    python -m benchmarks.runner [--samples 10000] [--repeat 3] [--skip-run] [--skip-store]

1. ``ragmeter run`` over a generated project: 10,000 gold samples, two systems, the retrieval,
   answers, ner, classification and linking tasks (100 retrieved documents per query, so each run
   file has 1,000,000 lines), strata, comparisons with the baseline, and the save to a SQLite
   store and ``results/``. Target: under 60 s. The anchor is the same scoring glued together
   by hand from the reference libraries (pytrec_eval, the SQuAD v1.1 script's EM/F1, Google
   rouge-score, nervaluate, scikit-learn, a loop for Hits@1/MRR); it computes only the headline
   numbers: no strata, no comparisons, no CIs, nothing stored.
2. Storing one run of 1,000,000 per-sample values (100,000 samples x 10 metrics) in a fresh
   SQLite store, in one transaction. Target: under 10 s. The anchor is the floor: the same rows
   inserted with sqlite3 ``executemany`` into a table with the same primary key.

Data goes to ``benchmarks/data/runner/`` (git-ignored) and is generated once. Times are medians.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sqlite3
import statistics
import string
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "data" / "runner"
LABELS = ["GRP.HER.MUS", "GRP.HER.ARC", "GRP.HER.LIB", "TOP", "TMP"]
TYPES = list("MALSG")
WORDS = [
    "museum",
    "archief",
    "library",
    "collectie",
    "stad",
    "kunst",
    "founded",
    "holds",
    "regional",
    "record",
    "office",
    "paintings",
    "maps",
    "books",
    "photos",
    "society",
]


def _word(rng: random.Random) -> str:
    return (
        rng.choice(WORDS)
        if rng.random() < 0.7
        else "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))
    )


def generate(n: int, root: Path) -> Path:
    """Gold, corpus-free run files, answers and entities for two systems; returns the config."""
    cfg = root / f"ragmeter-{n}.yaml"
    if cfg.exists():
        return cfg
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20250601)
    n_docs = max(1000, n * 5)
    gold = []
    for i in range(n):
        words = [_word(rng) for _ in range(rng.randint(12, 24))]
        ents = []
        text = ""
        for w in words:
            start = len(text)
            text += w + " "
            if rng.random() < 0.2:
                ents.append(
                    {"text": w, "type": rng.choice(LABELS), "start": start, "end": start + len(w)}
                )
        text = text.rstrip()
        sid = f"s{i:06d}"
        rel = {f"d{rng.randrange(n_docs):07d}": rng.choice((1, 2)) for _ in range(3)}
        answer = " ".join(rng.sample(words, 3))
        gold.append(
            {
                "id": sid,
                "text": text,
                "strata": {
                    "custodian_type": rng.choice(TYPES),
                    "country": rng.choice(["NL", "BE", "GB"]),
                },
                "ner_annotations": ents,
                "type_classification": {"primary_type": rng.choice(TYPES)},
                "entity_linking": [
                    {
                        "mention_id": f"{sid}-m1",
                        "wikidata_id": None if rng.random() < 0.15 else f"Q{rng.randrange(10**7)}",
                    }
                ],
                "qa_pairs": [{"qid": f"{sid}-q1", "question": "?", "golden_answers": [answer]}],
                "relevant_docs": {f"{sid}-q1": rel},
            }
        )
    with (root / "gold.jsonl").open("w") as fh:
        for g in gold:
            fh.write(json.dumps(g) + "\n")
    for system, skill in (("a", 0.55), ("b", 0.7)):
        srng = random.Random(f"{system}-{n}")
        with (
            (root / f"{system}.trec").open("w") as run,
            (root / f"{system}-answers.jsonl").open("w") as ans,
            (root / f"{system}-entities.jsonl").open("w") as ents_out,
        ):
            for g in gold:
                qid = g["qa_pairs"][0]["qid"]
                rel = list(g["relevant_docs"][qid])
                docs = {f"d{srng.randrange(n_docs):07d}" for _ in range(100)}
                docs = [d for d in docs if d not in rel]
                for r in rel:
                    if srng.random() < skill:
                        docs.insert(srng.randrange(min(len(docs), 20) + 1), r)
                for rank, d in enumerate(docs[:100], start=1):
                    run.write(f"{qid} Q0 {d} {rank} {200 - rank * 1.5:.3f} {system}\n")
                gold_answer = g["qa_pairs"][0]["golden_answers"][0]
                pred = (
                    gold_answer
                    if srng.random() < skill
                    else " ".join([*gold_answer.split()[:2], "x"])
                )
                ans.write(json.dumps({"id": qid, "answer": pred}) + "\n")
                preds = [
                    {
                        "start": e["start"],
                        "end": e["end"],
                        "type": e["type"] if srng.random() < skill + 0.2 else "TOP",
                    }
                    for e in g["ner_annotations"]
                    if srng.random() < skill + 0.25
                ]
                link = g["entity_linking"][0]
                cands = [f"Q{srng.randrange(10**7)}" for _ in range(3)]
                if link["wikidata_id"] and srng.random() < skill:
                    cands.insert(srng.randrange(3), link["wikidata_id"])
                nil = link["wikidata_id"] is None and srng.random() < skill
                ents_out.write(
                    json.dumps(
                        {
                            "id": g["id"],
                            "ner_annotations": preds,
                            "type_classification": {
                                "primary_type": g["type_classification"]["primary_type"]
                                if srng.random() < skill + 0.2
                                else srng.choice(TYPES)
                            },
                            "entity_linking": [
                                {
                                    "mention_id": link["mention_id"],
                                    "candidates": [] if nil else cands,
                                    "nil": nil,
                                }
                            ],
                        }
                    )
                    + "\n"
                )
    cfg.write_text(
        """project: bench
dataset: {path: gold.jsonl}
systems:
  - {name: a, outputs: {run: a.trec, answers: a-answers.jsonl, entities: a-entities.jsonl}}
  - {name: b, outputs: {run: b.trec, answers: b-answers.jsonl, entities: b-entities.jsonl}}
tasks:
  retrieval: {measures: [nDCG@10, RR, P@5, R@10]}
  answers: {metrics: [em, f1, rouge-l]}
  ner: {schemas: [strict, type]}
  classification: {profile: heritage}
  linking: {k: [1, 5]}
stratify_by: [custodian_type, country]
compare: {baseline: a}
"""
    )
    return cfg


# -- ragmeter -------------------------------------------------------------------------------------


def run_ragmeter(cfg: Path, work: Path) -> dict:
    import ragmeter

    res = ragmeter.evaluate(cfg, cache_dir=None)
    res.save(f"sqlite:///{work / 'store.db'}", results_dir=work / "results")
    return {
        "nDCG@10": res.result("b", "retrieval").aggregates["nDCG@10"].value,
        "f1": res.result("b", "answers").aggregates["f1"].value,
        "strict.f1": res.result("b", "ner").aggregates["overall.strict.f1"].value,
        "accuracy": res.result("b", "classification").aggregates["accuracy"].value,
        "mrr": res.result("b", "linking").aggregates["ranking.mrr"].value,
    }


# -- the anchor: reference libraries glued by hand ----------------------------------------------


def _squad_normalize(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _squad_f1(pred: str, gold: str) -> float:
    p, g = _squad_normalize(pred).split(), _squad_normalize(gold).split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def run_anchor(root: Path) -> dict:
    import pytrec_eval
    from nervaluate import Evaluator
    from rouge_score import rouge_scorer
    from sklearn.metrics import accuracy_score

    gold = [json.loads(line) for line in (root / "gold.jsonl").open()]
    qrels = {q: g for s in gold for q, g in s["relevant_docs"].items()}
    out = {}
    for system in ("a", "b"):
        run: dict[str, dict[str, float]] = defaultdict(dict)
        with (root / f"{system}.trec").open() as fh:
            for line in fh:
                q, _, d, _, score, _ = line.split()
                run[q][d] = float(score)
        ev = pytrec_eval.RelevanceEvaluator(
            qrels, {"ndcg_cut.10", "recip_rank", "P.5", "recall.10"}
        )
        per_q = ev.evaluate(run)
        ndcg = sum(v["ndcg_cut_10"] for v in per_q.values()) / len(qrels)
        answers = {
            r["id"]: r["answer"] for r in map(json.loads, (root / f"{system}-answers.jsonl").open())
        }
        scorer = rouge_scorer.RougeScorer(["rougeL"])
        f1s, ems, rls = [], [], []
        for s in gold:
            qa = s["qa_pairs"][0]
            pred, golds = answers[qa["qid"]], qa["golden_answers"]
            ems.append(max(float(_squad_normalize(pred) == _squad_normalize(g)) for g in golds))
            f1s.append(max(_squad_f1(pred, g) for g in golds))
            rls.append(max(scorer.score(g, pred)["rougeL"].fmeasure for g in golds))
        ents = {r["id"]: r for r in map(json.loads, (root / f"{system}-entities.jsonl").open())}
        true = [
            [
                {"label": e["type"], "start": e["start"], "end": e["end"]}
                for e in s["ner_annotations"]
            ]
            for s in gold
        ]
        pred = [
            [
                {"label": e["type"], "start": e["start"], "end": e["end"]}
                for e in ents[s["id"]]["ner_annotations"]
            ]
            for s in gold
        ]
        results = Evaluator(true, pred, tags=LABELS).evaluate()
        overall = results[0] if isinstance(results, tuple) else results["overall"]
        strict = overall["strict"]
        strict_f1 = strict["f1"] if isinstance(strict, dict) else strict.f1
        acc = accuracy_score(
            [s["type_classification"]["primary_type"] for s in gold],
            [ents[s["id"]]["type_classification"]["primary_type"] for s in gold],
        )
        rr = []
        for s in gold:
            link = s["entity_linking"][0]
            if link["wikidata_id"] is None:
                continue
            cands = ents[s["id"]]["entity_linking"][0]["candidates"]
            rr.append(
                1 / (cands.index(link["wikidata_id"]) + 1) if link["wikidata_id"] in cands else 0.0
            )
        out[system] = {
            "nDCG@10": ndcg,
            "f1": sum(f1s) / len(f1s),
            "strict.f1": strict_f1,
            "accuracy": acc,
            "mrr": sum(rr) / len(rr),
        }
    return out["b"]


# -- the store ------------------------------------------------------------------------------------


def store_rows(n_samples: int, n_metrics: int):  # type: ignore[no-untyped-def]
    import numpy as np
    import pyarrow as pa

    from ragmeter.result import Aggregate, Result

    ids = [f"q{i:07d}" for i in range(n_samples)]
    rng = np.random.default_rng(0)
    metrics = [f"m{j}" for j in range(n_metrics)]
    table = pa.table(
        {
            "id": pa.array(ids * n_metrics),
            "metric": pa.array([m for m in metrics for _ in range(n_samples)]),
            "value": pa.array(rng.random(n_samples * n_metrics)),
            "status": pa.array(["ok"] * (n_samples * n_metrics)),
            "detail": pa.nulls(n_samples * n_metrics, pa.string()),
        }
    )
    aggs = {m: Aggregate(0.5, n_samples, {"ok": n_samples}) for m in metrics}
    return Result("retrieval", table, aggs)


def bench_store(result, work: Path) -> float:  # type: ignore[no-untyped-def]
    from datetime import datetime, timezone

    from ragmeter.store import RunRecord, TaskRecord, open_store

    path = work / f"store-{time.perf_counter_ns()}.db"
    with open_store(path) as store:
        run = RunRecord(
            id="r1",
            evaluation_id="e1",
            project="bench",
            system="s",
            created_at=datetime.now(timezone.utc),
            config_hash="0" * 64,
            tasks=[TaskRecord("retrieval", "ok", result=result)],
        )
        t = time.perf_counter()
        store.write([run])
        elapsed = time.perf_counter() - t
    return elapsed


def bench_sqlite(result, work: Path) -> float:  # type: ignore[no-untyped-def]
    path = work / f"raw-{time.perf_counter_ns()}.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE samples (run_key INTEGER, task TEXT, metric TEXT, sample_id TEXT, "
        "value REAL, status TEXT, detail TEXT, PRIMARY KEY (run_key, task, metric, sample_id)) "
        "WITHOUT ROWID"
    )
    t = time.perf_counter()
    table = result.samples
    rows = zip(
        [1] * table.num_rows,
        ["retrieval"] * table.num_rows,
        table.column("metric").to_pylist(),
        table.column("id").to_pylist(),
        table.column("value").to_pylist(),
        table.column("status").to_pylist(),
        table.column("detail").to_pylist(),
        strict=True,
    )
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - t
    conn.close()
    return elapsed


def bench_queries(work: Path) -> dict[str, float]:
    """What the report and dashboard ask of a big store: 1,000 runs and a 100,000-sample run."""
    from datetime import datetime, timedelta, timezone

    from ragmeter.store import RunRecord, TaskRecord, open_store

    small = store_rows(20, 3)
    big = store_rows(100_000, 1)
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    timings: dict[str, float] = {}
    with open_store(work / "queries.db") as store:
        for i in range(0, 1000, 50):  # 1,000 runs, written 50 per transaction
            store.write(
                [
                    RunRecord(
                        id=f"e{j:04d}-s",
                        evaluation_id=f"e{j:04d}",
                        project=f"p{j % 5}",
                        system=f"s{j % 7}",
                        created_at=t0 + timedelta(minutes=j),
                        config_hash="0" * 64,
                        tasks=[TaskRecord("retrieval", "ok", result=small)],
                    )
                    for j in range(i, i + 50)
                ]
            )
        store.write(
            [
                RunRecord(
                    id="big-s",
                    evaluation_id="big",
                    project="p0",
                    system="s0",
                    created_at=t0,
                    config_hash="0" * 64,
                    tasks=[TaskRecord("retrieval", "ok", result=big)],
                )
            ]
        )
        cases = {
            "runs list, page 10 of 50": lambda: store.list_runs(limit=50, offset=450),
            "runs list, one project": lambda: store.list_runs(project="p3", limit=50),
            "samples of the 100k run, sorted by value, page 1000": lambda: store.samples(
                "big-s", metric="m0", order_by="value", descending=True, limit=50, offset=50_000
            ),
            "count of the 100k run, with a search": lambda: store.count_samples(
                "big-s", search="q00999"
            ),
            "one sample of the 100k run": lambda: store.sample("big-s", "q0050000"),
            "trend of one metric over 1,000 runs": lambda: store.trends("p0", "retrieval", "m0"),
        }
        for name, fn in cases.items():
            timings[name] = _median(lambda fn=fn: _timed(fn), 5)
    return timings


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _median(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(fn() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-run", action="store_true")
    parser.add_argument("--skip-store", action="store_true")
    parser.add_argument("--skip-queries", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragmeter-bench-"))
    try:
        if not args.skip_run:
            t = time.perf_counter()
            cfg = generate(args.samples, ROOT)
            print(f"data: {ROOT} ({time.perf_counter() - t:.1f} s to generate or find)")
            values = {}

            def ours() -> float:
                t0 = time.perf_counter()
                values["ragmeter"] = run_ragmeter(cfg, work)
                return time.perf_counter() - t0

            def anchor() -> float:
                t0 = time.perf_counter()
                values["anchor"] = run_anchor(ROOT)
                return time.perf_counter() - t0

            a, b = _median(ours, args.repeat), _median(anchor, args.repeat)
            print(
                f"ragmeter run, {args.samples} samples x 2 systems (retrieval, answers, ner, "
                f"classification, linking; strata, comparisons, store): {a:.2f} s (target < 60 s)"
            )
            print(f"anchor (reference libraries glued by hand, headline numbers only): {b:.2f} s")
            print(f"ratio ragmeter / anchor: {a / b:.2f}")
            print("system b, ragmeter vs anchor:")
            for k, v in values["ragmeter"].items():
                print(f"  {k:10s} {v:.6f}  {values['anchor'][k]:.6f}")
        if not args.skip_store:
            result = store_rows(100_000, 10)
            a = _median(lambda: bench_store(result, work), args.repeat)
            b = _median(lambda: bench_sqlite(result, work), args.repeat)
            print(
                "store 1,000,000 per-sample values (SQLite, one transaction): "
                f"{a:.2f} s (target < 10 s)"
            )
            print(f"anchor (sqlite3 executemany, same primary key): {b:.2f} s")
            print(f"ratio ragmeter / anchor: {a / b:.2f}")
        if not args.skip_queries:
            print("store queries (SQLite; what the report and dashboard ask):")
            for name, seconds in bench_queries(work).items():
                print(f"  {name}: {seconds * 1000:.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
