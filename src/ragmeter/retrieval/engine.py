"""The evaluation pipeline: qrels index → join → ranking → measures → :class:`RetrievalResult`.

:class:`Evaluator` prepares the qrels side once (sorted keys, grade lists) and evaluates any
number of runs, from any number of threads: nothing is cached between calls
(pytrec_eval#22, ir_measures#42). :func:`evaluate` is the one-shot form.
"""

from __future__ import annotations

import os
import sys
import warnings as pywarnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import UsageError
from ragmeter.io.trec.containers import Qrels, Run
from ragmeter.retrieval import kernels as K
from ragmeter.retrieval.measures import MEASURES, Context
from ragmeter.retrieval.names import ULTRARAG_KS, Measure, parse_measures
from ragmeter.retrieval.overlap import no_overlap_error
from ragmeter.retrieval.report import Report, build_report
from ragmeter.warnings import RagmeterWarning

if TYPE_CHECKING:
    from ragmeter.retrieval.result import RetrievalResult
    from ragmeter.retrieval.zscores import ZScores

__all__ = ["Evaluator", "Options", "evaluate", "evaluate_stream"]

_COMMAND = "trec"


@dataclass(frozen=True)
class Options:
    """Evaluation options (docs/retrieval.md#command-line and #python-api)."""

    relevance_level: int = 1
    complete: bool = False
    max_docs: int | None = None
    judged_only: bool = False
    num_docs_in_coll: int = 0
    gain: str = "linear"
    ties: str = "docno"
    dedupe: str | None = None
    names: str = "as-requested"
    per_query: bool = True
    # "float32": scores rounded to single precision before ranking, as trec_eval 9.0.8 and so
    # pytrec_eval store them (UltraRAG's numbers); trec_eval 10.0 keeps doubles
    scores: str = "float64"

    def __post_init__(self) -> None:
        def bad(msg: str) -> UsageError:
            return UsageError(msg, command=_COMMAND)

        if (
            isinstance(self.relevance_level, bool)
            or not isinstance(self.relevance_level, (int, np.integer))
            or self.relevance_level < 0
        ):
            raise bad(f"bad relevance level {self.relevance_level!r} (expected an integer ≥ 0)")
        if self.max_docs is not None and (
            isinstance(self.max_docs, bool)
            or not isinstance(self.max_docs, (int, np.integer))
            or self.max_docs < 1
        ):
            raise bad(f"bad -M {self.max_docs!r} (expected an integer ≥ 1)")
        if (
            isinstance(self.num_docs_in_coll, bool)
            or not isinstance(self.num_docs_in_coll, (int, np.integer))
            or self.num_docs_in_coll < 0
        ):
            raise bad(f"bad -N {self.num_docs_in_coll!r} (expected an integer ≥ 0)")
        if self.gain not in ("linear", "exp"):
            raise bad(f"bad gain '{self.gain}' (expected linear or exp)")
        if self.ties not in ("docno", "file"):
            raise bad(f"bad ties '{self.ties}' (expected docno or file)")
        if self.dedupe not in (None, "first", "max"):
            raise bad(f"bad dedupe '{self.dedupe}' (expected first or max)")
        if self.names not in ("as-requested", "trec", "ir"):
            raise bad(f"bad names '{self.names}' (expected as-requested, trec or ir)")
        if self.scores not in ("float64", "float32"):
            raise bad(f"bad scores '{self.scores}' (expected float64 or float32)")


