"""Z-scores (``-Z FILE``, docs/retrieval.md#command-line): per-query values as (v − mean)/sd."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ragmeter.errors import InputError
from ragmeter.io.files import display_name, open_binary

__all__ = ["MISSING", "ZScores", "read_zscores"]

MISSING = -1000000.0  # trec_eval's value for a missing (qid, measure) entry


@dataclass(frozen=True)
class ZScores:
    """(qid, trec_eval measure name) → (mean, sd), read from a z-score file."""

    entries: dict[tuple[str, str], tuple[float, float]]
    qids: frozenset[str]
    name: str = "zscores"

    def convert(self, qid: str, measure: str, value: float) -> float:
        if qid not in self.qids:
            return MISSING
        entry = self.entries.get((qid, measure))
        if entry is None:
            return MISSING
        mean, sd = entry
        if sd:
            return (value - mean) / sd
        return 0.0 if value == mean else MISSING

    def convert_column(self, qids: list[str], measure: str, values: np.ndarray) -> np.ndarray:
        return np.fromiter(
            (
                self.convert(q, measure, float(v))
                for q, v in zip(qids, values.tolist(), strict=True)
            ),
            dtype=np.float64,
            count=len(qids),
        )


def read_zscores(path: str | os.PathLike[str]) -> ZScores:
    """Read whitespace-separated ``qid measure mean stddev`` lines."""
    name = display_name(path)
    entries: dict[tuple[str, str], tuple[float, float]] = {}
    with open_binary(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw[3:] if lineno == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
            fields = line.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            if len(fields) != 4:
                raise InputError(
                    f"{len(fields)} fields, expected 4 (qid measure mean stddev)",
                    path=name,
                    line=lineno,
                )
            try:
                qid, meas = fields[0].decode("utf-8"), fields[1].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"not valid UTF-8 ({exc.reason})", path=name, line=lineno
                ) from None
            try:
                mean, sd = float(fields[2]), float(fields[3])
            except ValueError:
                raise InputError(
                    f"mean '{fields[2].decode(errors='replace')}' or stddev "
                    f"'{fields[3].decode(errors='replace')}' is not a number",
                    path=name,
                    line=lineno,
                ) from None
            if not (math.isfinite(mean) and math.isfinite(sd)):
                raise InputError("mean and stddev must be finite", path=name, line=lineno)
            entries[(qid, meas)] = (mean, sd)
    if not entries:
        raise InputError(
            "no data lines (expected lines of 4 fields: qid measure mean stddev)", path=name
        )
    return ZScores(entries, frozenset(q for q, _ in entries), name)
