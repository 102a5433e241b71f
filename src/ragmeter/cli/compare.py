"""``ragmeter compare``: significance tests between systems (docs/stats.md).

Three input modes, chosen in this order: one per-sample metric file per system (``--per-sample
a.jsonl b.jsonl``); stored runs (``RUN RUN ...``: run ids, evaluation ids, ``latest`` or saved
``results/<evaluation-id>/`` folders) when ``--store`` is given or the first argument is not a
file; otherwise TREC runs scored by the retrieval engine (``QRELS RUN_A RUN_B ...``, QRELS being
an existing file). The comparison itself is :func:`ragmeter.stats.compare`; the scores are read
by :mod:`ragmeter.cli.compare_scores`; this module parses the options and prints.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.cli.compare_scores import COMMAND, per_sample_scores, trec_scores
from ragmeter.cli.stored_runs import (
    default_metrics,
    is_stored_mode,
    iter_notes,
    load_runs,
    resolve_metrics,
    stored_scores,
    system_names,
)
from ragmeter.errors import UsageError
from ragmeter.executors.options import (
    ExecutorOpt,
    KeepWorkOpt,
    PartitionsOpt,
    SchedulerOpt,
    WorkDirOpt,
    WorkerMemoryOpt,
    WorkersOpt,
)
from ragmeter.stats_choices import (
    ALTERNATIVES,
    CI_METHODS,
    CORRECTION_FAMILIES,
    CORRECTIONS,
    MISSING_POLICIES,
    TESTS,
    TWO_SIDED,
)

if TYPE_CHECKING:
    from ragmeter.stats.compare import ComparisonReport

FORMATS = ("table", "markdown", "latex", "ultrarag", "json")


def _alternatives(choices: tuple[str, ...], default: str | None = None) -> str:
    """``a | b (default) | c``: an option's choices as its help lists them."""
    return " | ".join(f"{c} (default)" if c == default else c for c in choices)


def _choice(value: str | None, allowed: tuple[str, ...], option: str) -> str | None:
    if value is not None and value not in allowed:
        raise UsageError(f"{option} {value!r} is not one of {', '.join(allowed)}", command=COMMAND)
    return value


def _system_names(paths: list[str], names: list[str]) -> list[str]:
    if names:
        if len(names) != len(paths):
            raise UsageError(
                f"{len(names)} --name values for {len(paths)} systems (give one per system)",
                command=COMMAND,
            )
        out = list(names)
    else:
        out = []
        for p in paths:
            stem = Path(p).name
            for suffix in (".gz", ".jsonl", ".json", ".txt", ".run", ".trec", ".tsv"):
                if stem.endswith(suffix) and len(stem) > len(suffix):
                    stem = stem[: -len(suffix)]
            out.append(stem)
        if len(set(out)) != len(out):
            out = list(paths)
    if len(set(out)) != len(out):
        raise UsageError("two systems have the same name (use --name)", command=COMMAND)
    return out


def _check_pairs(out_format: str, systems: list[str]) -> None:
    if out_format == "ultrarag" and len(systems) != 2:
        raise UsageError(
            f"the UltraRAG output compares 2 systems (A = first, B = second), got {len(systems)}",
            command=COMMAND,
        )


