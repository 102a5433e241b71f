"""SPARQL result comparison: ragmeter.steps vs graphrag-eval 6.6.1 (benchmarks/README.md).

    python -m benchmarks.steps [--repeat 5] [--upstream-timeout 60] [--no-upstream]

Cases (generated deterministically; B2's JSON goes to benchmarks/data/, git-ignored):

- B1: reference 6 columns, actual 9 (the 6 renamed and reordered + 3 extra), 200 rows; the
  actual swaps two values within one column, so every column fingerprint agrees but rows differ.
- B2: 10 columns × 10,000 rows, columns and rows shuffled, equal (JSON parsing timed apart).
- B3: 6 boolean reference columns, 8 actual columns (2 extra boolean), 64 rows holding every
  6-bit combination: equal, and with one cell flipped (sets of values unchanged).

ragmeter is timed in this process on parsed JSON; graphrag-eval runs in its Python 3.12 venv
(``make .venv-graphrag-eval/.installed``) through tests/steps/graphrag_eval_worker.py, on the
same inputs, with a per-run timeout. Medians of ``--repeat`` runs; both times and the ratio are
printed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
WORKER = ROOT / "tests" / "steps" / "graphrag_eval_worker.py"
ORACLE = ROOT / ".venv-graphrag-eval" / "bin" / "python"
XSD = "http://www.w3.org/2001/XMLSchema#"


def _lit(value: str, datatype: str | None = None) -> dict:
    cell = {"type": "literal", "value": value}
    if datatype:
        cell["datatype"] = XSD + datatype
    return cell


def _result(variables: list[str], rows: list[list[dict]]) -> dict:
    return {
        "head": {"vars": variables},
        "results": {
            "bindings": [dict(zip(variables, row, strict=True)) for row in rows],
        },
    }


def case_b1() -> dict[str, Any]:
    rng = random.Random(1)
    cities = ["Oslo", "Bergen", "Trondheim", "Stavanger", "Tromsø"]
    rows = [
        [
            {"type": "uri", "value": f"http://example.com/person/{i}"},
            _lit(f"Person {i}"),
            _lit(str(rng.randint(20, 80)), "integer"),
            _lit(f"{rng.uniform(50, 100):.3f}", "decimal"),
            _lit(rng.choice(cities)),
            _lit(f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "date"),
        ]
        for i in range(200)
    ]
    ref_vars = ["person", "name", "age", "weight", "city", "born"]
    order = [3, 0, 5, 1, 4, 2]
    extra = [
        [_lit(f"note {rng.randint(0, 9)}"), _lit(str(i), "integer"), _lit("x")] for i in range(200)
    ]
    act_rows = [
        [row[j] for j in order[:3]] + [e[0]] + [row[j] for j in order[3:]] + e[1:]
        for row, e in zip(rows, extra, strict=True)
    ]
    rng.shuffle(act_rows)
    name_col = 4  # "name" (reference column 1 = order[3]) sits after the first extra column
    act_rows[0][name_col], act_rows[1][name_col] = act_rows[1][name_col], act_rows[0][name_col]
    act_vars = ["w", "p", "b", "note", "n", "c", "a", "seq", "flag"]
    return {
        "name": "B1 6-of-9 columns, 200 rows, mismatch",
        "reference": _result(ref_vars, rows),
        "actual": _result(act_vars, act_rows),
        "required": ref_vars,
        "expected": 0.0,
        "target": 0.050,
    }


def case_b2() -> dict[str, Any]:
    rng = random.Random(2)
    n_cols, n_rows = 10, 10_000
    ref_vars = [f"c{i}" for i in range(n_cols)]
    rows = []
    for r in range(n_rows):
        row = []
        for c in range(n_cols):
            if c % 3 == 0:
                row.append({"type": "uri", "value": f"http://example.com/e{c}/{r}"})
            elif c % 3 == 1:
                row.append(_lit(f"value {c}-{r}"))
            else:
                row.append(_lit(str(r * n_cols + c), "integer"))
        rows.append(row)
    perm = list(range(n_cols))
    rng.shuffle(perm)
    act_rows = [[row[j] for j in perm] for row in rows]
    rng.shuffle(act_rows)
    return {
        "name": "B2 10 columns × 10,000 rows, shuffled, equal",
        "reference": _result(ref_vars, rows),
        "actual": _result([f"x{j}" for j in perm], act_rows),
        "required": ref_vars,
        "expected": 1.0,
        "target": 1.0,
        "files": True,
    }


def case_b3(mismatch: bool) -> dict[str, Any]:
    rng = random.Random(3)

    def b(bit: int) -> dict:
        return _lit("true" if bit else "false", "boolean")

    rows = [[(n >> k) & 1 for k in range(6)] for n in range(64)]
    ref_vars = [f"f{k}" for k in range(6)]
    perm = list(range(6))
    rng.shuffle(perm)
    act_bits = [[row[j] for j in perm] + [row[0] ^ row[1], rng.randint(0, 1)] for row in rows]
    rng.shuffle(act_bits)
    if mismatch:
        act_bits[5][2] ^= 1
    variant = "one cell flipped" if mismatch else "equal"
    return {
        "name": f"B3 6 boolean of 8 columns, 64 rows, {variant}",
        "reference": _result(ref_vars, [[b(x) for x in row] for row in rows]),
        "actual": _result([f"g{j}" for j in range(8)], [[b(x) for x in row] for row in act_bits]),
        "required": ref_vars,
        "expected": 0.0 if mismatch else 1.0,
        "target": 0.250,
    }


def _time_ragmeter(case: dict[str, Any], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``compare_sparql_results`` on parsed JSON."""
    from ragmeter.steps import compare_sparql_results

    runs, cpu = [], []
    value = None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = compare_sparql_results(case["reference"], case["actual"], case["required"])
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    assert value == case["expected"], (case["name"], value)
    return statistics.median(runs), statistics.median(cpu)


