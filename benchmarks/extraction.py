"""Extraction benchmarks: ragmeter against nervaluate, seqeval and scikit-learn, same inputs.

    python -m benchmarks.extraction            # the issue's sizes (takes a few minutes)
    python -m benchmarks.extraction --quick    # small sizes, a smoke run

Targets (issue 6): NER evaluation of 100,000 documents with 1,000,000 gold and ~1,000,000
predicted spans under 10 s; classification metrics for 1,000,000 labels under 2 s. Every time
is the median of ``--repeat`` runs in this process. The anchors are run on the same data; where
the full size is impractical for them (nervaluate and seqeval are pure Python), on the first
documents of the same data, and ragmeter is timed on that subset too so that the ratio compares
like with like.

Data is generated deterministically (seed 0) in memory: ten gold spans per document in
disjoint 20-character slots, five labels, and predictions that are 70 % exact, 10 % shifted by
one character, 5 % relabelled, 5 % cut short, 5 % missing and 5 % spurious, so every schema
and the matching kernel are exercised. Spans on each side never overlap, which is what
nervaluate and tag sequences need.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

LABELS = np.array(["LOC", "MUS", "ORG", "PER", "TMP"])
SLOT = 20


def ner_data(n_docs: int, per_doc: int = 10, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = n_docs * per_doc
    doc = np.repeat(np.arange(n_docs), per_doc)
    slot = np.tile(np.arange(per_doc), n_docs)
    gs = slot * SLOT + rng.integers(0, 5, n)
    ge = gs + rng.integers(1, 11, n)
    gl = LABELS[rng.integers(0, len(LABELS), n)]
    r = rng.random(n)
    ps, pe, pl = gs.copy(), ge.copy(), gl.copy()
    shifted = (r >= 0.70) & (r < 0.80)
    ps[shifted] = np.maximum(ps[shifted] - 1, slot[shifted] * SLOT)
    relabel = (r >= 0.80) & (r < 0.85)
    pl[relabel] = LABELS[(np.searchsorted(LABELS, gl[relabel]) + 1) % len(LABELS)]
    short = (r >= 0.85) & (r < 0.90)
    pe[short] = np.maximum(ps[short] + 1, pe[short] - 2)
    spurious = r >= 0.95
    ps[spurious] = slot[spurious] * SLOT + 15
    pe[spurious] = ps[spurious] + 3
    keep_pred = ~((r >= 0.90) & (r < 0.95))  # missing predictions
    ids = np.array([f"doc{i:06d}" for i in range(n_docs)], dtype=object)
    return {
        "n_docs": n_docs,
        "doc_ids": ids,
        "gold": (ids[doc], gs, ge, gl),
        "pred": (ids[doc][keep_pred], ps[keep_pred], pe[keep_pred], pl[keep_pred]),
        "gold_doc": doc,
        "pred_doc": doc[keep_pred],
        # spurious predictions replace a gold span's slot: put the gold back as missed
    }


def subset(data: dict[str, Any], n_docs: int) -> dict[str, Any]:
    g_keep = data["gold_doc"] < n_docs
    p_keep = data["pred_doc"] < n_docs
    return {
        "n_docs": n_docs,
        "doc_ids": data["doc_ids"][:n_docs],
        "gold": tuple(c[g_keep] for c in data["gold"]),
        "pred": tuple(c[p_keep] for c in data["pred"]),
        "gold_doc": data["gold_doc"][g_keep],
        "pred_doc": data["pred_doc"][p_keep],
    }


def median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times = []
    out = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


# -- ragmeter ----------------------------------------------------------------------------------
def ragmeter_ner(data: dict[str, Any]):
    from ragmeter.extraction.columns import SpanTable
    from ragmeter.extraction.ner import evaluate as evaluate_ner

    gold = SpanTable.from_arrays(*data["gold"], documents=data["doc_ids"])
    pred = SpanTable.from_arrays(*data["pred"])
    return evaluate_ner(gold, pred)


def ragmeter_ner_tags(tags: tuple[list[list[str]], list[list[str]]]):
    from ragmeter.extraction.ner import evaluate_tags

    return evaluate_tags(*tags)


# -- anchors -----------------------------------------------------------------------------------
def nervaluate_ner(data: dict[str, Any]):
    from nervaluate import Evaluator

    n = data["n_docs"]
    true: list[list[dict]] = [[] for _ in range(n)]
    pred: list[list[dict]] = [[] for _ in range(n)]
    for side, docs, out in (("gold", data["gold_doc"], true), ("pred", data["pred_doc"], pred)):
        _, s, e, lab = data[side]
        for d, a, b, t in zip(docs.tolist(), s.tolist(), e.tolist(), lab.tolist(), strict=True):
            out[d].append({"label": t, "start": a, "end": b - 1})  # nervaluate's inclusive end
    return Evaluator(true, pred, tags=list(LABELS), loader="dict").evaluate()


def to_tags(data: dict[str, Any]) -> tuple[list[list[str]], list[list[str]]]:
    """One sentence per document: offsets read as token positions (slots of SLOT tokens)."""
    out = []
    n = data["n_docs"]
    for side, docs in (("gold", data["gold_doc"]), ("pred", data["pred_doc"])):
        _, s, e, lab = data[side]
        seqs = [["O"] * (SLOT * 10) for _ in range(n)]
        for d, a, b, t in zip(docs.tolist(), s.tolist(), e.tolist(), lab.tolist(), strict=True):
            seq = seqs[d]
            seq[a] = f"B-{t}"
            for k in range(a + 1, b):
                seq[k] = f"I-{t}"
        out.append(seqs)
    return out[0], out[1]


def seqeval_ner(tags):
    from seqeval.metrics import classification_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return classification_report(*tags, output_dict=True, zero_division=0)


def cls_data(n: int, seed: int = 1) -> tuple[dict[str, str], dict[str, str], list[str], list[str]]:
    from ragmeter.extraction.profiles import HERITAGE_TYPE_CODES

    rng = np.random.default_rng(seed)
    codes = np.array(HERITAGE_TYPE_CODES)
    weights = rng.dirichlet(np.ones(len(codes)))
    g = codes[rng.choice(len(codes), n, p=weights)]
    wrong = rng.random(n) < 0.3
    p = g.copy()
    p[wrong] = codes[rng.integers(0, len(codes), int(wrong.sum()))]
    ids = [f"item{i:07d}" for i in range(n)]
    gl, pl = g.tolist(), p.tolist()
    return dict(zip(ids, gl, strict=True)), dict(zip(ids, pl, strict=True)), gl, pl


def ragmeter_cls(gold: dict[str, str], pred: dict[str, str]):
    from ragmeter.extraction.classification import evaluate as evaluate_types

    return evaluate_types(gold, pred, profile="heritage")


def sklearn_cls(y_true: list[str], y_pred: list[str]):
    from sklearn.metrics import (
        accuracy_score,
        balanced_accuracy_score,
        confusion_matrix,
        precision_recall_fscore_support,
    )

    labels = sorted(set(y_true) | set(y_pred))
    out = {
        "accuracy": accuracy_score(y_true, y_pred),
        "balanced_accuracy": balanced_accuracy_score(y_true, y_pred),
        "per_class": precision_recall_fscore_support(
            y_true, y_pred, labels=labels, zero_division=0
        ),
        "cm": confusion_matrix(y_true, y_pred, labels=labels),
    }
    for avg in ("micro", "macro", "weighted"):
        out[avg] = precision_recall_fscore_support(
            y_true, y_pred, labels=labels, average=avg, zero_division=0
        )
    return out


def same_counts(ours, ref) -> None:
    """The benchmark compares like with like: ragmeter's counts equal nervaluate's."""
    for schema, name in (
        ("strict", "strict"),
        ("exact", "exact"),
        ("partial", "partial"),
        ("type", "ent_type"),
    ):
        a, b = ours.overall[schema], ref["overall"][name]
        got = (a["COR"], a["INC"], a["PAR"], a["MIS"], a["SPU"])
        assert got == (b.correct, b.incorrect, b.partial, b.missed, b.spurious), schema


# -- main --------------------------------------------------------------------------------------
def row(name: str, size: str, ours: float, anchor_name: str, theirs: float | None) -> str:
    ratio = f"{theirs / ours:6.1f}×" if theirs else "   —  "
    anchor = f"{theirs:8.2f} s" if theirs else "      — "
    return f"{name:<34} {size:<30} {ours:8.3f} s   {anchor_name:<14} {anchor}   {ratio}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--anchor-docs", type=int, default=10_000, help="documents for nervaluate")
    ap.add_argument("--seqeval-docs", type=int, default=2_000, help="sentences for seqeval")
    ap.add_argument(
        "--full-anchors",
        action="store_true",
        help="also run nervaluate once on the full data (about a minute)",
    )
    args = ap.parse_args(argv)
    n_docs = 2_000 if args.quick else 100_000
    n_labels = 20_000 if args.quick else 1_000_000
    anchor_docs = min(args.anchor_docs, n_docs // 10 if args.quick else args.anchor_docs)
    rep = args.repeat

    print("generating data ...", flush=True)
    data = ner_data(n_docs)
    n_gold, n_pred = len(data["gold"][1]), len(data["pred"][1])
    lines = [
        f"{'measurement':<34} {'size':<30} {'ragmeter':>10}   {'anchor':<14} {'time':>10}   ratio",
        "-" * 118,
    ]

    t_full, report = median_time(lambda: ragmeter_ner(data), rep)
    lines.append(
        row(
            "NER, 4 SemEval schemas + entity",
            f"{n_docs:,} docs, {n_gold:,}+{n_pred:,} spans",
            t_full,
            "(target 10 s)",
            None,
        )
    )
    print(lines[-1], flush=True)

    sub = subset(data, anchor_docs)
    s_gold, s_pred = len(sub["gold"][1]), len(sub["pred"][1])
    size = f"{anchor_docs:,} docs, {s_gold:,}+{s_pred:,} spans"
    t_ours, ours = median_time(lambda: ragmeter_ner(sub), rep)
    t_nerv, ref = median_time(lambda: nervaluate_ner(sub), 1)
    same_counts(ours, ref)
    lines.append(row("NER vs nervaluate (same counts)", size, t_ours, "nervaluate", t_nerv))
    print(lines[-1], flush=True)
    if args.full_anchors:
        t_nerv_full, ref_full = median_time(lambda: nervaluate_ner(data), 1)
        same_counts(report, ref_full)
        label, size, anchor, t_anchor = (
            "NER vs nervaluate, full size",
            f"{n_docs:,} docs",
            "nervaluate",
            t_nerv_full,
        )
    else:
        label, size, anchor = (
            "  nervaluate extrapolated to full",
            f"{n_docs:,} docs (linear)",
            "nervaluate~",
        )
        t_anchor = t_nerv * n_docs / anchor_docs
    lines.append(row(label, size, t_full, anchor, t_anchor))
    print(lines[-1], flush=True)

    seq_docs = min(args.seqeval_docs, anchor_docs)
    tags = to_tags(subset(data, seq_docs))
    t_tags, ours_t = median_time(lambda: ragmeter_ner_tags(tags), rep)
    t_seq, ref_s = median_time(lambda: seqeval_ner(tags), 1)
    assert abs(ours_t.entity["micro"]["f1"] - ref_s["micro avg"]["f1-score"]) < 1e-9
    n_tok = sum(len(s) for s in tags[0])
    lines.append(
        row(
            "NER tags vs seqeval (same F1)",
            f"{seq_docs:,} sentences, {n_tok:,} tokens",
            t_tags,
            "seqeval",
            t_seq,
        )
    )
    print(lines[-1], flush=True)

    gold, pred, gl, pl = cls_data(n_labels)
    t_cls, r = median_time(lambda: ragmeter_cls(gold, pred), rep)
    t_sk, ref_c = median_time(lambda: sklearn_cls(gl, pl), 1)
    assert (
        abs(r.macro["f1"] - ref_c["macro"][2]) < 1e-9
        and abs(r.accuracy - ref_c["accuracy"]) < 1e-12
    )
    lines.append(
        row(
            "classification (all metrics)",
            f"{n_labels:,} labels, 19 classes",
            t_cls,
            "scikit-learn",
            t_sk,
        )
    )
    print(lines[-1], flush=True)

    print()
    print("\n".join(lines))
    print(
        f"\nmedian of {rep} ragmeter runs (anchors: 1 run); ratio = anchor time / ragmeter time. "
        f"NER F1 strict={report.overall['strict']['f1']:.4f} "
        f"type={report.overall['type']['f1']:.4f}."
    )


if __name__ == "__main__":
    main()
