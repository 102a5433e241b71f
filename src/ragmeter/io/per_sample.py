"""Reading per-sample metric files: the inputs of ``ragmeter compare --per-sample``.

One file holds one system's per-sample values. Layouts, detected from the content:

- **JSONL, wide**: one object per sample, ``{"id": "q1", "status": "ok", "f1": 0.5, "em": 0}``
  (``ragmeter answers --per-sample``); every numeric key but ``id`` is a metric.
- **JSONL, long**: ``{"id": "q1", "metric": "faithfulness", "value": 0.5, "status": "ok"}``
  (``ragmeter judge --per-sample``, a Result's sample table).
- **JSON**: a saved Result (``{"task", "samples": [...]}``), or UltraRAG's evaluation output
  ``{"f1": [0.5, ...], "avg_f1": ...}`` whose lists are in sample order (ids "0", "1", ...).
- **trec_eval -q text**: lines ``measure qid value`` (the ``all`` summary lines are skipped).

A sample whose status is not scored (``ok`` or ``missing_zeroed``), or whose value is null, has
no value: it counts as missing and follows the comparison's ``missing`` policy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.errors import InputError
from ragmeter.io.files import PathLike, display_name, open_binary
from ragmeter.io.jsonl import finite_float, iter_jsonl

__all__ = ["PerSampleFile", "read_per_sample"]

_NOT_METRICS = frozenset({"id", "status", "flags", "detail", "metric", "value", "explanation"})


@dataclass
class PerSampleFile:
    """Values by metric and sample id, plus what was left out and why."""

    path: str
    layout: str
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    unscored: dict[str, dict[str, int]] = field(default_factory=dict)  # metric -> status -> n
    task: str | None = None

    @property
    def metrics(self) -> list[str]:
        return list(self.values)


def _number(value: Any, *, path: str, line: int | None, what: str) -> float | None:
    if value is None:
        return None
    # a boolean is no score: `true` is as likely a flag as a 1.0 (issue 17)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(
            f"{what} is {json.dumps(value, ensure_ascii=False)[:60]} (expected a number or null)",
            path=path,
            line=line,
        )
    v = float(value)
    if not math.isfinite(v):  # 1e309 parses as infinity; NaN and Infinity are refused earlier
        raise InputError(f"{what} is not finite (expected a number or null)", path=path, line=line)
    _check_size(v, what, path, line)
    return v


# as ragmeter.stats.paired.MAX_SCORE: larger scores overflow the tests' sums and squares
_MAX_SCORE = 1e150


def _check_size(v: float, what: str, path: str, line: int | None) -> None:
    if abs(v) > _MAX_SCORE:
        raise InputError(
            f"{what} is {v!r}, too large to compare (expected |value| ≤ 1e150; sums and squared "
            "differences of larger values overflow)",
            path=path,
            line=line,
        )


def _sample_id(obj: dict[str, Any], id_key: str, *, path: str, line: int) -> str:
    if id_key not in obj or obj[id_key] is None:
        raise InputError(f"no {id_key!r} (expected one id per sample)", path=path, line=line)
    raw = obj[id_key]
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise InputError(
            f"{id_key} {raw!r} is not a string or integer (expected a sample id)",
            path=path,
            line=line,
        )
    return str(raw)


def _status(obj: dict[str, Any], *, path: str, line: int | None) -> str:
    status = obj.get("status", st.OK)
    if status not in st.STATUSES:
        raise InputError(
            f"status {status!r} is not a ragmeter status (expected one of "
            f"{', '.join(st.STATUSES[:4])}, ...)",
            path=path,
            line=line,
        )
    return status


class _Collector:
    def __init__(self, out: PerSampleFile) -> None:
        self.out = out
        self.first_line: dict[tuple[str, str], int | None] = {}
        self.text_keys: dict[str, int] = {}  # wide keys holding text (details such as answers)

    def add(
        self, metric: str, sid: str, value: float | None, status: str, line: int | None
    ) -> None:
        key = (metric, sid)
        if key in self.first_line:
            first = self.first_line[key]
            where = f" (first at line {first})" if first is not None else ""
            raise InputError(
                f"sample {sid!r} has two values for metric {metric!r}{where}",
                path=self.out.path,
                line=line,
            )
        self.first_line[key] = line
        per = self.out.values.setdefault(metric, {})
        if status in st.SCORED and value is not None:
            per[sid] = value
        else:
            reason = status if status not in st.SCORED else "null value"
            counts = self.out.unscored.setdefault(metric, {})
            counts[reason] = counts.get(reason, 0) + 1


def _from_jsonl(
    rows: Iterator[tuple[int, dict[str, Any]]], out: PerSampleFile, id_key: str
) -> None:
    col = _Collector(out)
    layout = None
    for line, obj in rows:
        row_layout = "long" if "metric" in obj and "value" in obj else "wide"
        if layout is None:
            layout = row_layout
        elif row_layout != layout:
            raise InputError(
                f"a {row_layout} row in a {layout} file (expected every line to have "
                + ("'metric' and 'value'" if layout == "long" else "metric keys")
                + ")",
                path=out.path,
                line=line,
            )
        sid = _sample_id(obj, id_key, path=out.path, line=line)
        status = _status(obj, path=out.path, line=line)
        if layout == "long":
            metric = obj["metric"]
            if not isinstance(metric, str) or not metric:
                raise InputError(
                    "metric is not a name (expected a string)", path=out.path, line=line
                )
            value = _number(obj["value"], path=out.path, line=line, what="value")
            col.add(metric, sid, value, status, line)
            continue
        for key, raw in obj.items():
            if key in _NOT_METRICS or key == id_key or isinstance(raw, (dict, list)):
                continue  # lists and objects are details, not metric values
            if isinstance(raw, str):
                if key in out.values:  # a metric elsewhere in the file
                    _number(raw, path=out.path, line=line, what=key)
                col.text_keys.setdefault(key, line)
                continue
            if key in col.text_keys:
                first = col.text_keys[key]
                raise InputError(
                    f"{key} is a number here but text at line {first} (expected one type per key)",
                    path=out.path,
                    line=line,
                )
            col.add(key, sid, _number(raw, path=out.path, line=line, what=key), status, line)
    out.layout = f"jsonl-{layout or 'wide'}"


def _from_json(doc: dict[str, Any], out: PerSampleFile) -> None:
    col = _Collector(out)
    if isinstance(doc.get("samples"), list) and "aggregates" in doc:
        out.layout = "result"
        out.task = doc.get("task") if isinstance(doc.get("task"), str) else None
        for k, row in enumerate(doc["samples"]):
            where = f"samples[{k}]"
            if not isinstance(row, dict) or "metric" not in row or "id" not in row:
                raise InputError(
                    f"{where} is not a sample row (expected id, metric, value, status)",
                    path=out.path,
                )
            status = _status(row, path=out.path, line=None)
            value = _number(row.get("value"), path=out.path, line=None, what=f"{where}.value")
            col.add(str(row["metric"]), str(row["id"]), value, status, None)
        return
    lists = {
        k: v
        for k, v in doc.items()
        if isinstance(v, list) and not k.startswith("avg_") and k != "ragmeter"
    }
    if not lists:
        raise InputError(
            "a JSON object without per-sample values (expected a saved Result with 'samples', "
            "or UltraRAG-style lists of per-sample values)",
            path=out.path,
        )
    out.layout = "ultrarag"
    for metric, values in lists.items():
        for k, raw in enumerate(values):
            value = _number(raw, path=out.path, line=None, what=f"{metric}[{k}]")
            col.add(metric, str(k), value, st.OK, None)


def _from_trec_eval(text: str, out: PerSampleFile) -> None:
    col = _Collector(out)
    out.layout = "trec_eval"
    for line, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 3:
            raise InputError(
                f"{len(fields)} fields (expected 'measure qid value', the output of trec_eval -q)",
                path=out.path,
                line=line,
            )
        measure, qid, value = fields
        if qid == "all":
            continue
        try:
            v = float(value)
        except ValueError:
            raise InputError(f"value {value!r} is not a number", path=out.path, line=line) from None
        if not math.isfinite(v):
            raise InputError(f"value {value!r} is not finite", path=out.path, line=line)
        _check_size(v, f"value {value!r}", out.path, line)
        col.add(measure, qid, v, st.OK, line)


def read_per_sample(path: PathLike, *, id_key: str = "id") -> PerSampleFile:
    """Read one system's per-sample values (layout detected from the content).

    Errors are one line with the file and line: ``a.jsonl:4: f1 is "high" (expected a number
    or null)``; a sample with two values for one metric is an error.
    """
    name = display_name(path)
    with open_binary(path) as fh:
        data = fh.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte offset {exc.start})", path=name) from None
    stripped = text.lstrip()
    if not stripped:
        raise InputError("no data (expected per-sample values)", path=name)
    out = PerSampleFile(name, "")
    if stripped.startswith("{"):
        try:
            doc = json.loads(text, parse_constant=_reject, parse_float=finite_float)
        except (json.JSONDecodeError, RecursionError):
            doc = None  # several objects (JSON Lines), or too deep: the line reader says where
        except ValueError as exc:
            raise InputError(str(exc), path=name, line=_constant_line(text)) from None
        if isinstance(doc, dict) and id_key not in doc:
            _from_json(doc, out)
        else:
            _from_jsonl(iter_jsonl(path), out, id_key)
    else:
        _from_trec_eval(text, out)
    if not out.values:
        raise InputError("no per-sample values found", path=name)
    return out


def _constant_line(text: str) -> int | None:
    """The line of the first NaN or Infinity token, or number too large for a double such as
    ``1e309`` (for the message)."""
    import re

    m = re.search(
        r"(?<![\w\"])-?(NaN|Infinity|\d+(\.\d*)?[eE]\+?0*(309|3[1-9]\d|[4-9]\d\d|\d{4,}))"
        r"(?![\w\"])",
        text,
    )
    return text.count("\n", 0, m.start()) + 1 if m else None


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN and infinity have no JSON spelling; use null)")