def _caller_level() -> int:
    """The stack level of the first frame outside ragmeter (where a warning belongs)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ragmeter."):
        frame, level = frame.f_back, level + 1
    return level - 1


def _preview(values: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


RunCodes = tuple[tuple[list[bytes], np.ndarray], tuple[np.ndarray, np.ndarray]]


def run_codes(run: Run) -> RunCodes:
    """A run's distinct qids and qid code per row, and its docno codes with their exactness
    mask: what the join keys on."""
    return K._qid_codes(run.qid), K._docno_codes(run.docno, exact=True)


class Evaluator:
    """Evaluate runs against one qrels with a fixed measure list and options.

    The qrels side is prepared once; :meth:`evaluate` is stateless and thread-safe.

    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 0}}, ["AP", "P@1"])
    >>> ev.evaluate({"q1": {"d1": 0.2, "d2": 0.9}}).summary
    {'AP': 0.5, 'P@1': 0.0}
    """

    def __init__(
        self,
        qrels: Any,
        measures: str | Iterable[str] | Sequence[Measure] = ("official",),
        *,
        ks: Sequence[int] = ULTRARAG_KS,
        zscores: str | os.PathLike[str] | ZScores | None = None,
        **options: Any,
    ) -> None:
        self.options = Options(**options)
        self.parse_warnings: list[str] = []
        if (
            isinstance(measures, (list, tuple))
            and measures
            and all(isinstance(m, Measure) for m in measures)
        ):
            self.measures = list(measures)  # type: ignore[arg-type]
        else:
            self.measures = parse_measures(
                measures, ks=ks, gain=self.options.gain, warnings=self.parse_warnings
            )  # type: ignore[arg-type]
        self.zscores: ZScores | None = None
        if zscores is not None:
            # imported here: most evaluations print no z-scores (docs/retrieval.md#speed)
            from ragmeter.retrieval.zscores import ZScores, read_zscores

            self.zscores = zscores if isinstance(zscores, ZScores) else read_zscores(zscores)
        self.qrels: Qrels = qrels if isinstance(qrels, Qrels) else _as_qrels(qrels)
        self.index = K.build_qrels_index(self.qrels, dedupe=self.options.dedupe)

    # ---------------------------------------------------------------------------------------
    def evaluate(self, run: Any) -> RetrievalResult:
        """Evaluate one run (any input of docs/retrieval.md#inputs); a :class:`RetrievalResult`."""
        from ragmeter.retrieval.result import build_result

        return build_result(self.evaluate_report(run))

    def evaluate_report(self, run: Any, *, codes: RunCodes | None = None) -> Report:
        """Evaluate one run; the :class:`~ragmeter.retrieval.report.Report` (what ``ragmeter
        trec`` prints trec_eval's text from, without building the Arrow-backed result).

        ``codes``: the run's :func:`run_codes`, when computed beforehand (``ragmeter trec``
        reads the run and codes it on a thread while it reads the qrels)."""
        run = run if isinstance(run, Run) else _as_run(run)
        piece, dropped, joined = self._piece(run, require_overlap=True, codes=codes)
        return self._report(
            run, [piece], dropped, set(joined.unjudged_qids), run_qids=joined.run_qids
        )

    def _piece(
        self, run: Run, *, require_overlap: bool, codes: RunCodes | None = None
    ) -> tuple[K.RankPiece, int, K.JoinedRun]:
        """Join, check duplicates and rank one run (or one batch of whole queries)."""
        opts = self.options
        if opts.scores == "float32" and not run.ranked:
            # scores that differ only beyond float32 precision tie (then docno decides)
            run = replace(run, score=run.score.astype(np.float32).astype(np.float64))
        codes, (doc_codes, exact) = codes if codes is not None else run_codes(run)
        # one join for every id: packed codes (ids of at most 8 bytes) or fingerprints, which
        # the join confirms on the bytes; then the duplicate check mixes the same array in
        # place, on a worker thread for a large run, while the run is ranked
        joined = K.join_run(run, self.index, codes, (doc_codes, exact))
        del exact
        if require_overlap and not joined.any_judged:
            raise self.no_overlap(run.name, joined.run_qids)
        check = K.DuplicateCheck(run, codes[1], codes=doc_codes)
        del doc_codes
        piece = K.rank_piece(joined, self.index, max_docs=opts.max_docs, ties=opts.ties)
        dups = check.result()
        dropped = 0
        if dups:
            if opts.dedupe is None:
                first = min(dups, key=lambda p: p[1])
                raise K.duplicate_error(run, joined.run_qids, joined.run_qcode, first)
            drop = K.dedupe_rows(run, dups, opts.dedupe)
            dropped = int(drop.size)
            piece = K.rank_piece(
                joined, self.index, max_docs=opts.max_docs, ties=opts.ties, drop_rows=drop
            )
        return piece, dropped, joined

    def evaluate_stream(self, source: Any, *, batch_rows: int = 2_000_000) -> RetrievalResult:
        """Evaluate a run file grouped by query in bounded memory (``--stream``).

        How it reads: docs/retrieval.md#decisions.
        """
        from ragmeter.retrieval.stream import evaluate_stream_with

        return evaluate_stream_with(self, source, batch_rows=batch_rows)

    def _finish(
        self,
        run: Any,
        pieces: list[K.RankPiece],
        dropped: int,
        unjudged: set[bytes],
        run_qids: list[bytes] | None = None,
    ) -> RetrievalResult:
        """Assemble the ranked pieces, compute every measure and build the Result."""
        from ragmeter.retrieval.result import build_result

        return build_result(self._report(run, pieces, dropped, unjudged, run_qids))

    def _report(
        self,
        run: Any,
        pieces: list[K.RankPiece],
        dropped: int,
        unjudged: set[bytes],
        run_qids: list[bytes] | None = None,
    ) -> Report:
        """Assemble the ranked pieces, compute every measure and summarise them."""
        opts = self.options
        warnings: list[str] = list(self.parse_warnings)
        warnings += [f"{self.qrels.name}: {w}" for w in self.qrels.warnings]
        warnings += [f"{run.name}: {w}" for w in run.warnings]
        rankings = self._assemble(pieces)
        if self.index.dedupe_dropped:
            k = self.index.dedupe_dropped
            warnings.append(
                f"{self.qrels.name}: --dedupe {opts.dedupe} dropped {k} duplicate "
                f"judgment{'s' if k != 1 else ''}"
            )
        if dropped:
            warnings.append(
                f"{run.name}: --dedupe {opts.dedupe} dropped {dropped} duplicate "
                f"line{'s' if dropped != 1 else ''}"
            )
        base = rankings[opts.judged_only]
        warnings += self._query_warnings(run, sorted(unjudged), base)
        level = _caller_level()
        for text in warnings:  # also issued, so that Python's warning filters apply
            pywarnings.warn(text, RagmeterWarning, stacklevel=level)
        values: dict[Measure, Any] = {}
        contexts: dict[tuple[bool, int], Context] = {}
        for m in self.measures:
            jo = opts.judged_only or m.judged_only
            level = opts.relevance_level if m.rel is None else int(m.rel)
            key = (jo, level)
            if key not in contexts:
                contexts[key] = Context(rankings[jo], level, num_docs_in_coll=opts.num_docs_in_coll)
            values[m] = self._compute(contexts[key], m)
        return build_report(
            measures=self.measures,
            values=values,
            ranking=base,
            run=run,
            qrels=self.qrels,
            judged_qids=self.index.qids,
            options=asdict(opts),
            zscores=self.zscores,
            warnings=warnings,
            run_qids=None
            if run_qids is None
            else sorted(q.decode("utf-8", "replace") for q in run_qids),
        )

    # ---------------------------------------------------------------------------------------
    def _assemble(self, pieces: list[K.RankPiece]) -> dict[bool, K.Ranking]:
        opts = self.options
        wanted = {opts.judged_only} | {True for m in self.measures if m.judged_only}
        return {
            jo: K.assemble(
                self.index, pieces, max_docs=opts.max_docs, judged_only=jo, complete=opts.complete
            )
            for jo in sorted(wanted)
        }

    def _compute(self, ctx: Context, m: Measure) -> Any:
        if m.family == "runid":
            return None
        if m.family == "num_q":
            return np.ones(ctx.E, dtype=np.int64)
        return MEASURES[m.family](ctx, m)

    def no_overlap(self, run_name: str, run_qids: Iterable[bytes]) -> UsageError:
        """The refusal of a run (``run_qids``: its distinct qids) that shares no query with
        these qrels; the in-memory, streamed and spilled evaluations raise the same one."""
        return no_overlap_error(
            self.qrels.name,
            run_name,
            self.index.qids[:2],
            sorted(run_qids)[:2],
            complete=self.options.complete,
        )

    def _query_warnings(self, run: Any, unjudged: list[bytes], ranking: K.Ranking) -> list[str]:
        out = []
        missing = [
            q for q, miss in zip(ranking.qids, ranking.missing.tolist(), strict=True) if miss
        ]
        if not self.options.complete:
            present = np.zeros(self.index.num_queries, dtype=bool)
            present[ranking.qcodes] = True
            missing = [
                self.index.qids[i].decode("utf-8") for i in np.flatnonzero(~present).tolist()
            ]
        if missing:
            n = len(missing)
            what = f"{n} judged quer{'y has' if n == 1 else 'ies have'} no results in {run.name}"
            if self.options.complete:
                out.append(
                    f"{what} and {'was' if n == 1 else 'were'} scored 0 (-c): {_preview(missing)}"
                )
            else:
                out.append(
                    f"{what} and {'was' if n == 1 else 'were'} skipped: {_preview(missing)} "
                    "(use -c to score missing queries as 0)"
                )
        if unjudged:
            names = sorted(q.decode("utf-8", "replace") for q in unjudged)
            n = len(names)
            out.append(
                f"{n} quer{'y' if n == 1 else 'ies'} in {run.name} "
                f"{'has' if n == 1 else 'have'} no "
                f"judgments in {self.qrels.name} and {'was' if n == 1 else 'were'} ignored: "
                f"{_preview(names)}"
            )
        tied = ranking.extra.get("all_tied", [])
        if tied and self.options.ties == "docno" and not run.ranked:
            n = len(tied)
            out.append(
                f"{n} quer{'y' if n == 1 else 'ies'} in {run.name} {'has' if n == 1 else 'have'} "
                f"all scores equal, so {'its' if n == 1 else 'their'} ranking comes from docno "
                "alone "
                f"(descending): {_preview(tied)}"
            )
        return out


def _as_qrels(qrels: Any) -> Qrels:
    # through the package's names (a path: its read_qrels), which callers may wrap or replace;
    # the Arrow-side readers load only here, when the input is not parsed yet
    from ragmeter.io import trec as io_trec

    if isinstance(qrels, (str, os.PathLike)):
        return io_trec.read_qrels(qrels)
    return io_trec.as_qrels(qrels)


def _as_run(run: Any) -> Run:
    from ragmeter.io import trec as io_trec

    if isinstance(run, (str, os.PathLike)):
        return io_trec.read_run(run)
    return io_trec.as_run(run)


def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Iterable[str] = ("official",),
    *,
    relevance_level: int = 1,
    complete: bool = False,
    max_docs: int | None = None,
    judged_only: bool = False,
    num_docs_in_coll: int = 0,
    gain: str = "linear",
    ties: str = "docno",
    dedupe: str | None = None,
    names: str = "as-requested",
    zscores: str | os.PathLike[str] | None = None,
    per_query: bool = True,
    scores: str = "float64",
) -> RetrievalResult:
    """Evaluate a run against qrels with trec_eval 10.0 semantics (docs/retrieval.md#python-api).

    ``scores="float32"`` rounds scores to single precision before ranking, as pytrec_eval
    (trec_eval 9.0.8) does: scores that differ only beyond float32 precision then tie.

    ``qrels`` and ``run`` take paths, dicts, lists, pandas or pyarrow tables, or ir_measures
    tuples (docs/retrieval.md#inputs); ``measures`` takes names in either style (``map``,
    ``P.5,10``, ``nDCG@10``).
    The result has the summary (``.summary``), per-query values (``.per_query``), the long
    per-sample table of every :class:`ragmeter.Result`, and ``to_trec/to_json/to_csv``.

    >>> qrels = {"q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1}}
    >>> run = {"q1": {"d1": 3.0, "d5": 2.0, "d2": 1.0}}
    >>> res = evaluate(qrels, run, ["P.10", "Rprec", "map_cut.2", "map", "recall.10", "success.1"])
    >>> {k: round(v, 4) for k, v in res.summary.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'map': 0.4167, 'Rprec': 0.5, 'P_10': 0.2, 'recall_10': 0.5,
     'map_cut_2': 0.25, 'success_1': 1.0}
    """
    ev = Evaluator(
        qrels,
        measures,
        zscores=zscores,
        relevance_level=relevance_level,
        complete=complete,
        max_docs=max_docs,
        judged_only=judged_only,
        num_docs_in_coll=num_docs_in_coll,
        gain=gain,
        ties=ties,
        dedupe=dedupe,
        names=names,
        per_query=per_query,
        scores=scores,
    )
    return ev.evaluate(run)


def evaluate_stream(
    qrels: Any,
    source: str | os.PathLike[str],
    measures: Any = ("official",),
    *,
    batch_rows: int = 2_000_000,
    **options: Any,
) -> RetrievalResult:
    """Evaluate a run grouped by query in bounded memory; the same Result as :func:`evaluate`."""
    from ragmeter.retrieval.stream import evaluate_stream_with

    zscores = options.pop("zscores", None)
    return evaluate_stream_with(
        Evaluator(qrels, measures, zscores=zscores, **options), source, batch_rows=batch_rows
    )
