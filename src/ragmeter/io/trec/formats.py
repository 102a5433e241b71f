"""The other file formats: BEIR-style TSV qrels, JSONL runs and JSONL gold citations."""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np
import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.arrowutil import binaries, strings
from ragmeter.io.files import display_name, open_binary
from ragmeter.io.trec.checks import _parse_grade, _utf8_error
from ragmeter.io.trec.containers import Origin, Qrels, Run
from ragmeter.io.trec.lines import _WS, _sha_unless_pipe


def _read_qrels_tsv(path: str | os.PathLike[str]) -> Qrels:
    name = display_name(path)
    qids: list[bytes] = []
    docs: list[bytes] = []
    grades: list[int] = []
    lines: list[int] = []
    first = True
    with open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            line = line.rstrip(b"\r\n")
            if not line.strip(_WS) or line.lstrip(_WS).startswith(b"#"):
                continue
            fields = [f.strip(_WS) for f in line.split(b"\t")]
            if len(fields) != 3:
                raise InputError(
                    f"{len(fields)} tab-separated fields, expected 3 (query-id corpus-id score)",
                    path=name,
                    line=lineno,
                )
            if first:
                first = False
                if not re.fullmatch(rb"[+-]?\d+(\.0*)?", fields[2]):
                    continue  # a header line: its third field is not an integer
            for idx, what in ((0, "qid"), (1, "docno")):
                reason = _utf8_error(fields[idx])
                if reason:
                    raise InputError(
                        f"{what} is not valid UTF-8 ({reason})", path=name, line=lineno
                    )
            grades.append(_parse_grade(fields[2].decode("utf-8", "replace"), name, lineno))
            qids.append(fields[0])
            docs.append(fields[1])
            lines.append(lineno)
    if not grades:
        raise InputError(
            "no data lines (expected lines of 3 tab-separated fields: query-id corpus-id score)",
            path=name,
        )
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    sha = _sha_unless_pipe(path) if os.fspath(path) != "-" else None
    return Qrels(
        pa.chunked_array([binaries(qids)]),
        pa.chunked_array([binaries(docs)]),
        np.asarray(grades, dtype=np.int64),
        origin,
        sha,
    )


def _read_run_jsonl(
    path: str | os.PathLike[str], *, qid_field: str, ids_field: str, source_field: str | None
) -> Run:
    from ragmeter.io.jsonl import iter_jsonl

    name = display_name(path)
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    sources: list[str] = []
    lines: list[int] = []
    ranked = True
    seen_q: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path, allow_stdin=True):
        if qid_field not in obj:
            raise InputError(f"missing key '{qid_field}' (set --qid-field)", path=name, line=lineno)
        qid = _id_text(obj[qid_field], name, lineno, qid_field)
        if qid in seen_q:
            raise InputError(
                f"query '{qid}' appears again (first at line {seen_q[qid]}); one line per query",
                path=name,
                line=lineno,
            )
        seen_q[qid] = lineno
        ids = obj.get(ids_field)
        if not isinstance(ids, list):
            raise InputError(
                f"'{ids_field}' is {'missing' if ids is None else 'not a list'} (expected a list "
                "of document ids in rank order; set --ids-field)",
                path=name,
                line=lineno,
            )
        these = [_id_text(d, name, lineno, f"{ids_field}[{i}]") for i, d in enumerate(ids)]
        sc = obj.get("scores")
        if sc is not None:
            if not isinstance(sc, list) or len(sc) != len(these):
                raise InputError(
                    f"'scores' has {len(sc) if isinstance(sc, list) else 'no'} values for "
                    f"{len(these)} ids (expected one score per id)",
                    path=name,
                    line=lineno,
                )
            ranked = False
            for i, s in enumerate(sc):
                if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
                    raise InputError(
                        f"scores[{i}] is {s!r} (expected a finite number)", path=name, line=lineno
                    )
            vals = [float(s) for s in sc]
        else:
            vals = [float(-i) for i in range(len(these))]
        src = obj.get(source_field) if source_field else None
        if source_field and src is not None:
            if isinstance(src, list):
                if len(src) != len(these):
                    raise InputError(
                        f"'{source_field}' has {len(src)} values for {len(these)} ids",
                        path=name,
                        line=lineno,
                    )
                sources += [str(s) for s in src]
            else:
                sources += [str(src)] * len(these)
        elif source_field:
            sources += [""] * len(these)
        qids += [qid] * len(these)
        docs += these
        scores += vals
        lines += [lineno] * len(these)
    if not ranked and len(scores) != len(docs):  # pragma: no cover
        raise InputError("inconsistent scores", path=name)
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    sha = _sha_unless_pipe(path) if os.fspath(path) != "-" else None
    return Run(
        qid=pa.chunked_array([strings(qids).cast(pa.binary())]),
        docno=pa.chunked_array([strings(docs).cast(pa.binary())]),
        score=np.asarray(scores, dtype=np.float64),
        runid=os.path.basename(name),
        origin=origin,
        source=pa.chunked_array([strings(sources)]) if source_field else None,
        sha256=sha,
        ranked=ranked,
    )


def _id_text(value: Any, name: str, lineno: int, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(
            f"'{key}' is {type(value).__name__} (expected a string or integer id)",
            path=name,
            line=lineno,
        )
    text = str(value)
    if not text or any(ch in text for ch in " \t\r\n"):
        raise InputError(
            f"'{key}' is {text!r} (ids are non-empty and contain no whitespace)",
            path=name,
            line=lineno,
        )
    return text


def _read_qrels_jsonl(path: str | os.PathLike[str], *, qid_field: str, gold_field: str) -> Qrels:
    from ragmeter.io.jsonl import iter_jsonl

    name = display_name(path)
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    for lineno, obj in iter_jsonl(path):
        if qid_field not in obj:
            raise InputError(f"missing key '{qid_field}' (set --qid-field)", path=name, line=lineno)
        qid = _id_text(obj[qid_field], name, lineno, qid_field)
        gold = obj.get(gold_field)
        if isinstance(gold, list):
            items = [(d, 1) for d in gold]
        elif isinstance(gold, dict):
            items = list(gold.items())
        else:
            raise InputError(
                f"'{gold_field}' is {'missing' if gold is None else type(gold).__name__} "
                "(expected a list of ids or an object id → grade; set --gold-field)",
                path=name,
                line=lineno,
            )
        for i, (d, g) in enumerate(items):
            doc = _id_text(d, name, lineno, f"{gold_field}[{i}]")
            if isinstance(g, bool) or not isinstance(g, (int, float)):
                raise InputError(
                    f"grade {g!r} of '{doc}' is not an integer", path=name, line=lineno
                )
            grades.append(_parse_grade(repr(g) if isinstance(g, float) else str(g), name, lineno))
            qids.append(qid)
            docs.append(doc)
            lines.append(lineno)
    if not grades:
        raise InputError(f"no judgments (every '{gold_field}' is empty)", path=name)
    origin = Origin(name, lines=np.asarray(lines, dtype=np.int64))
    return Qrels(
        pa.chunked_array([strings(qids).cast(pa.binary())]),
        pa.chunked_array([strings(docs).cast(pa.binary())]),
        np.asarray(grades, dtype=np.int64),
        origin,
        _sha_unless_pipe(path),
    )