def _rich_tables(report: ComparisonReport) -> None:
    from rich.table import Table

    from ragmeter.cli.console import WIDEST_PIPE_WIDTH, make_console

    console = make_console(pipe_width=WIDEST_PIPE_WIDTH)
    compat = bool(report.settings.get("ranx_compat"))
    main = Table("#", "Model" if compat else "System")
    for m in report.metrics:
        main.add_column(m, justify="right")
    for row in report.table_rows():
        main.add_row(*row)
    console.print(main)
    console.print(report.footer(), highlight=False)
    pairs = Table(
        "metric",
        "A",
        "B",
        "mean A",
        "mean B",
        "A − B",
        "p",
        "p adj.",
        "sig.",
        "d_z",
        "W/T/L",
        title="pairs",
    )
    with_ci = any(p.result.ci is not None for p in report.pairs)
    if with_ci:
        pairs.add_column("CI of A − B")
    for p in report.pairs:
        r = p.result
        dz = (r.effect_size or {}).get("cohens_dz")
        w = p.win_tie_loss
        cells = [
            p.metric,
            p.system_a,
            p.system_b,
            f"{r.mean_a:.4f}",
            f"{r.mean_b:.4f}",
            f"{r.mean_diff:+.4f}",
            f"{r.p_value:.4g}",
            f"{p.p_adjusted:.4g}" if p.p_adjusted is not None else "",
            "yes" if p.significant else "no",
            f"{dz:+.3f}" if dz is not None else "n/a",
            f"{w['W']}/{w['T']}/{w['L']}",
        ]
        if with_ci:
            ci = r.ci
            cells.append(
                f"[{ci.low:.4f}, {ci.high:.4f}] {ci.method}"
                if ci is not None and ci.low is not None and ci.high is not None
                else ""
            )
        pairs.add_row(*cells)
    console.print(pairs)


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_cmd(
        paths: Annotated[
            list[str],
            typer.Argument(
                help="Stored runs: RUN RUN [RUN ...] (run ids, evaluation ids, 'latest', "
                "results/<evaluation-id>/ folders); or QRELS RUN_A RUN_B [...] (TREC runs; "
                "QRELS is an existing file); or with --per-sample one per-sample file per system.",
                show_default=False,
                metavar="PATHS",
            ),
        ],
        metric: Annotated[
            list[str] | None,
            typer.Option(
                "-m",
                "--metric",
                help="Metric to compare (repeat). Stored runs: task.metric (retrieval.nDCG@10; "
                "default: the tasks' default sample-level metrics). TREC: any retrieval name "
                "(nDCG@10, RR, ndcg_cut.10); --per-sample: a key of the files.",
            ),
        ] = None,
        per_sample: bool = typer.Option(
            False,
            "--per-sample",
            help="The paths are per-sample metric files (JSONL, a saved "
            "Result, UltraRAG output or trec_eval -q), one per system.",
        ),
        name: Annotated[
            list[str] | None,
            typer.Option("--name", help="System names, one per run (repeat)."),
        ] = None,
        store: Annotated[
            str | None,
            typer.Option(
                "--store",
                help="Results store of the stored runs (sqlite:///PATH or postgresql://...; "
                "default sqlite:///.ragmeter/ragmeter.db). Selects stored-run mode.",
            ),
        ] = None,
        test: str = typer.Option("randomization", "--test", help=f"{_alternatives(TESTS)}."),
        correction: str | None = typer.Option(
            None, "--correction", help=f"{_alternatives(CORRECTIONS, 'holm')}."
        ),
        family: str = typer.Option(
            "per_metric", "--family", help=f"{_alternatives(CORRECTION_FAMILIES)}."
        ),
        alpha: float | None = typer.Option(
            None, "--alpha", help="Significance level (default 0.05; 0.01 with --ranx)."
        ),
        alternative: str = typer.Option(
            "two-sided", "--alternative", help=f"{_alternatives(ALTERNATIVES)}."
        ),
        seed: int = typer.Option(42, "--seed", help="Seed of every random draw."),
        n_resamples: int | None = typer.Option(
            None, "--n-resamples", help="Resamples (default 9999; 10000 with --ultrarag)."
        ),
        two_sided: str = typer.Option(
            "abs", "--two-sided", help=f"{_alternatives(TWO_SIDED)} (scipy)."
        ),
        ci: str | None = typer.Option(
            None, "--ci", help=f"Bootstrap CI of each difference: {_alternatives(CI_METHODS)}."
        ),
        missing: str | None = typer.Option(
            None,
            "--missing",
            help=f"{_alternatives(MISSING_POLICIES, 'error')}: queries a system "
            "lacks (fill 0.0 with --ultrarag).",
        ),
        fill_value: float | None = typer.Option(
            None, "--fill-value", help="Score of a missing query (fill; 0.0)."
        ),
        ranx: bool = typer.Option(
            False,
            "--ranx",
            help="ranx.compare parity: paired t-test, no correction, alpha 0.01, ranx's table.",
        ),
        ultrarag: bool = typer.Option(
            False,
            "--ultrarag",
            help="UltraRAG evaluate_trec_pvalue preset: MAP, MRR, nDCG/P/"
            "recall at 1..100, 10000 resamples, missing queries 0, UltraRAG JSON.",
        ),
        fmt: str | None = typer.Option(
            None, "--format", help="table | markdown | latex | ultrarag | json."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
        latex: bool = typer.Option(False, "--latex", help="Print the LaTeX table (ranx style)."),
        relevance_level: int = typer.Option(
            1, "-l", "--relevance-level", help="TREC: lowest relevant grade."
        ),
        id_key: str = typer.Option("id", "--id-key", help="--per-sample: the sample id key."),
        output: str | None = typer.Option(
            None, "-o", "--output", help="Also write the output to this file."
        ),
        executor: ExecutorOpt = None,
        workers: WorkersOpt = None,
        scheduler: SchedulerOpt = None,
        partitions: PartitionsOpt = None,
        worker_memory: WorkerMemoryOpt = None,
        work_dir: WorkDirOpt = None,
        keep_work: KeepWorkOpt = None,
    ) -> None:
        """Compare systems with paired significance tests, corrections and effect sizes.

        ragmeter compare latest -m retrieval.nDCG@10 -m answers.f1
        ragmeter compare RUN_ID RUN_ID --store sqlite:///r.db --test t --json
        ragmeter compare results/20260101T120000Z-ab12cd/ -m retrieval.RR
        ragmeter compare QRELS RUN_A RUN_B -m nDCG@10 -m RR
        ragmeter compare --per-sample a.jsonl b.jsonl -m f1 --json

        Mode: --per-sample files; else stored runs when --store is given or the first
        argument is not a file; else TREC (the first argument is the QRELS file).
        """
        from ragmeter.cli.console import spinner
        from ragmeter.executors.options import settings_from_flags

        xsettings = settings_from_flags(
            COMMAND,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            partitions=partitions,
            worker_memory=worker_memory,
            work_dir=work_dir,
            keep_work=keep_work,
        )
        _choice(test, TESTS, "--test")
        _choice(fmt, FORMATS, "--format")
        _choice(family, CORRECTION_FAMILIES, "--family")
        _choice(alternative, ALTERNATIVES, "--alternative")
        _choice(two_sided, TWO_SIDED, "--two-sided")
        _choice(ci, CI_METHODS, "--ci")
        _choice(missing, MISSING_POLICIES, "--missing")
        _choice(correction, CORRECTIONS, "--correction")
        chosen = [f for f, on in (("json", as_json), ("latex", latex)) if on]
        if fmt is not None:
            chosen.append(fmt)
        if len(set(chosen)) > 1:
            raise UsageError(
                f"choose one output format, not {' and '.join(chosen)}", command=COMMAND
            )
        out_format = chosen[0] if chosen else ("ultrarag" if ultrarag else "table")
        if ranx and ultrarag:
            raise UsageError(
                "--ranx and --ultrarag are different presets; pick one", command=COMMAND
            )
        directions: dict[str, str] = {}
        xmeta: dict[str, Any] = {}
        # one executor for the whole command, opened on first use: TREC runs are scored and
        # then tested on the same cluster, and a usage error starts none
        with ExitStack() as xstack:
            session = None
            if not xsettings.is_local:
                from ragmeter.executors import OnDemand

                session = OnDemand(xsettings, COMMAND, xstack)
            if per_sample:
                if len(paths) < 2:
                    raise UsageError(
                        "--per-sample needs at least 2 files (one per system)", command=COMMAND
                    )
                systems = _system_names(paths, name or [])
                _check_pairs(out_format, systems)
                read = (paths, systems, list(metric or []), id_key)
                if session is None:
                    scores, metrics, info = per_sample_scores(*read)
                else:  # the files are read while the cluster starts
                    from ragmeter.background import Background

                    ahead = Background(per_sample_scores, *read)
                    try:
                        session.open()
                    except BaseException:
                        ahead.result()  # a bad file is reported first, as in-process
                        raise
                    scores, metrics, info = ahead.result()
            elif is_stored_mode(paths, store):
                if ultrarag:
                    raise UsageError(
                        "--ultrarag scores TREC runs; for stored runs use --format ultrarag",
                        command=COMMAND,
                    )
                with ExitStack() as stack:
                    runs = load_runs(paths, store, stack)
                    systems = system_names(runs, name or [])
                    _check_pairs(out_format, systems)
                    keys = resolve_metrics(metric, runs) if metric else default_metrics(runs)
                    if not keys:
                        raise UsageError(
                            "the runs share no default sample-level metric; name them with "
                            "-m task.metric",
                            command=COMMAND,
                        )
                    scores, metrics, info, directions = stored_scores(
                        runs, systems, keys, required=bool(metric)
                    )
                for note in iter_notes(info):
                    print(note, file=sys.stderr)
            else:
                if len(paths) < 3:
                    raise UsageError(
                        "expected QRELS and at least 2 runs (or --per-sample with one file per "
                        "system)",
                        command=COMMAND,
                    )
                systems = _system_names(paths[1:], name or [])
                _check_pairs(out_format, systems)
                with spinner(f"scoring {len(systems)} runs"):
                    scores, metrics, info = trec_scores(
                        paths[0],
                        paths[1:],
                        systems,
                        list(metric or []),
                        ultrarag=ultrarag,
                        relevance_level=relevance_level,
                        session=session,
                    )
            policy = missing or ("fill" if ultrarag else "error")
            if policy == "fill" and fill_value is None:
                fill_value = 0.0
            from ragmeter.stats import compare

            if session is not None:  # same call; the tests run in blocks on the executor
                from ragmeter.executors.stats import compare_on

                compare = compare_on(session, xmeta)
            try:
                with spinner("testing every pair"):
                    report = compare(
                        scores,
                        metrics=metrics,
                        test=test if not (ranx and test == "randomization") else "t",
                        correction=correction,
                        family=family,
                        alpha=alpha,
                        alternative=alternative,
                        n_resamples=n_resamples
                        if n_resamples is not None
                        else (10000 if ultrarag else 9999),
                        seed=seed,
                        missing=policy,  # type: ignore[arg-type]
                        fill_value=fill_value,
                        ci=ci,
                        ranx_compat=ranx,
                        two_sided=two_sided,
                        directions=directions,
                    )
            except UsageError:
                raise
            except ValueError as exc:
                from ragmeter.errors import InputError

                # the engine names its Python arguments; the command line has options
                message = str(exc).replace(
                    "use missing='fill' with a fill_value, or missing='intersect'",
                    "use --missing fill or --missing intersect",
                )
                if isinstance(exc, InputError) and message == str(exc):
                    raise
                raise UsageError(message, command=COMMAND) from None
        if out_format == "table":
            _rich_tables(report)
            text = report.to_table() + "\n"
            if output is not None:
                _write(output, text)
            return
        if out_format == "json":
            from ragmeter.io.jsonutil import dumps

            data = report.to_dict()
            data["inputs"] = info
            if xmeta:
                data["executor"] = xmeta
            text = dumps(data, indent=2) + "\n"
        elif out_format == "latex":
            text = report.to_latex()
        elif out_format == "markdown":
            text = report.to_markdown()
        else:
            from ragmeter.io.jsonutil import dumps

            a_level = alpha if alpha is not None else 0.05
            text = dumps(report.to_ultrarag(systems[0], systems[1], alpha=a_level), indent=4) + "\n"
            if sys.stderr.isatty():
                print(
                    report.to_ultrarag_table(systems[0], systems[1], alpha=a_level), file=sys.stderr
                )
        sys.stdout.write(text)
        if output is not None:
            _write(output, text)


def _write(path: str, text: str) -> None:
    from ragmeter.io.files import atomic_write

    with atomic_write(path) as fh:
        fh.write(text)
