"""ROUGE-1+2+L speed: ragmeter's engine against Google's rouge-score 0.1.2 (benchmarks/README.md).

    python -m benchmarks.rouge_speed [--pairs 100000] [--repeats 3] [--seed 13]

100,000 synthetic pairs (seed 13; benchmarks/rouge_data.py), one process, interleaved A/B runs,
CPU time (``time.process_time``), best of ``--repeats``; with and without Porter stemming, each
ragmeter run starting from a cold stem cache. Prints pairs/s of both (best run), their ratio
(and the ratio of the median runs), and the
largest difference between any precision, recall or F of the two (it must be 0: the values are
compared with ``==``). ``evaluate()`` end to end (input checks, result table) is printed too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from benchmarks.rouge_data import make_pairs

TYPES = ("rouge-1", "rouge-2", "rouge-l")
RS_TYPES = ("rouge1", "rouge2", "rougeL")


def _cold_caches() -> None:
    from ragmeter.answers import normalizers, rouge_engine, tokenize

    tokenize._STEMS.clear()
    rouge_engine._BSTEMS.clear()
    normalizers._cached.cache_clear()


def run(pairs: list[tuple[str, str]], stem: bool, repeats: int) -> dict[str, float]:
    from rouge_score import rouge_scorer

    import ragmeter.answers as ra
    from ragmeter.answers.rouge_engine import RougeEngine

    refs = [r for r, _ in pairs]
    preds = [p for _, p in pairs]
    times_rs: list[float] = []
    times_rm: list[float] = []
    times_ev: list[float] = []
    rs_out = rm_out = None
    for _ in range(repeats):
        scorer = rouge_scorer.RougeScorer(list(RS_TYPES), use_stemmer=stem)
        t0 = time.process_time()
        rs_out = [scorer.score(r, p) for r, p in pairs]
        times_rs.append(time.process_time() - t0)

        _cold_caches()
        engine = RougeEngine(TYPES, stem=stem)
        t0 = time.process_time()
        rm_out = [engine.best(p, (r,)) for r, p in pairs]
        times_rm.append(time.process_time() - t0)

        _cold_caches()
        t0 = time.process_time()
        res = ra.evaluate(preds, refs, metrics=list(TYPES), stem=stem)
        times_ev.append(time.process_time() - t0)

    max_delta = 0.0
    unequal = 0
    for ref, mine in zip(rs_out, rm_out, strict=True):
        for name, score in zip(RS_TYPES, mine, strict=True):
            theirs = ref[name]
            for a, b in zip(theirs, score, strict=True):
                if a != b:
                    unequal += 1
                    max_delta = max(max_delta, abs(a - b))
    ev_f = res.per_sample["rouge-l"]
    for ref, f in zip(rs_out, ev_f, strict=True):
        if ref["rougeL"].fmeasure != f:
            unequal += 1
            max_delta = max(max_delta, abs(ref["rougeL"].fmeasure - f))
    n = len(pairs)
    best_rs, best_rm, best_ev = min(times_rs), min(times_rm), min(times_ev)
    return {
        "rouge_score": n / best_rs,
        "ragmeter": n / best_rm,
        "evaluate": n / best_ev,
        "ratio": best_rs / best_rm,
        "median_ratio": statistics.median(times_rs) / statistics.median(times_rm),
        "max_delta": max_delta,
        "unequal": unequal,
        "mean_r1": statistics.fmean(r["rouge1"].fmeasure for r in rs_out),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args(argv)
    pairs = make_pairs(args.pairs, seed=args.seed)
    import platform

    import nltk
    import rouge_score

    print(
        f"ROUGE-1+2+L, {args.pairs} pairs (seed {args.seed}), CPU time, best of {args.repeats}; "
        f"Python {platform.python_version()}, rouge-score "
        f"{getattr(rouge_score, '__version__', '0.1.2')}, nltk {nltk.__version__}"
    )
    print(
        f"{'configuration':<26}{'rouge-score/s':>15}{'ragmeter/s':>13}{'ratio':>8}"
        f"{'evaluate()/s':>15}{'max |Δ|':>10}"
    )
    failed = False
    for stem in (False, True):
        r = run(pairs, stem, args.repeats)
        label = "Porter stemming" if stem else "no stemming"
        print(
            f"{label:<26}{r['rouge_score']:>15,.0f}{r['ragmeter']:>13,.0f}{r['ratio']:>7.1f}×"
            f"{r['evaluate']:>15,.0f}{r['max_delta']:>10.3g}"
            f"   (ratio of medians {r['median_ratio']:.1f}×)"
        )
        if r["unequal"]:
            print(f"  {r['unequal']} values differ from rouge-score", file=sys.stderr)
            failed = True
    print(f"mean ROUGE-1 F of the data: {r['mean_r1']:.3f}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
