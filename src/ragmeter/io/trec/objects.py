"""Python inputs (docs/retrieval.md#inputs): dicts, lists, pandas and pyarrow tables, ir_measures
tuples, through :func:`as_run` and :func:`as_qrels`."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import lazy_compute as pc
from ragmeter.io.arrowutil import strings
from ragmeter.io.trec.checks import _INT32, _nonfinite_message, _parse_grade
from ragmeter.io.trec.containers import Origin, Qrels, Run, to_numpy
from ragmeter.io.trec.readers import read_qrels, read_run

_QID_COLS = ("qid", "query_id", "query-id")

_DOC_COLS = ("docno", "doc_id", "docid", "corpus-id")

_GRADE_COLS = ("rel", "relevance", "grade")


@dataclass
class _Conversions:
    notes: list[str] = field(default_factory=list)

    def note(self, what: str) -> None:
        if what not in self.notes:
            self.notes.append(what)


def _key_text(value: Any, conv: _Conversions, what: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{what} is not valid UTF-8 (byte 0x{value[exc.start]:02x} at offset {exc.start})",
                location=where,
            ) from None
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{what} {value!r} is a boolean (expected a string id)", location=where)
    if isinstance(value, (int, np.integer)):
        conv.note(f"{what}s given as integers were converted to decimal strings")
        return str(int(value))
    raise InputError(
        f"{what} {value!r} is {type(value).__name__} (expected a string id)", location=where
    )


def _is_table(obj: Any) -> bool:
    mod = type(obj).__module__
    return isinstance(obj, (pa.Table, pa.RecordBatch)) or (
        mod.startswith("pandas") and hasattr(obj, "columns")
    )


def _table_of(obj: Any) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    return pa.Table.from_pandas(obj, preserve_index=False)


def _pick(table: pa.Table, names: Sequence[str], what: str, label: str) -> str:
    for n in names:
        if n in table.column_names:
            return n
    raise InputError(
        f"no {what} column (expected one of {', '.join(names)}; columns are "
        f"{', '.join(table.column_names)})",
        location=label,
    )


def _ids_column(col: pa.ChunkedArray, conv: _Conversions, what: str, label: str) -> pa.ChunkedArray:
    typ = col.type
    if pa.types.is_dictionary(typ):
        col = col.cast(typ.value_type)
        typ = col.type
    if pa.types.is_integer(typ):
        conv.note(f"{what}s given as integers were converted to decimal strings")
        col = col.cast(pa.string())
        typ = col.type
    if not (
        pa.types.is_string(typ)
        or pa.types.is_large_string(typ)
        or pa.types.is_binary(typ)
        or pa.types.is_large_binary(typ)
    ):
        raise InputError(f"{what} column has type {typ} (expected strings)", location=label)
    if col.null_count:
        row = int(pc.index(pc.is_null(col), True).as_py())
        raise InputError(f"{what} is missing (null) in row {row}", location=label)
    return col.cast(pa.binary())


def as_run(run: Any, *, source: str = "source") -> Run:
    """Any run input of docs/retrieval.md#inputs as a :class:`Run` (a path: :func:`read_run`)."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        return read_run(run)
    conv = _Conversions()
    if _is_table(run):
        table = _table_of(run)
        qc = _pick(table, _QID_COLS, "qid", "run")
        dc = _pick(table, _DOC_COLS, "docno", "run")
        if "score" not in table.column_names:
            raise InputError(
                f"no score column (expected 'score'; columns are {', '.join(table.column_names)})",
                location="run",
            )
        qid = _ids_column(table.column(qc), conv, "qid", "run")
        doc = _ids_column(table.column(dc), conv, "docno", "run")
        sc = table.column("score")
        if sc.null_count:
            row = int(pc.index(pc.is_null(sc), True).as_py())
            raise InputError(
                "score is missing (null) (expected a finite number)", location=f"run row {row}"
            )
        if not (
            pa.types.is_floating(sc.type)
            or pa.types.is_integer(sc.type)
            or pa.types.is_decimal(sc.type)
        ):
            raise InputError(f"score column has type {sc.type} (expected numbers)", location="run")
        score = to_numpy(sc.cast(pa.float64()))
        finite = np.isfinite(score)
        if not finite.all():
            row = int(np.argmin(finite))
            raise InputError(_nonfinite_message(repr(float(score[row]))), location=f"run row {row}")
        src = table.column(source).cast(pa.string()) if source in table.column_names else None
        origin = Origin("run", labels=lambda i: f"run row {i}")
        return Run(
            qid,
            doc,
            np.ascontiguousarray(score, dtype=np.float64),
            "run",
            origin,
            src,
            None,
            False,
            tuple(conv.notes),
        )
    if isinstance(run, Mapping):
        return _run_from_mapping(run, conv)
    if isinstance(run, Iterable):
        return _run_from_tuples(run, conv)
    raise InputError(f"cannot read a run from {type(run).__name__}", location="run")


