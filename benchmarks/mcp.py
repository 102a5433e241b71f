"""Overhead of ``ragmeter mcp`` over the library calls it wraps (issue 14 targets).

    python -m benchmarks.mcp [--repeat 30]

1. ``evaluate_trec`` on trec_eval's test files (qrels.test, results.test; UltraRAG's five
   families at 1, 5, 10, 20, 50, 100) as a tool call over stdio, against the library call it
   wraps (``ragmeter.retrieval.evaluate(...).to_ultrarag()``) in this process. Target: the tool
   call's median exceeds the library call's median by less than 20 ms.
2. Start-up: spawning ``python -m ragmeter mcp`` until its answer to ``initialize`` arrives.
   Target: under 1 s. Beside it, spawned the same way: importing the SDK's server module alone
   (``python -c "import mcp.server.mcpserver"``, ``mcp.server.fastmcp`` with 1.x), which no
   server on this SDK can start without, and the bare interpreter (``python -c pass``). The
   server's time minus the SDK import is ragmeter's share: its own modules, the tools'
   registration and the ``initialize`` round trip.

Times are medians over ``--repeat`` calls (start-up: over ``--starts`` spawns of each kind,
taken in turn so that a change of load hits all three); the load average is printed before
and after. The server and client run with whichever mcp SDK is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREC = REPO / "tests" / "data" / "conformance" / "trec_eval"
KS = [1, 5, 10, 20, 50, 100]
MEASURES = ["recip_rank", "map"] + [f"{m}.{','.join(map(str, KS))}" for m in ("ndcg_cut", "P")]
MEASURES.append(f"recall.{','.join(map(str, KS))}")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    return env


def library_call() -> dict:
    from ragmeter.retrieval import evaluate

    res = evaluate(str(TREC / "qrels.test"), str(TREC / "results.test"), MEASURES, per_query=False)
    return json.loads(res.to_ultrarag())


def time_library(repeat: int) -> tuple[float, dict]:
    value = library_call()  # warm-up: imports and caches
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        library_call()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


async def time_tool(repeat: int) -> tuple[float, dict]:
    sys.path.insert(0, str(REPO))
    from mcp import StdioServerParameters

    from tests.mcp.session import open_session

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragmeter", "mcp", "--root", str(TREC), "--tools", "ultrarag"],
        env=_env(),
    )
    args = {"run_path": "results.test", "qrels_path": "qrels.test"}
    async with open_session(params) as s:
        value = await s.call_ok("evaluate_trec", args)  # warm-up
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            await s.call_ok("evaluate_trec", args)
            times.append(time.perf_counter() - t)
    return statistics.median(times), value["eval_res"]


def _initialize() -> bytes:
    msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    return (json.dumps(msg) + "\n").encode()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_start(argv: list[str], *, protocol: bool) -> tuple[float, float]:
    """Wall time from spawn to the answer of ``initialize`` (or, for the anchors, to the exit),
    and the CPU time of the whole process (the server exits when its stdin closes), which other
    processes on the machine distort less than the wall time."""
    with tempfile.TemporaryDirectory() as root:
        cpu = _children_cpu()
        t = time.perf_counter()
        proc = subprocess.Popen(
            argv + (["--root", root] if protocol else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
        if protocol:
            proc.stdin.write(_initialize())
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            elapsed = time.perf_counter() - t
            assert reply["id"] == 1 and "result" in reply, reply
            proc.stdin.close()
        else:
            proc.stdin.close()
            proc.wait()
            elapsed = time.perf_counter() - t
        proc.wait(timeout=10)
    return elapsed, _children_cpu() - cpu


def sdk_module() -> str:
    """The installed SDK's server module: what importing the SDK means for a server."""
    from ragmeter.mcp.sdk import MAJOR

    return "mcp.server.mcpserver" if MAJOR >= 2 else "mcp.server.fastmcp"


