"""``ragmeter trec``: a drop-in for trec_eval (docs/retrieval.md#command-line).

Arguments are parsed with trec_eval's getopt conventions (options before or after the files,
attached or separate values, ``--name=value``), without typer or rich: the command keeps
trec_eval's lean start (docs/retrieval.md#speed). :func:`main` returns the exit status: 0 (also
with warnings), 2 for bad input or usage (one line on stderr, nothing on stdout), 130 when
interrupted.
"""

from __future__ import annotations

import getopt
import os
import sys
from collections.abc import Sequence
from typing import Any

from ragmeter.cli import trec_runs

__all__ = ["main"]

_SHORT = "hvqm:cl:nD:JN:M:R:T:Z:o:"
_LONG = [
    "help",
    "version",
    "query_eval_wanted",
    "measure=",
    "complete_rel_info_wanted",
    "level_for_rel=",
    "nosummary",
    "Debug_level=",
    "Judged_docs_only",
    "Number_docs_in_coll=",
    "Max_retrieved_per_topic=",
    "Rel_info_format=",
    "Results_format=",
    "Zscore=",
    "output=",
    "format=",
    "json",
    "csv",
    "names=",
    "digits=",
    "gain=",
    "ks=",
    "dedupe=",
    "ties=",
    "qrels-format=",
    "run-format=",
    "qid-field=",
    "ids-field=",
    "gold-field=",
    "source-field=",
    "by-source",
    "stream",
    "batch-rows=",
    "threads=",
    "quiet",
    "executor=",
    "workers=",
    "scheduler=",
    "partitions=",
    "worker-memory=",
    "spill=",
    "plan=",
    "keep-work",
    "work-dir=",
]

HELP = """\
usage: ragmeter trec [options] QRELS RUN [RUN ...]

A drop-in for trec_eval 10.0: same flags, same output, same numbers.
RUN may be '-' (stdin); any file may be gzip-compressed. With several runs the
qrels are read once, the runs are evaluated in parallel, and the output is each
run's output in the order given (--format csv/json: one record set, with a run
column); a bad run stops the command before any output.

trec_eval options:
  -q, --query_eval_wanted        print one block per query, then the summary
  -m M, --measure M              measure or nickname (official, all_trec, set, ultrarag);
                                 both styles: map P.5,10 ndcg_cut.10 | AP P@10 nDCG@10 RR
  -c, --complete_rel_info_wanted score judged queries missing from the run as 0
  -l N, --level_for_rel N        relevance level (default 1)
  -n, --nosummary                no summary rows
  -M N, --Max_retrieved_per_topic N   keep the first N ranked documents per query
  -N N, --Number_docs_in_coll N  collection size (utility only)
  -J, --Judged_docs_only         drop unjudged documents, then renumber the ranks
  -Z FILE, --Zscore FILE         print z-scores
  -h, --help; -v, --version

ragmeter options:
  --format trec|json|csv|ultrarag   output format (default trec); --json, --csv
  -o PATH, --output PATH         write the output to a file (atomically)
  --names as-requested|trec|ir   how measure names are printed
  --digits N                     decimals in trec text (default 4)
  --gain linear|exp              gain of ndcg and ndcg_cut (default linear)
  --ks 1,5,10,...                cutoffs of the ultrarag preset
  --dedupe first|max             keep one line per duplicated (qid, docno)
  --ties docno|file              order of equal scores (default docno, descending)
  --qrels-format trec|tsv|jsonl, --run-format trec|jsonl
  --qid-field, --ids-field, --gold-field, --source-field   JSONL field names
  --by-source                    source breakdown (json or csv output)
  --stream, --batch-rows N       bounded-memory mode for runs grouped by query
  --spill DIR, --keep-work       unsorted runs in bounded memory: qid-hash buckets in DIR
  --plan auto|grouped|hash       how a large run is cut (docs/scaleout.md)
  --threads N                    worker threads (default: CPU cores)
  --quiet                        no warnings
  --executor local|dask, --workers N, --scheduler ADDR, --partitions N, --worker-memory SIZE
                                 scale-out on Dask (docs/scaleout.md)
  --work-dir DIR                 finished shards a re-run on Dask reuses (default .ragmeter/work)
"""


_EXECUTOR_ENV = ("RAGMETER_EXECUTOR", "RAGMETER_DASK_SCHEDULER")


class _Usage(Exception):
    pass


