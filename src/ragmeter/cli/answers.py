"""``ragmeter answers`` (UltraRAG-style JSONL evaluation) and ``ragmeter grounded``
(docs/answers.md). Thin layers over :mod:`ragmeter.answers`; engines are imported inside
the commands so that ``ragmeter --help`` stays fast."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ragmeter.answers.inputs import answer_groups as _groups
from ragmeter.executors.options import (
    ExecutorOpt,
    PartitionsOpt,
    SchedulerOpt,
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
    from ragmeter.answers.inputs import Golds, coerce_golds, coerce_id, coerce_prediction
    from ragmeter.answers.normalizers import normalize
    from ragmeter.errors import InputError
    from ragmeter.io.files import display_name
    from ragmeter.io.jsonl import iter_jsonl

    name = display_name(path)
    ids: list[Any] = []
    preds: list[Any] = []
    golds: list[Golds] = []
    questions: list[str | None] = []
    lines: list[int] = []
    seen: dict[str, int] = {}
    empty_lines: list[tuple[int, str]] = []
    seen_keys: dict[str, None] = {}
    no_gold_key: list[int] = []
    no_pred_key: list[int] = []
    for index, (line, row) in enumerate(iter_jsonl(path, allow_stdin=True)):
        where = {"path": name, "line": line}
        seen_keys.update(dict.fromkeys(row))
        if keys["pred"] not in row:
            no_pred_key.append(line)
        if not keys["groups"] and o.gold_metrics and keys["gold"] not in row:
            no_gold_key.append(line)
        id_key = keys["id"]
        sid = coerce_id(row[id_key], **where) if id_key in row else index
        if str(sid) in seen:
            raise InputError(
                f"id {sid!r} appears again (first on line {seen[str(sid)]}; expected unique ids)",
                **where,
            )
        seen[str(sid)] = line
        pred, missing = coerce_prediction(row.get(keys["pred"]), **where)
        preds.append(None if missing else pred)
        groups_key = keys["groups"]
        if groups_key:
            if groups_key not in row:
                raise InputError(
                    f"no '{groups_key}' (expected answer groups for str-em-alce)", **where
                )
            gold = coerce_golds(
                _groups(row[groups_key], groups_key, where), key=groups_key, **where
            )
        else:
            gold = coerce_golds(
                row.get(keys["gold"]), choices=row.get("choices"), key=keys["gold"], **where
            )
        if o.empty_gold == "error" and o.gold_metrics:
            empty_lines += [(line, g) for g in gold.flat if not normalize(g, profile=o.profile)]
        if o.gold_regex:
            from ragmeter.answers.inputs import compile_gold_regex

            for g in gold.flat:
                compile_gold_regex(g, **where)
        golds.append(gold)
        q = row.get(keys["question"]) if keys["question"] else None
        if need_question and keys["question"] not in row:
            raise InputError(
                f"no '{keys['question']}' (expected the question for qa-similarity)", **where
            )
        questions.append(None if q is None else coerce_prediction(q, **where)[0])
        ids.append(sid)
        lines.append(line)
    notes = _check_keys(name, keys, list(seen_keys), len(lines), no_gold_key, no_pred_key)
    if empty_lines:
        first, gold = empty_lines[0]
        others = sorted({ln for ln, _ in empty_lines[1:]} - {first})
        also = f"; also on line {', '.join(map(str, others))}" if others else ""
        raise InputError(
            f"gold answer {gold!r} normalises to '' under the {o.profile} profile (expected "
            f"non-empty gold answers with --empty-gold error{also})",
            path=name,
            line=first,
        )
    return ids, preds, golds, questions, notes


def _check_keys(
    name: str,
    keys: dict[str, str | None],
    file_keys: list[str],
    n_rows: int,
    no_gold_key: list[int],
    no_pred_key: list[int],
) -> list[str]:
    """A key that no row has is a misnamed key: refuse, naming the file's keys.

    Returns the warnings for keys that some rows lack.
    """
    from ragmeter.errors import InputError

    absent = []
    if n_rows and len(no_gold_key) == n_rows:
        absent.append(("gold", keys["gold"]))
    if n_rows and len(no_pred_key) == n_rows:
        absent.append(("pred", keys["pred"]))
    if absent:
        shown = ", ".join(f"'{k}'" for k in file_keys[:12])
        more = f" and {len(file_keys) - 12} more" if len(file_keys) > 12 else ""
        what = " or ".join(f"'{key}'" for _, key in absent)
        flags = " and ".join(f"--{role}-key" for role, _ in absent)
        raise InputError(
            f"no row has {what} (the rows have {shown or 'no keys'}{more}; name the "
            f"{'keys' if len(absent) > 1 else 'key'} with {flags})",
            path=name,
        )
    notes = []
    for what, key, missing in (
        ("gold answers", keys["gold"], no_gold_key),
        ("prediction", keys["pred"], no_pred_key),
    ):
        if missing:
            n = len(missing)
            fate = "not scored (no_gold)" if what == "gold answers" else "scored as ''"
            notes.append(
                f"ragmeter answers: warning: {n} row{'s' if n > 1 else ''} of {name} "
                f"{'have' if n > 1 else 'has'} no '{key}' ({what}; first on line "
                f"{missing[0]}), {fate}"
            )
    return notes


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
            if o.semantic:
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
        ids, preds, golds, questions, key_notes = _read_answers(
            input, o, keys, "qa-similarity" in o.metrics
        )
        from ragmeter.answers.scoring import evaluate

        xmeta: dict[str, Any] = {}
        if not xsettings.is_local:  # same call, scored by sample shards on the executor
            from ragmeter.executors.answers import evaluator

            evaluate = evaluator(xsettings, input, keys, xmeta)
        progress, stop = _progress(len(ids))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RagmeterWarning)
                res = evaluate(
                    preds,
                    [(g.groups if gold_groups_key else g.flat) if g.given else None for g in golds],
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
                    embedder_path=embedder_path,
                    device=device,
                    progress=progress,
                )
        except UsageError as exc:
            if exc.command is None:
                raise UsageError(exc.message, command="answers") from None
            raise
        finally:
            stop()
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