def _run_from_mapping(run: Mapping[Any, Any], conv: _Conversions) -> Run:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    labels: list[tuple[str, Any]] = []
    ranked_lists = 0
    scored_dicts = 0
    for q, docs_of in run.items():
        qtext = _key_text(q, conv, "qid", f"run[{q!r}]")
        if isinstance(docs_of, Mapping):
            scored_dicts += 1
            for d, s in docs_of.items():
                where = f"run[{q!r}][{d!r}]"
                dtext = _key_text(d, conv, "docno", where)
                if isinstance(s, (bool, np.bool_)) or not isinstance(
                    s, (int, float, np.integer, np.floating)
                ):
                    raise InputError(
                        f"score {s!r} is not a number (expected a finite number)", location=where
                    )
                value = float(s)
                if not math.isfinite(value):
                    raise InputError(_nonfinite_message(repr(value)), location=where)
                qids.append(qtext)
                docs.append(dtext)
                scores.append(value)
                labels.append((q, d))
        elif isinstance(docs_of, (list, tuple)):
            ranked_lists += 1
            for i, d in enumerate(docs_of):
                where = f"run[{q!r}][{i}]"
                dtext = _key_text(d, conv, "docno", where)
                qids.append(qtext)
                docs.append(dtext)
                scores.append(float(-i))
                labels.append((q, i))
        else:
            raise InputError(
                f"run[{q!r}] is {type(docs_of).__name__} (expected a dict docno → score or a list "
                "of docnos in rank order)",
                location=f"run[{q!r}]",
            )
    if ranked_lists and scored_dicts:
        raise InputError("mixes dicts of scores and ranked lists (use one form)", location="run")
    if not qids:
        raise InputError("no documents (the run is empty)", location="run")
    origin = Origin("run", labels=lambda i: f"run[{labels[i][0]!r}][{labels[i][1]!r}]")
    return Run(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(scores, dtype=np.float64),
        "run",
        origin,
        None,
        None,
        ranked_lists > 0,
        tuple(conv.notes),
    )


def _run_from_tuples(run: Iterable[Any], conv: _Conversions) -> Run:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    for i, item in enumerate(run):
        where = f"run[{i}]"
        try:
            q, d, s = item.query_id, item.doc_id, item.score
        except AttributeError:
            try:
                q, d, s = item
            except (TypeError, ValueError):
                raise InputError(
                    f"{type(item).__name__} is not a ScoredDoc (expected query_id, doc_id, score)",
                    location=where,
                ) from None
        qids.append(_key_text(q, conv, "qid", where))
        docs.append(_key_text(d, conv, "docno", where))
        if isinstance(s, (bool, np.bool_)) or not isinstance(
            s, (int, float, np.integer, np.floating)
        ):
            raise InputError(f"score {s!r} is not a number", location=where)
        if not math.isfinite(float(s)):
            raise InputError(_nonfinite_message(repr(float(s))), location=where)
        scores.append(float(s))
    if not qids:
        raise InputError("no documents (the run is empty)", location="run")
    return Run(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(scores, dtype=np.float64),
        "run",
        Origin("run", labels=lambda i: f"run[{i}]"),
        warnings=tuple(conv.notes),
    )


