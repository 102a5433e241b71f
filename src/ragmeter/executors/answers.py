"""``ragmeter answers`` on an executor: sample shards scored on workers, aggregated here."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.executors.base import Executor
from ragmeter.executors.plan import line_shards, shard_count
from ragmeter.executors.settings import ExecutorSettings
from ragmeter.executors.tasks import answers_options, score_answers_shard


def answers_settings(
    keys: dict[str, str | None], display_name: str, **evaluate_kwargs: Any
) -> tuple[tuple[str, Any], ...]:
    """The plain, hashable settings a worker needs to score rows as the command does."""
    agg = evaluate_kwargs.get("agg") or {}
    return (
        ("metrics", tuple(evaluate_kwargs["metrics"])),
        ("profile", evaluate_kwargs["profile"]),
        ("tokenizer", evaluate_kwargs["tokenizer"]),
        ("stem", evaluate_kwargs["stem"]),
        ("agg", tuple(sorted(dict(agg).items()))),
        ("empty_gold", evaluate_kwargs["empty_gold"]),
        ("gold_regex", evaluate_kwargs["gold_regex"]),
        ("lsum_split", evaluate_kwargs["lsum_split"]),
        ("keys", tuple(sorted(keys.items()))),
        ("display_name", display_name),
    )


def score_answers(
    executor: Executor,
    path: str,
    settings: tuple[tuple[str, Any], ...],
    ids: Sequence[Any],
    *,
    partitions: int | None = None,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Any:
    """Score an answers JSONL file that the command has already read and validated.

    Workers re-read their own byte ranges of ``path`` and return per-sample records; the
    :class:`~ragmeter.answers.result.AnswersResult` (every mean, count and warning) is built
    here, once, from the records in input order, by the function the in-process path ends
    with, so the output is the same to the bit.
    """
    from ragmeter.answers.inputs import coerce_id
    from ragmeter.answers.result import build_result

    options = answers_options(settings)
    if path == "-":
        raise UsageError(
            "--executor dask reads INPUT from a file every worker can see, not from stdin "
            "(expected a file path)"
        )
    if options.semantic:
        raise UsageError(
            "the semantic metrics do not run under --executor dask yet (expected lexical "
            "metrics, or the in-process executor)"
        )
    if not ids:
        raise UsageError("no samples to evaluate (expected at least one prediction)")
    parts = shard_count(len(ids), workers, partitions)
    shards = line_shards(path, len(ids), parts, settings)
    scores: list[Any] = []
    for n, blob in executor.run(score_answers_shard, shards, label="scoring"):
        part = pickle.loads(blob)
        if len(part) != n:
            raise RuntimeError(f"a shard returned {len(part)} records for {n} rows")
        scores.extend(part)
        if progress is not None:
            progress(len(scores))
    if len(scores) != len(ids):
        raise UsageError(
            f"{dict(settings)['display_name']} changed while it was scored ({len(scores)} rows "
            f"now, {len(ids)} when read; expected an input that stays the same during the run)"
        )
    clean = [coerce_id(sid, location=f"sample {i}") for i, sid in enumerate(ids)]
    return build_result(options, clean, scores)


def evaluator(
    xsettings: ExecutorSettings,
    path: str,
    keys: dict[str, str | None],
    meta: dict[str, Any],
) -> Callable[..., Any]:
    """A stand-in for :func:`ragmeter.answers.scoring.evaluate` with the same keywords that
    scores ``path`` on the executor ``xsettings`` names and fills ``meta`` with its
    ``executor`` block. ``predictions`` and ``golds`` are not sent anywhere: the workers read
    the file."""

    def run(predictions: Sequence[Any], golds: Sequence[Any], **kwargs: Any) -> Any:
        from ragmeter.executors import make_executor
        from ragmeter.io.files import display_name

        ids = kwargs["ids"]
        settings = answers_settings(keys, display_name(path), **kwargs)
        with make_executor(xsettings, command="answers") as executor:
            check = getattr(executor, "check_visible", None)
            if check is not None:
                check([path])
            workers = xsettings.workers or executor.describe().get("workers") or 1
            result = score_answers(
                executor,
                path,
                settings,
                ids,
                partitions=xsettings.partitions,
                workers=workers,
                progress=kwargs.get("progress"),
            )
            meta.update(executor.describe())
        return result

    return run