def _time_upstream(cases: list[dict[str, Any]], repeat: int, timeout: float) -> list[Any]:
    request = {
        "op": "time",
        "repeat": repeat,
        "timeout": timeout,
        "cases": [{k: c[k] for k in ("reference", "actual", "required")} for c in cases],
    }
    proc = subprocess.run(
        [str(ORACLE), str(WORKER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=len(cases) * repeat * timeout + 120,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout)["results"]


def _upstream_available() -> str | None:
    if not ORACLE.exists():
        return "graphrag-eval oracle venv missing (make .venv-graphrag-eval/.installed)"
    probe = subprocess.run(
        [str(ORACLE), "-c", "import graphrag_eval"], capture_output=True, text=True
    )
    return None if probe.returncode == 0 else f"cannot import graphrag_eval: {probe.stderr[-200:]}"


def _ratio(theirs: float, ours: float) -> str:
    value = theirs / ours if ours > 0 else float("inf")
    return f"{value:,.0f}×" if value >= 10 else f"{value:.1f}×"


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms" if seconds < 10 else f"{seconds:9.2f} s "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--upstream-timeout", type=float, default=60.0)
    parser.add_argument("--no-upstream", action="store_true")
    args = parser.parse_args(argv)

    cases = [case_b1(), case_b2(), case_b3(False), case_b3(True)]
    for case in cases:  # B2 goes through files, as a user's results would
        if case.get("files"):
            DATA.mkdir(parents=True, exist_ok=True)
            paths = []
            for side in ("reference", "actual"):
                path = DATA / f"steps_b2_{side}.json"
                path.write_text(json.dumps(case[side]), encoding="utf-8")
                paths.append(path)
            parse_runs = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                for path in paths:
                    json.loads(path.read_text(encoding="utf-8"))
                parse_runs.append(time.perf_counter() - start)
            case["parse"] = statistics.median(parse_runs)
            case["size"] = sum(p.stat().st_size for p in paths)

    reason = "disabled (--no-upstream)" if args.no_upstream else _upstream_available()
    upstream: list[Any] = [None] * len(cases)
    if reason is None:
        upstream = _time_upstream(cases, args.repeat, args.upstream_timeout)

    print(
        f"ragmeter.steps SPARQL comparison vs graphrag-eval 6.6.1, median of {args.repeat} runs: "
        "wall time [CPU time]. Targets and ratios use CPU time, which a shared machine's load "
        "does not inflate; wall ratios in brackets."
    )
    if reason is not None:
        print(f"graphrag-eval column skipped: {reason}")
    print(f"{'case':52} {'ragmeter':>22} {'target':>14} {'graphrag-eval':>24} {'ratio':>16}")
    status = 0
    for case, theirs in zip(cases, upstream, strict=True):
        ours, ours_cpu = _time_ragmeter(case, args.repeat)
        meets = "ok" if ours_cpu < case["target"] else "MISSED"
        if meets != "ok":
            status = 1
        if theirs is None:
            upstream_text, ratio = "—", "—"
        elif "timeout" in theirs:
            upstream_text = f"> {theirs['timeout']:.0f} s (timeout)"
            ratio = f"> {theirs['timeout'] / ours:,.0f}× wall"
        else:
            assert theirs["value"] == case["expected"], (case["name"], theirs)
            upstream_text = f"{_fmt(theirs['median'])} [{_fmt(theirs['cpu_median']).strip()}]"
            ratio = f"{_ratio(theirs['cpu_median'], ours_cpu)} [{_ratio(theirs['median'], ours)}]"
        ours_text = f"{_fmt(ours)} [{_fmt(ours_cpu).strip()}]"
        target = f"<{case['target'] * 1000:.0f} ms {meets}"
        print(f"{case['name']:52} {ours_text:>22} {target:>14} {upstream_text:>24} {ratio:>16}")
        if "parse" in case:
            label = f"  JSON parsing of both results, {case['size'] / 1e6:.1f} MB"
            print(f"{label:52} {_fmt(case['parse']):>22}")
    return status


if __name__ == "__main__":
    sys.exit(main())
