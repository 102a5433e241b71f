"""Runs graphrag-eval's own SPARQL comparison for ragmeter's tests and benchmarks.

Executed by the Python 3.12 interpreter of the oracle venv (``make .venv-graphrag-eval``), never
imported by ragmeter. Reads one JSON request on stdin, writes one JSON reply on stdout:

- ``{"op": "compare", "cases": [case, ...]}`` → ``{"results": [1.0 | 0.0 | "error: ...", ...]}``
- ``{"op": "time", "cases": [...], "repeat": N, "timeout": S}`` → ``{"results": [{"median": s,
  "cpu_median": s, "runs": [...], "value": v} | {"timeout": S}, ...]}`` (wall and CPU seconds)

A case is ``{"reference": {...}, "actual": {...}, "required": [...], "ordered": bool,
"ignore_duplicates": bool}``.
"""

import json
import signal
import statistics
import sys
import time


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def main():
    from graphrag_eval.steps.sparql import compare_sparql_results

    request = json.load(sys.stdin)

    def run(case):
        return compare_sparql_results(
            case["reference"],
            case["actual"],
            case["required"],
            case.get("ordered", False),
            case.get("ignore_duplicates", True),
        )

    results = []
    if request["op"] == "compare":
        for case in request["cases"]:
            try:
                results.append(float(run(case)))
            except Exception as exc:  # upstream crashes are data for the caller
                results.append(f"error: {type(exc).__name__}: {exc}")
    elif request["op"] == "time":
        signal.signal(signal.SIGALRM, _alarm)
        for case in request["cases"]:
            runs = []
            cpu = []
            value = None
            try:
                for _ in range(request.get("repeat", 5)):
                    signal.setitimer(signal.ITIMER_REAL, request.get("timeout", 60))
                    start, start_cpu = time.perf_counter(), time.process_time()
                    value = run(case)
                    runs.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _Timeout:
                results.append({"timeout": request.get("timeout", 60)})
                continue
            results.append(
                {
                    "median": statistics.median(runs),
                    "cpu_median": statistics.median(cpu),
                    "runs": runs,
                    "value": value,
                }
            )
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
