"""``ragmeter answers`` on an executor: the file read, checked and scored on the workers.

The driver only cuts the file into byte ranges at line starts
(:func:`~ragmeter.executors.plan.line_shards`). Each worker parses and checks its range with
the reader of the in-process command (:class:`~ragmeter.answers.reader.RowReader`), scores its
rows and returns their records, their ids and what the whole-file checks need. The driver
checks ids across shards, runs the whole-file checks and builds the
:class:`~ragmeter.answers.result.AnswersResult` with the function the in-process path ends with,
so the output, and the first error in file order, are those of an in-process run. Finished
shards are kept in the work dir, so a re-run after a failure scores only the others.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ragmeter.background import Background
from ragmeter.errors import InputError, RagmeterError, UsageError
from ragmeter.executors.base import Executor
from ragmeter.executors.plan import LineShard, estimate_lines, is_gzip, line_shards, shard_count

ProgressBar = Callable[[int], tuple[Callable[[int], None], Callable[[], None]]]


def answers_settings(
    keys: dict[str, str | None], display_name: str, options: Any
) -> tuple[tuple[str, Any], ...]:
    """The plain, hashable settings a worker needs to read and score rows as the command
    does, from the command's resolved :class:`~ragmeter.answers.options.Options`."""
    return (
        ("metrics", tuple(options.metrics)),
        ("profile", options.profile),
        ("tokenizer", options.tokenizer),
        ("stem", options.stem),
        ("agg", tuple(sorted(dict(options.agg).items()))),
        ("empty_gold", options.empty_gold),
        ("gold_regex", options.gold_regex),
        ("lsum_split", options.lsum_split),
        ("keys", tuple(sorted(keys.items()))),
        ("display_name", display_name),
    )


def answers_options(settings: tuple[tuple[str, Any], ...]) -> Any:
    """The :class:`Options` the command resolved, resolved again from the settings (the
    resolution is a pure function of them, so the driver and the workers agree)."""
    from ragmeter.answers.options import resolve_options

    s = dict(settings)
    return resolve_options(
        list(s["metrics"]),
        profile=s["profile"],
        tokenizer=s["tokenizer"],
        stem=s["stem"],
        agg=dict(s["agg"]),
        empty_gold=s["empty_gold"],
        gold_regex=s["gold_regex"],
        lsum_split=s["lsum_split"],
    )


@lru_cache(maxsize=4)
def _scorer(settings: tuple[tuple[str, Any], ...]) -> Any:
    """One :class:`SampleScorer` per worker process and settings (its ROUGE caches only memoise)."""
    from ragmeter.answers.scoring import SampleScorer

    return SampleScorer(answers_options(settings))


