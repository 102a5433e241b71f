"""``ragmeter answers`` (UltraRAG-style JSONL evaluation) and ``ragmeter grounded``
(docs/answers.md). Thin layers over :mod:`ragmeter.answers`; engines are imported inside
the commands so that ``ragmeter --help`` stays fast."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.executors.options import (
    ExecutorOpt,
    KeepWorkOpt,
    PartitionsOpt,
    SchedulerOpt,
    WorkDirOpt,
    WorkerMemoryOpt,
    WorkersOpt,
)


class Profile(str, Enum):
    squad = "squad"
    ultrarag = "ultrarag"
    flashrag = "flashrag"


class Tokenizer(str, Enum):
    default = "default"
    unicode = "unicode"


class EmptyGold(str, Enum):
    drop = "drop"
    keep = "keep"
    abstain = "abstain"
    error = "error"


class LsumSplit(str, Enum):
    newline = "newline"
    nltk = "nltk"


class Format(str, Enum):
    json = "json"
    table = "table"


class MissingTrace(str, Enum):
    answered = "answered"
    refused = "refused"
    error = "error"


def _warn(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def _read_answers(path: str, o: Any, keys: dict[str, str | None], need_question: bool):
    """Rows of an UltraRAG-style JSONL file, checked and converted, and warnings about keys."""
    from ragmeter.answers.reader import RowReader, finish
    from ragmeter.io.files import display_name
    from ragmeter.io.jsonl import iter_jsonl

    reader = RowReader(display_name(path), o, keys, need_question)
    for line, row in iter_jsonl(path, allow_stdin=True):
        reader.add(line, row)
    notes = finish(reader)
    return reader.ids, reader.preds, reader.golds, reader.questions, notes


def _in_process(input: str, o: Any, keys: dict[str, str | None], **embed: Any):
    """Read and check the whole file here, then score it: ``(result, key warnings, predictions,
    gold answers)``."""
    import warnings

    from ragmeter.answers.scoring import evaluate
    from ragmeter.errors import UsageError
    from ragmeter.warnings import RagmeterWarning

    ids, preds, golds, questions, key_notes = _read_answers(
        input, o, keys, "qa-similarity" in o.metrics
    )
    progress, stop = _progress(len(ids))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagmeterWarning)
            res = evaluate(
                preds,
                [(g.groups if keys["groups"] else g.flat) if g.given else None for g in golds],
                metrics=list(o.metrics),
                profile=o.profile,
                ids=ids,
                questions=questions,
                tokenizer=o.tokenizer,
                stem=o.stem,
                agg=dict(o.agg),
                empty_gold=o.empty_gold,
                gold_regex=o.gold_regex,
                lsum_split=o.lsum_split,
                progress=progress,
                **embed,
            )
    except UsageError as exc:
        if exc.command is None:
            raise UsageError(exc.message, command="answers") from None
        raise
    finally:
        stop()
    return res, key_notes, preds, golds


def _table(res: Any) -> str:
    from rich.table import Table

    from ragmeter.cli.console import NO_SCORE, decimals, plain_text

    meta = res.meta
    table = Table(
        "metric",
        "mean",
        "n scored",
        title=f"profile {meta['profile']}, {meta['n_rows']} rows, {meta['n_scored']} scored",
    )
    for m in res.per_sample_metrics:
        agg = res.aggregates[m]
        table.add_row(m, decimals(agg.value, missing=NO_SCORE), str(agg.n))
    return plain_text(table, width=100)


def register(app: typer.Typer) -> None:
    @app.command("answers")
    def answers(
        input: Annotated[
            str,
            typer.Argument(help="UltraRAG-style JSONL file (- for stdin).", metavar="INPUT.jsonl"),
        ],
        metric: Annotated[
            list[str] | None,
            typer.Option(
                "-m",
                "--metric",
                help="Metric (repeatable, or comma-separated): em acc stringem coverem f1 "
                "precision recall rouge-1…rouge-9 rouge-l rouge-lsum str-em-alce "
                "semantic-similarity qa-similarity. Default: the profile's list.",
            ),
        ] = None,
        profile: Annotated[
            Profile, typer.Option("--profile", help="Normalisation profile.")
        ] = Profile.squad,
        per_sample: Annotated[
            Path | None,
            typer.Option("--per-sample", help="Write one JSON line per input row here."),
        ] = None,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Also write the JSON summary here.")
        ] = None,
        gold_key: Annotated[str, typer.Option("--gold-key")] = "golden_answers",
        pred_key: Annotated[str, typer.Option("--pred-key")] = "pred_answer",
        id_key: Annotated[str, typer.Option("--id-key")] = "id",
        question_key: Annotated[str, typer.Option("--question-key")] = "question",
        gold_groups_key: Annotated[
            str | None,
            typer.Option(
                "--gold-groups-key", help="Answer groups for str-em-alce (e.g. qa_pairs)."
            ),
        ] = None,
        tokenizer: Annotated[Tokenizer, typer.Option("--tokenizer")] = Tokenizer.default,
        stem: Annotated[
            bool | None,
            typer.Option("--stem/--no-stem", help="Porter stemming for ROUGE (profile default)."),
        ] = None,
        agg: Annotated[
            list[str] | None,
            typer.Option("--agg", help="max|mean|any, or METRIC=max|mean|any (repeatable)."),
        ] = None,
        empty_gold: Annotated[
            EmptyGold | None,
            typer.Option("--empty-gold", help="Default: drop (squad), keep (ultrarag, flashrag)."),
        ] = None,
        gold_regex: Annotated[
            bool, typer.Option("--gold-regex", help="Golds are regexes for em/acc (flashrag only).")
        ] = False,
        lsum_split: Annotated[LsumSplit, typer.Option("--lsum-split")] = LsumSplit.newline,
        embedder_path: Annotated[
            str | None,
            typer.Option("--embedder-path", help="Local sentence-transformers model dir."),
        ] = None,
        device: Annotated[
            str | None, typer.Option("--device", help="cpu (default) or cuda.")
        ] = None,
        verify_rouge: Annotated[
            bool, typer.Option("--verify-rouge", help="Check ROUGE against the reference library.")
        ] = False,
        summary_only: Annotated[
            bool, typer.Option("--summary-only", help="Drop per-sample lists.")
        ] = False,
        fmt: Annotated[Format, typer.Option("--format")] = Format.json,
        as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
        executor: ExecutorOpt = None,
        workers: WorkersOpt = None,
        scheduler: SchedulerOpt = None,
        partitions: PartitionsOpt = None,
        worker_memory: WorkerMemoryOpt = None,
        work_dir: WorkDirOpt = None,
        keep_work: KeepWorkOpt = None,
    ) -> int:
        """Score answers in an UltraRAG-style JSONL file (EM, F1, ROUGE, ...)."""
        import warnings

        from ragmeter.executors.options import settings_from_flags

        xsettings = settings_from_flags(
            "answers",
            (input,),
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            partitions=partitions,
            worker_memory=worker_memory,
            work_dir=work_dir,
            keep_work=keep_work,
        )

        from ragmeter.answers.options import resolve_options
        from ragmeter.errors import UsageError
        from ragmeter.io.files import atomic_write
        from ragmeter.io.jsonutil import dumps
        from ragmeter.warnings import RagmeterWarning

        try:
            if as_json and fmt is Format.table:
                raise UsageError("--json and --format table contradict each other")
            names = [m.strip() for spec in (metric or []) for m in spec.split(",") if m.strip()]
            o = resolve_options(
                names,
                profile=profile.value,
                tokenizer=tokenizer.value,
                stem=stem,
                agg=agg or None,
                empty_gold=empty_gold.value if empty_gold else None,
                gold_regex=gold_regex,
                lsum_split=lsum_split.value,
            )
            if o.semantic and xsettings.is_local:  # Dask refuses them before loading
                from ragmeter.answers.semantic import load_minilm

                with _status("loading all-MiniLM-L6-v2 (offline)"):
                    load_minilm(path=embedder_path, device=device)  # fail fast, load once
        except UsageError as exc:
            if exc.command is None:
                raise UsageError(exc.message, command="answers") from None
            raise
        keys = {
            "id": id_key,
            "pred": pred_key,
            "gold": gold_key,
            "question": question_key,
            "groups": gold_groups_key,
        }
        xmeta: dict[str, Any] = {}
        if xsettings.is_local:
            res, key_notes, preds, golds = _in_process(
                input, o, keys, embedder_path=embedder_path, device=device
            )
        else:  # the workers read, check and score the file; the driver only cuts it
            from ragmeter.executors.answers import answers_on

            preds, golds = [], []

            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RagmeterWarning)
                    res, key_notes, xmeta = answers_on(
                        xsettings, input, o, keys, progress=_progress
                    )
            except UsageError as exc:
                if exc.command is None:
                    raise UsageError(exc.message, command="answers") from None
                raise
            if verify_rouge:  # the reference needs every pair here: read them (checked already)
                preds, golds = _read_answers(input, o, keys, False)[1:3]
        if o.gold_metrics and not res.meta["n_scored"]:
            from ragmeter.errors import InputError
            from ragmeter.io.files import display_name

            raise InputError(
                f"no row has a usable gold answer (every '{gold_groups_key or gold_key}' is "
                "missing, empty or normalises to ''; expected at least one gold answer to score)",
                path=display_name(input),
            )
        _warn(key_notes + res.warnings)
        code = 0
        if verify_rouge:
            from ragmeter.answers.verify import verify_rouge as verify

            try:
                report = verify([p or "" for p in preds], [g.flat for g in golds], o)
            except UsageError as exc:
                raise UsageError(exc.message, command="answers") from None
            if report.ok:
                print(
                    f"verify-rouge: {report.pairs} pairs, {report.values} values identical to "
                    f"{report.reference}",
                    file=sys.stderr,
                )
            else:
                _warn([f"verify-rouge: {m}" for m in report.mismatches])
                print(f"verify-rouge: FAILED against {report.reference}", file=sys.stderr)
                code = 1
        summary = res.to_ultrarag_dict(summary_only=summary_only)
        if xmeta:
            summary["ragmeter"]["executor"] = xmeta
        text = dumps(summary)
        if per_sample is not None:
            with atomic_write(per_sample) as fh:
                for row in res.rows():
                    fh.write(dumps(row) + "\n")
        if output is not None:
            with atomic_write(output) as fh:
                fh.write(text + "\n")
        if fmt is Format.table:
            sys.stdout.write(_table(res))
        else:
            print(text)
        return code

    @app.command("grounded")
    def grounded(
        gold: Annotated[
            str,
            typer.Option(
                "--gold", help="Gold JSONL (qid, answerable, gold_claim_substr, gold_citations)."
            ),
        ],
        trace: Annotated[
            str, typer.Option("--trace", help="Trace JSONL (qid, retrieved_ids, answer_json).")
        ],
        k: Annotated[int, typer.Option("--k", help="Cut-off of recall@k.")] = 5,
        gates: Annotated[
            str,
            typer.Option(
                "--gates",
                help="precision≥, chr≥, under≤, over≤ (and recall≥).",
            ),
        ] = "precision=0.80,chr=0.75,under=0.05,over=0.10",
        no_fail: Annotated[
            bool, typer.Option("--no-fail", help="Exit 0 even when a gate fails.")
        ] = False,
        refusal_token: Annotated[str, typer.Option("--refusal-token")] = "not in context",
        missing_trace: Annotated[
            MissingTrace, typer.Option("--missing-trace")
        ] = MissingTrace.answered,
        details: Annotated[
            Path | None, typer.Option("--details", help="Per-item explanations (JSONL).")
        ] = None,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Also write the JSON here.")
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Accepted; stdout is JSON anyway.")
        ] = False,
    ) -> int:
        """Grounded QA: precision, citation hit rate, refusals, recall@k, with CI gates."""
        from ragmeter.answers import grounded as engine
        from ragmeter.errors import UsageError
        from ragmeter.io.files import atomic_write, display_name
        from ragmeter.io.jsonl import iter_jsonl
        from ragmeter.io.jsonutil import dumps

        try:
            gates_parsed = engine.parse_gates(gates)
            if k < 1:
                raise UsageError(f"--k must be a positive integer, not {k}")
        except UsageError as exc:
            raise UsageError(exc.message, command="grounded") from None
        del gates_parsed
        gold_rows = list(iter_jsonl(gold, allow_stdin=True))
        trace_rows = list(iter_jsonl(trace, allow_stdin=True))
        try:
            report = engine.score(
                gold_rows,
                trace_rows,
                k=k,
                gates=gates,
                refusal_token=refusal_token,
                missing_trace=missing_trace.value,
                gold_path=display_name(gold),
                trace_path=display_name(trace),
            )
        except UsageError as exc:
            if exc.command is None:
                raise UsageError(exc.message, command="grounded") from None
            raise
        _warn([w.line() for w in report.warnings])
        text = report.to_json()
        if details is not None:
            with atomic_write(details) as fh:
                for item in report.items:
                    fh.write(dumps(item) + "\n")
        if output is not None:
            with atomic_write(output) as fh:
                fh.write(text + "\n")
        print(text)
        for gate, value in report.failed_gates():
            op = "<" if gate.at_least else ">"
            print(
                f"ragmeter grounded: gate {gate.name} failed: {gate.key} = {value!r} {op} "
                f"{gate.text}",
                file=sys.stderr,
            )
        return 0 if report.passed or no_fail else 1


def _status(message: str):
    """A spinner on stderr while something slow happens (on a terminal only)."""
    from ragmeter.cli.console import spinner

    return spinner(message)


def _progress(total: int):
    """A rich progress bar on stderr for long runs on a terminal; (callback, stop)."""
    from ragmeter.cli.console import progress_bar

    return progress_bar(total, "scoring", min_total=5000)