def _int(value: str, flag: str, minimum: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise _Usage(f"{flag} needs an integer, not '{value}'") from None
    if n < minimum:
        raise _Usage(f"{flag} needs an integer ≥ {minimum}, not {n}")
    return n


def _choice(value: str, flag: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise _Usage(f"{flag} takes {', '.join(choices[:-1])} or {choices[-1]}, not '{value}'")
    return value


def _parse(argv: Sequence[str]) -> dict[str, Any]:
    try:
        opts, args = getopt.gnu_getopt(list(argv), _SHORT, _LONG)
    except getopt.GetoptError as exc:
        raise _Usage(f"{exc.msg} (see ragmeter trec --help)") from None
    cfg: dict[str, Any] = {
        "measures": [],
        "per_query": False,
        "complete": False,
        "level": 1,
        "summary": True,
        "num_docs": 0,
        "max_docs": None,
        "judged_only": False,
        "zscores": None,
        "output": None,
        "format": "trec",
        "names": "as-requested",
        "digits": 4,
        "gain": "linear",
        "ks": None,
        "dedupe": None,
        "ties": "docno",
        "qrels_format": "trec",
        "run_format": "trec",
        "qid_field": "qid",
        "ids_field": "retrieved_ids",
        "gold_field": "gold_citations",
        "source_field": None,
        "by_source": False,
        "stream": False,
        "batch_rows": 2_000_000,
        "threads": None,
        "quiet": False,
        "help": False,
        "version": False,
    }
    scale: dict[str, Any] = {}
    for flag, value in opts:
        if flag in ("-h", "--help"):
            cfg["help"] = True
        elif flag in ("-v", "--version"):
            cfg["version"] = True
        elif flag in ("-q", "--query_eval_wanted"):
            cfg["per_query"] = True
        elif flag in ("-m", "--measure"):
            cfg["measures"].append(value)
        elif flag in ("-c", "--complete_rel_info_wanted"):
            cfg["complete"] = True
        elif flag in ("-l", "--level_for_rel"):
            cfg["level"] = _int(value, "-l", 0)
        elif flag in ("-n", "--nosummary"):
            cfg["summary"] = False
        elif flag in ("-D", "--Debug_level"):
            raise _Usage(
                "-D is not supported (trec_eval's debug output has no ragmeter equivalent)"
            )
        elif flag in ("-J", "--Judged_docs_only"):
            cfg["judged_only"] = True
        elif flag in ("-N", "--Number_docs_in_coll"):
            cfg["num_docs"] = _int(value, "-N", 0)
        elif flag in ("-M", "--Max_retrieved_per_topic"):
            cfg["max_docs"] = _int(value, "-M", 1)
        elif flag in ("-R", "--Rel_info_format"):
            if value != "qrels":
                raise _Usage(
                    f"-R {value} is not supported (ragmeter implements the qrels format only; "
                    "preference and judgment-group measures are out of scope)"
                )
        elif flag in ("-T", "--Results_format"):
            if value != "trec_results":
                raise _Usage(
                    f"-T {value} is not supported (ragmeter implements the trec_results format "
                    "only; use --run-format jsonl for JSONL traces)"
                )
        elif flag in ("-Z", "--Zscore"):
            cfg["zscores"] = value
        elif flag in ("-o", "--output"):
            cfg["output"] = value
        elif flag == "--format":
            cfg["format"] = _choice(value, "--format", ("trec", "json", "csv", "ultrarag"))
            cfg["format_given"] = True
            _no_contradiction(cfg)
        elif flag == "--json":
            cfg["json"] = True
            _no_contradiction(cfg)
        elif flag == "--csv":
            cfg["format"] = "csv"
            cfg["format_given"] = True
            _no_contradiction(cfg)
        elif flag == "--names":
            cfg["names"] = _choice(value, "--names", ("as-requested", "trec", "ir"))
        elif flag == "--digits":
            cfg["digits"] = _int(value, "--digits", 0)
        elif flag == "--gain":
            cfg["gain"] = _choice(value, "--gain", ("linear", "exp"))
        elif flag == "--ks":
            try:
                ks = sorted({int(k) for k in value.split(",") if k.strip()})
            except ValueError:
                raise _Usage(f"--ks takes integers such as 1,5,10, not '{value}'") from None
            if not ks or ks[0] < 1:
                raise _Usage(f"--ks takes integers ≥ 1, not '{value}'")
            cfg["ks"] = ks
        elif flag == "--dedupe":
            cfg["dedupe"] = _choice(value, "--dedupe", ("first", "max"))
        elif flag == "--ties":
            cfg["ties"] = _choice(value, "--ties", ("docno", "file"))
        elif flag == "--qrels-format":
            cfg["qrels_format"] = _choice(value, "--qrels-format", ("trec", "tsv", "jsonl"))
        elif flag == "--run-format":
            cfg["run_format"] = _choice(value, "--run-format", ("trec", "jsonl"))
        elif flag == "--qid-field":
            cfg["qid_field"] = value
        elif flag == "--ids-field":
            cfg["ids_field"] = value
        elif flag == "--gold-field":
            cfg["gold_field"] = value
        elif flag == "--source-field":
            cfg["source_field"] = value
        elif flag == "--by-source":
            cfg["by_source"] = True
        elif flag == "--stream":
            cfg["stream"] = True
        elif flag == "--batch-rows":
            cfg["batch_rows"] = _int(value, "--batch-rows", 1)
        elif flag == "--threads":
            cfg["threads"] = _int(value, "--threads", 1)
        elif flag == "--quiet":
            cfg["quiet"] = True
        elif flag in ("--executor", "--scheduler", "--worker-memory", "--work-dir"):
            scale[flag[2:].replace("-", "_")] = value
        elif flag in ("--workers", "--partitions"):
            scale[flag[2:]] = _int(value, flag, 1)
        elif flag in ("--spill", "--plan", "--keep-work"):  # the hash plan, docs/scaleout.md
            cfg[flag[2:].replace("-", "_")] = True if flag == "--keep-work" else value
    cfg["args"] = args
    cfg["executor"] = None
    if scale or any(os.environ.get(v) for v in _EXECUTOR_ENV):
        # only then: the executors package (and cloudpickle behind it) costs ~15 ms of start
        from ragmeter.errors import UsageError
        from ragmeter.executors.settings import resolve_settings

        try:  # flags, then RAGMETER_EXECUTOR / RAGMETER_DASK_SCHEDULER
            settings = resolve_settings(**scale)
        except UsageError as exc:
            raise _Usage(exc.message) from None
        cfg["executor"] = None if settings.is_local else settings
    from ragmeter.retrieval.spill_flags import spill_flags

    spill_flags(cfg, scale, _Usage)
    return cfg


def _no_contradiction(cfg: dict[str, Any]) -> None:
    """``--json`` is ``--format json``; with another ``--format`` (or ``--csv``) it is a
    contradiction that is refused (as every ragmeter command does), whichever flag comes first."""
    if not cfg.get("json"):
        return
    if cfg.get("format_given") and cfg["format"] != "json":
        raise _Usage(f"--json and --format {cfg['format']} contradict each other")
    cfg["format"] = "json"


def _run(cfg: dict[str, Any]) -> tuple[str, list[str]]:
    """Evaluate every run; return the complete output text and the warnings to print.

    Nothing is printed here: with several runs, a bad run anywhere stops the command before any
    output (warnings included) of the good ones.
    """
    args = cfg["args"]
    if len(args) < 2:
        raise _Usage(
            f"expected 2 or more files (QRELS RUN [RUN ...]), got {len(args)}"
            + (f": {' '.join(args)}" if args else "")
        )
    qrels_path, run_paths = args[0], args[1:]
    if qrels_path == "-":
        raise _Usage("QRELS cannot be '-' (only the run may come from stdin)")
    if run_paths.count("-") > 1:
        raise _Usage("only one RUN can be '-' (stdin)")
    if cfg["output"]:
        from ragmeter.io.files import check_outputs

        # before reading: `-o a.run qrels a.run` would replace the run with its evaluation
        check_outputs({"--output": cfg["output"]}, [qrels_path, *run_paths])
    many = len(run_paths) > 1
    fmt = cfg["format"]
    if many and fmt == "ultrarag":
        raise _Usage("--format ultrarag takes one RUN (it is one run's dictionary)")
    if many and cfg["by_source"]:
        raise _Usage("--by-source takes one RUN")
    if cfg["by_source"] and fmt not in ("json", "csv"):
        raise _Usage("--by-source needs --format json or --format csv")
    if cfg["by_source"] and cfg["stream"]:
        raise _Usage("--by-source cannot be combined with --stream")
    # only the JSON document reports the inputs' sha256; hashing costs a full read otherwise
    hashes = fmt == "json"
    cfg["plain"] = _plain_path(cfg, [qrels_path, *run_paths])
    from ragmeter.retrieval.recipe import build_evaluator, evaluator_recipe

    recipe = evaluator_recipe(cfg, qrels_path)
    if many and trec_runs.spawn_workers(cfg, run_paths):
        # The workers start at once and each parses the qrels; this process builds no
        # evaluator (its parse would delay their start; a bad qrels fails every run alike).
        from ragmeter.retrieval.multirun import map_runs

        spawn = (trec_runs.worker_init, (recipe, cfg, hashes))
        results = map_runs(
            trec_runs.worker_evaluate, run_paths, threads=cfg["threads"], spawn=spawn
        )
        return _combine(cfg, run_paths, results)
    if cfg.get("own_process"):
        if not cfg["plain"]:
            _import_arrow(cfg)
        _keep_freed_memory([qrels_path, *run_paths])
    if cfg["threads"] and not cfg["plain"]:
        import pyarrow as pa

        pa.set_cpu_count(cfg["threads"])
        pa.set_io_thread_count(cfg["threads"])
    ahead = None
    qrels = None
    if cfg["plain"]:
        from ragmeter.io.trec.plain import read_qrels_plain

        qrels = read_qrels_plain(qrels_path)
        if not many and cfg["executor"] is None:
            # the run is read and coded on a thread while this one indexes the qrels
            from ragmeter.background import Background

            ahead = Background(trec_runs.read_coded, run_paths[0])
    evaluator = build_evaluator(recipe, qrels=qrels)
    if not many and (not cfg["stream"] or cfg["spill"]) and cfg["executor"] is not None:
        from ragmeter.executors.retrieval import evaluate_on_executor

        done = evaluate_on_executor(cfg, evaluator, recipe, run_paths[0])
        if done is not None:  # else a case the executor leaves to the in-process path
            result, order, meta = done
            out, warns = trec_runs.render(cfg, result, None, evaluator, order=order, executor=meta)
            return trec_runs.as_text(out), warns

    def one(run_path: str) -> tuple[Any, list[str]]:
        return trec_runs.evaluate_one(evaluator, cfg, run_path, hashes)

    if not many:
        out, warns = trec_runs.evaluate_one(evaluator, cfg, run_paths[0], hashes, ahead=ahead)
        return trec_runs.as_text(out), warns
    from ragmeter.retrieval.multirun import map_runs

    return _combine(cfg, run_paths, map_runs(one, run_paths, threads=cfg["threads"]))


def _import_arrow(cfg: dict[str, Any]) -> None:
    """Import pyarrow without cloudpickle (docs/retrieval.md#speed).

    pyarrow.lib tries ``import cloudpickle as pickle`` first (Dask's extra installs it), then
    rebinds that name to the standard library's pickle (pyarrow 26: ``types.pxi``, ``io.pxi``),
    so cloudpickle and what it loads (logging, uuid, ...) cost ~5 ms of the start for nothing
    pyarrow uses. The import is refused while pyarrow loads (it then falls back, as where
    cloudpickle is not installed) and allowed again at once for anything imported later; with
    an executor (Dask, which pickles with it) nothing is changed.
    """
    if cfg["executor"] is not None or "pyarrow" in sys.modules or "cloudpickle" in sys.modules:
        return
    sys.modules["cloudpickle"] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        import pyarrow  # noqa: F401
    finally:
        del sys.modules["cloudpickle"]


# inputs up to this size (qrels and runs together, ~1.5M run lines) keep the memory they free
# (below); the 7M-line benchmark runs (~250 MB), whose peak RSS is measured, are well above it
_KEEP_FREED_INPUTS = 64 << 20


def _keep_freed_memory(paths: list[str]) -> None:
    """Let the C allocator keep and reuse the memory numpy frees (docs/retrieval.md#speed).

    By default glibc maps every block over 128 KiB afresh and returns freed memory above
    128 KiB at the top of the heap to the system, so each of the evaluation's many temporary
    arrays faults its pages in again. Raising the thresholds to 64 MiB / 256 MiB makes later
    arrays reuse those pages (12-23% fewer page faults, 3-4% less CPU from 100,000 to 1M lines).
    Only for inputs up to 64 MB: on larger ones the memory kept could raise the peak RSS.
    Nothing is changed when a ``MALLOC_*`` variable is set, or outside glibc (no ``mallopt``).
    """
    if any(k.startswith("MALLOC_") for k in os.environ):
        return
    try:
        total = sum(os.path.getsize(p) for p in paths if p != "-")
    except OSError:
        return  # reported by the parse
    if total > _KEEP_FREED_INPUTS:
        return
    import ctypes  # numpy imports it as well

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD
    mallopt(-2, 64 << 20)  # M_TOP_PAD
    mallopt(-3, 64 << 20)  # M_MMAP_THRESHOLD


def _combine(
    cfg: dict[str, Any], run_paths: list[str], results: list[tuple[Any, list[str]]]
) -> tuple[str, list[str]]:
    """The output of several runs as one text, and their warnings in order."""
    from ragmeter.retrieval.multirun import combine_csv, combine_json

    fmt = cfg["format"]
    warns = [w for _, ws in results for w in ws]
    outs = [o for o, _ in results]
    if fmt == "trec":
        # exactly what trec_eval prints for each run, one after the other
        return "".join(outs), warns
    if fmt == "csv":
        return combine_csv(run_paths, outs), warns
    return trec_runs.as_text(combine_json(run_paths, outs)), warns


def _plain_path(cfg: dict[str, Any], paths: list[str]) -> bool:
    """Whether the inputs are parsed without Arrow (docs/retrieval.md#speed): small and medium
    TREC files printed as trec_eval text, in-process (see ragmeter.io.trec.plain)."""
    if (
        cfg["format"] != "trec"
        or cfg["stream"]
        or cfg["by_source"]
        or cfg["executor"] is not None
        or cfg["qrels_format"] != "trec"
        or cfg["run_format"] != "trec"
    ):
        return False
    from ragmeter.io.trec.sizes import use_plain

    return use_plain(paths)


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """Run ``ragmeter trec`` on ``argv`` (without the command name) and return the exit status.

    ``own_process``: the process runs this one command and ends (the console entry), so the
    start-up may change process-wide state for speed (pyarrow without cloudpickle, the C
    allocator's thresholds; docs/retrieval.md#speed). In-process callers keep theirs.
    """
    from ragmeter.errors import RagmeterError

    # Set before numpy and pyarrow load (in-process callers keep their own settings), each
    # measured on the 7M-line benchmark: numpy's BLAS would start a thread pool that spins at
    # import (ragmeter trec does no BLAS); transparent huge pages, which numpy's arrays and
    # pyarrow's default allocator (mimalloc) get, are zeroed 2 MB at a time and cost up to
    # 0.5 s of system time when memory was just freed by another process; the system allocator
    # also gives a lower peak RSS here (~365 MB against ~450 MB). Not OMP_NUM_THREADS: Arrow
    # sizes its CPU thread pool from it, and OMP_NUM_THREADS=1 made the CSV parse serial.
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cfg = _parse(argv)
        cfg["own_process"] = own_process
        if cfg["help"]:
            sys.stdout.write(HELP)
            return 0
        if cfg["version"]:
            from ragmeter._version import __version__

            print(f"ragmeter {__version__} (trec_eval 10.0 compatible)")
            return 0
        import gc
        import warnings

        from ragmeter.warnings import RagmeterWarning

        gc_was_enabled = gc.isenabled()
        gc.disable()  # a short run that creates no reference cycles worth collecting
        try:
            with warnings.catch_warnings():
                # the command prints its warnings itself, as "ragmeter trec: warning: …"
                warnings.simplefilter("ignore", RagmeterWarning)
                text, warns = _run(cfg)
        finally:
            if gc_was_enabled:
                gc.enable()
        for w in warns:
            print(f"ragmeter trec: warning: {w}", file=sys.stderr)
        if cfg["output"]:
            from ragmeter.io.files import atomic_write

            with atomic_write(cfg["output"]) as fh:
                fh.write(text)
        else:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:
                # the reader went away (e.g. `| head`); that is not an error of ours
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 0
        return 0
    except _Usage as exc:
        print(f"ragmeter trec: {exc}", file=sys.stderr)
        return 2
    except RagmeterError as exc:
        print(str(exc), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("ragmeter trec: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(
            "ragmeter trec: out of memory (try --stream, and --spill DIR for a run not grouped "
            "by query)",
            file=sys.stderr,
        )
        return 2