def iter_shard_rows(shard: LineShard, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` for the non-blank lines of the shard's byte range, parsed and
    refused line by line as :func:`ragmeter.io.jsonl.iter_jsonl` does for the whole file."""
    from ragmeter.io.files import open_binary
    from ragmeter.io.jsonl import parse_line

    with open_binary(shard.path) as fh:
        if shard.start:
            fh.seek(shard.start)
        data = fh.read() if shard.end < 0 else fh.read(shard.end - shard.start)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    for offset, raw in enumerate(lines):
        obj = parse_line(raw, shard.first_line + offset, name)
        if obj is not None:
            yield shard.first_line + offset, obj


def score_answers_shard(shard: LineShard) -> dict[str, Any]:
    """Read, check and score the rows of one shard of an answers JSONL file.

    Returns the shard's first :class:`InputError` (``error``; nothing is scored then), the
    ids and lines of the rows read before it, what the whole-file checks need (keys seen,
    lines without a gold or prediction key, gold answers that normalise to ''), and the
    scores in row order as :class:`~ragmeter.answers.columns.ScoreColumns` (``columns``: a few
    lists cross the wire and land in the work dir, not a million Python objects).
    """
    from ragmeter.answers.columns import ScoreColumns
    from ragmeter.answers.inputs import coerce_golds, coerce_prediction
    from ragmeter.answers.reader import RowReader
    from ragmeter.answers.scoring import MISSING_PREDICTION

    s = dict(shard.settings)
    keys = dict(s["keys"])
    options = answers_options(shard.settings)
    need_question = "qa-similarity" in options.metrics
    reader = RowReader(s["display_name"], options, keys, need_question, shard.first_row)
    error: InputError | None = None
    try:
        for line, row in iter_shard_rows(shard, s["display_name"]):
            reader.add(line, row)
    except InputError as exc:
        error = exc
    ids, lines = reader.ids, reader.lines
    last = reader.last_id
    if error is not None and last is not None and last[1] == error.line:
        ids, lines = [*ids, last[0]], [*lines, last[1]]  # the id of the line that failed
    out: dict[str, Any] = {
        "error": error,
        "ids": ids,
        "lines": lines,
        "keys": list(reader.seen_keys),
        "no_gold_key": reader.no_gold_key,
        "no_pred_key": reader.no_pred_key,
        "empty_lines": reader.empty_lines,
        "columns": None,
        "score_error": None,
    }
    if error is not None:
        return out
    scorer = _scorer(shard.settings)
    scores = []
    try:
        for sid, pred, gold, question in zip(
            reader.ids, reader.preds, reader.golds, reader.questions, strict=True
        ):
            # evaluate() coerces what the command hands it once more; do exactly the same
            loc = {"location": f"sample {str(sid)!r}"}
            gold_value = (gold.groups if keys["groups"] else gold.flat) if gold.given else None
            text, miss = coerce_prediction(pred, **loc)
            golds = coerce_golds(gold_value, key="golds", **loc)
            score = scorer.score(text, golds, question=question, location=loc["location"])
            if miss:
                score.flags.insert(0, MISSING_PREDICTION)
            scores.append(score)
    except RagmeterError as exc:  # reported after every shard's input checks, as in-process
        out["score_error"] = exc
        return out
    hits = "str-em-alce" in options.metrics
    out["columns"] = ScoreColumns.from_scores(scores, options.outputs(), str_em_hit=hits)
    return out


def _first_error(out: dict[str, Any], seen: dict[str, int], name: str) -> InputError | None:
    """The first error of a shard in file order: an id already seen in an earlier shard, or
    the shard's own error (an id is checked before anything else on its line)."""
    error = out["error"]
    for sid, line in zip(out["ids"], out["lines"], strict=True):
        if error is not None and error.line is not None and line > error.line:
            break
        first = seen.get(str(sid))
        if first is not None:
            return InputError(
                f"id {sid!r} appears again (first on line {first}; expected unique ids)",
                path=name,
                line=line,
            )
    return error


def plan_shards(
    path: str, settings: tuple[tuple[str, Any], ...], workers: int, partitions: int | None
) -> list[LineShard]:
    """The shards of an answers file: byte ranges at line starts (one for a gzip file)."""
    parts = 1 if is_gzip(path) else shard_count(estimate_lines(path), workers, partitions)
    return line_shards(path, parts, settings)


def score_answers(
    executor: Executor,
    path: str,
    settings: tuple[tuple[str, Any], ...],
    *,
    partitions: int | None = None,
    workers: int = 1,
    progress: ProgressBar | None = None,
    work: Any = None,
    planned: Background[list[LineShard]] | None = None,
) -> tuple[Any, list[str]]:
    """Read, check and score an answers JSONL file on ``executor``; returns the
    :class:`~ragmeter.answers.result.AnswersResult` and the warnings about keys that some rows
    lack. ``work`` (a :class:`~ragmeter.executors.workdir.WorkDir`) keeps finished shards;
    ``planned`` holds the shards when they were cut while the cluster started."""
    from ragmeter.answers.columns import ScoreColumns
    from ragmeter.answers.inputs import coerce_id
    from ragmeter.answers.reader import check_empty_golds, key_notes
    from ragmeter.answers.result import build_result
    from ragmeter.executors.workdir import run_resumable

    options = answers_options(settings)
    s = dict(settings)
    name, keys = s["display_name"], dict(s["keys"])
    if path == "-":
        raise UsageError(
            "--executor dask reads INPUT from a file every worker can see, not from stdin "
            "(expected a file path)"
        )
    if planned is not None:
        shards = planned.result()
    else:
        shards = plan_shards(path, settings, workers, partitions)
    plan = None if work is None else work.plan("answers", score_answers_shard, shards)
    total = sum(sh.rows for sh in shards) if all(sh.rows >= 0 for sh in shards) else 0
    tick, stop = progress(total) if progress is not None else (None, lambda: None)
    seen: dict[str, int] = {}
    ids: list[Any] = []
    file_keys: dict[str, None] = {}
    no_gold: list[int] = []
    no_pred: list[int] = []
    empty: list[tuple[int, str]] = []
    parts: list[ScoreColumns] = []
    score_error: RagmeterError | None = None
    got = run_resumable(executor, score_answers_shard, shards, label="scoring", plan=plan)
    try:
        with contextlib.closing(got):
            for out in got:
                error = _first_error(out, seen, name)
                if error is not None:  # the first in file order: later shards cannot precede it
                    raise error
                seen.update(
                    (str(sid), line) for sid, line in zip(out["ids"], out["lines"], strict=True)
                )
                ids.extend(out["ids"])
                file_keys.update(dict.fromkeys(out["keys"]))
                no_gold += out["no_gold_key"]
                no_pred += out["no_pred_key"]
                empty += out["empty_lines"]
                if score_error is None and out["score_error"] is not None:
                    score_error = out["score_error"]
                if out["columns"] is not None:
                    parts.append(out["columns"])
                if tick is not None:
                    tick(len(ids))
    finally:
        stop()
    if not ids:
        raise InputError("no data lines (expected one JSON object per line)", path=name)
    notes = key_notes(name, keys, list(file_keys), len(ids), no_gold, no_pred)
    check_empty_golds(name, options.profile, empty)
    if score_error is not None:
        raise score_error
    columns = ScoreColumns.concat(parts)
    if len(columns) != len(ids):
        raise RuntimeError(f"the shards returned {len(columns)} records for {len(ids)} rows")
    clean = [coerce_id(sid, location=f"sample {i}") for i, sid in enumerate(ids)]
    return build_result(options, clean, columns), notes


def answers_on(
    xsettings: Any,
    path: str,
    options: Any,
    keys: dict[str, str | None],
    *,
    progress: ProgressBar | None = None,
) -> tuple[Any, list[str], dict[str, Any]]:
    """``ragmeter answers INPUT`` on the executor ``xsettings`` names: the result, the
    warnings about keys, and the ``executor`` block of the output. The work dir keeps the
    finished shards until the command succeeds (docs/scaleout.md, "The work dir and
    resuming")."""
    from ragmeter.executors import open_executor
    from ragmeter.io.files import display_name, open_binary

    if options.semantic:  # refused before any cluster starts
        raise UsageError(
            "the semantic metrics do not run under --executor dask yet (expected lexical "
            "metrics, or the in-process executor)"
        )
    with open_binary(path):  # a missing file or a folder: the in-process line, before any cluster
        pass
    settings = answers_settings(keys, display_name(path), options)
    early = None
    if xsettings.workers and not xsettings.scheduler and path != "-" and not options.semantic:
        # a LocalCluster of known size: find the line starts while its workers start (about
        # 1 s per 1M answers each; the cut reads the file and numpy releases the GIL); a failed
        # start leaves the cut to finish on its own
        early = Background(plan_shards, path, settings, xsettings.workers, xsettings.partitions)
    # the driver keeps the finished shards: the workers need the input, not the work dir
    with open_executor(xsettings, "answers", inputs=[path], workers_write=False) as (
        work,
        executor,
    ):
        workers = xsettings.workers or executor.describe().get("workers") or 1
        result, notes = score_answers(
            executor,
            path,
            settings,
            partitions=xsettings.partitions,
            workers=workers,
            progress=progress,
            work=work,
            planned=early,
        )
        meta = executor.describe()
    return result, notes, meta