def time_starts(n: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU times of the server, the SDK import alone and the bare interpreter."""
    kinds = {
        "server": ([sys.executable, "-m", "ragmeter", "mcp"], True),
        "sdk": ([sys.executable, "-c", f"import {sdk_module()}"], False),
        "bare": ([sys.executable, "-c", "pass"], False),
    }
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    for _ in range(n):
        for kind, (argv, protocol) in kinds.items():
            times[kind].append(time_start(argv, protocol=protocol))
    return {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for k, v in times.items()
    }


PARTS = """
import json, sys, time
marks = [(time.perf_counter(), time.process_time())]
import ragmeter.mcp.sdk
marks.append((time.perf_counter(), time.process_time()))
from ragmeter.mcp import server, transport
from ragmeter.mcp.paths import Roots
from ragmeter.mcp.settings import Settings
marks.append((time.perf_counter(), time.process_time()))
server.build_server(Settings(roots=Roots([sys.argv[1]])))
marks.append((time.perf_counter(), time.process_time()))
print(json.dumps([[b[0] - a[0], b[1] - a[1]] for a, b in zip(marks, marks[1:])]))
"""


def time_parts(n: int) -> list[tuple[float, float]]:
    """Inside a fresh process each time, wall and CPU time of: the SDK's import, ragmeter's
    server modules, and the registration of every tool (the SDK builds a pydantic model and a
    JSON schema per tool)."""
    runs = []
    with tempfile.TemporaryDirectory() as root:
        for _ in range(n):
            out = subprocess.run(
                [sys.executable, "-c", PARTS, root],
                capture_output=True,
                text=True,
                env=_env(),
                check=True,
            )
            runs.append(json.loads(out.stdout))
    return [
        (statistics.median(r[i][0] for r in runs), statistics.median(r[i][1] for r in runs))
        for i in range(3)
    ]


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="tool and library calls timed")
    ap.add_argument("--starts", type=int, default=5, help="server starts timed")
    ap.add_argument("--starts-only", action="store_true", help="time the start-up only")
    a = ap.parse_args(argv)

    print(f"load average (1/5/15 min) before: {_load()}")
    if not a.starts_only:
        time_calls(a.repeat)
    t = time_starts(a.starts)
    print(f"start to initialize answer, median of {a.starts}:")
    print(f"  {'':<28}{'wall':>11}{'CPU':>11}")
    share = tuple(s - k for s, k in zip(t["server"], t["sdk"], strict=True))
    rows = [
        ("ragmeter mcp", t["server"], "(target < 1000 ms wall)"),
        (f"import {sdk_module()}", t["sdk"], "(the SDK alone)"),
        ("ragmeter's share", share, "(server minus SDK import)"),
        ("python -c pass", t["bare"], ""),
    ]
    for label, (wall, cpu), note in rows:
        print(f"  {label:<28}{wall * 1000:8.0f} ms{cpu * 1000:8.0f} ms {note}".rstrip())
    parts = time_parts(a.starts)
    print(f"inside the server process, median of {a.starts}:")
    labels = ("import the SDK", "ragmeter.mcp modules", "registering all 14 tools")
    for label, (wall, cpu) in zip(labels, parts, strict=True):
        print(f"  {label:<28}{wall * 1000:8.0f} ms{cpu * 1000:8.0f} ms")
    print(f"load average (1/5/15 min) after: {_load()}")
    return 0


def time_calls(repeat: int) -> None:
    lib, lib_value = time_library(repeat)
    tool, tool_value = asyncio.run(time_tool(repeat))
    assert tool_value == lib_value, "the tool and the library disagree"
    print(f"evaluate_trec on qrels.test/results.test, median of {repeat}:")
    print(f"  library call       {lib * 1000:8.2f} ms")
    print(f"  tool call (stdio)  {tool * 1000:8.2f} ms")
    print(f"  overhead           {(tool - lib) * 1000:8.2f} ms (target < 20 ms); "
          f"ratio tool/library {tool / lib:.2f}")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