def as_qrels(qrels: Any) -> Qrels:
    """Any qrels input of docs/retrieval.md#inputs as :class:`Qrels` (paths: :func:`read_qrels`)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels)
    conv = _Conversions()
    if _is_table(qrels):
        table = _table_of(qrels)
        qc = _pick(table, _QID_COLS, "qid", "qrels")
        dc = _pick(table, _DOC_COLS, "docno", "qrels")
        gcol = next((c for c in _GRADE_COLS if c in table.column_names), None)
        if gcol is None:
            gcol = _pick(table, ("score",), "grade", "qrels")
        qid = _ids_column(table.column(qc), conv, "qid", "qrels")
        doc = _ids_column(table.column(dc), conv, "docno", "qrels")
        g = table.column(gcol)
        if g.null_count:
            row = int(pc.index(pc.is_null(g), True).as_py())
            raise InputError("grade is missing (null)", location=f"qrels row {row}")
        if pa.types.is_integer(g.type):
            grade = to_numpy(g.cast(pa.int64()))
            bad = (grade < _INT32[0]) | (grade > _INT32[1])
            if bad.any():
                row = int(np.argmax(bad))
                _parse_grade(str(grade[row]), None, None, f"qrels row {row}")
        else:
            grade = np.empty(len(g), dtype=np.int64)
            for i, v in enumerate(g.to_pylist()):
                grade[i] = _parse_grade(
                    repr(v) if isinstance(v, float) else str(v), None, None, f"qrels row {i}"
                )
        return Qrels(
            qid,
            doc,
            np.ascontiguousarray(grade, dtype=np.int64),
            Origin("qrels", labels=lambda i: f"qrels row {i}"),
            None,
            tuple(conv.notes),
        )
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    labels: list[str] = []
    if isinstance(qrels, Mapping):
        for q, judged in qrels.items():
            qtext = _key_text(q, conv, "qid", f"qrels[{q!r}]")
            if isinstance(judged, Mapping):
                items = [(d, g, f"qrels[{q!r}][{d!r}]") for d, g in judged.items()]
            elif isinstance(judged, (list, tuple, set, frozenset)):
                seq = sorted(judged) if isinstance(judged, (set, frozenset)) else judged
                items = [(d, 1, f"qrels[{q!r}][{i}]") for i, d in enumerate(seq)]
            else:
                raise InputError(
                    f"qrels[{q!r}] is {type(judged).__name__} (expected a dict docno → grade or a "
                    "list of relevant docnos)",
                    location=f"qrels[{q!r}]",
                )
            for d, g, where in items:
                docs.append(_key_text(d, conv, "docno", where))
                qids.append(qtext)
                grades.append(_grade_value(g, where))
                labels.append(where)
    elif isinstance(qrels, Iterable):
        for i, item in enumerate(qrels):
            where = f"qrels[{i}]"
            try:
                q, d, g = item.query_id, item.doc_id, item.relevance
            except AttributeError:
                try:
                    q, d, g = item
                except (TypeError, ValueError):
                    raise InputError(
                        f"{type(item).__name__} is not a Qrel "
                        "(expected query_id, doc_id, relevance)",
                        location=where,
                    ) from None
            qids.append(_key_text(q, conv, "qid", where))
            docs.append(_key_text(d, conv, "docno", where))
            grades.append(_grade_value(g, where))
            labels.append(where)
    else:
        raise InputError(f"cannot read qrels from {type(qrels).__name__}", location="qrels")
    if not qids:
        raise InputError("no judgments (the qrels are empty)", location="qrels")
    return Qrels(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(grades, dtype=np.int64),
        Origin("qrels", labels=lambda i: labels[i]),
        None,
        tuple(conv.notes),
    )


def _grade_value(g: Any, where: str) -> int:
    if isinstance(g, (bool, np.bool_)):
        raise InputError(f"grade {g!r} is a boolean (expected an integer)", location=where)
    if isinstance(g, (int, np.integer)):
        return _parse_grade(str(int(g)), None, None, where)
    if isinstance(g, (float, np.floating)):
        return _parse_grade(repr(float(g)), None, None, where)
    if isinstance(g, str):
        return _parse_grade(g, None, None, where)
    raise InputError(f"grade {g!r} is not an integer", location=where)
