"""Per-sample scores as columns: what :func:`~ragmeter.answers.result.build_result` reads.

A million :class:`~ragmeter.answers.sample.SampleScore` objects (a dataclass, three dicts and
a list each) cost seconds to pickle, send, unpickle and walk; the same scores as a few lists of
floats and strings cost a fraction of that. A Dask worker turns its shard's scores into
:class:`ScoreColumns` and the driver concatenates the shards' columns in shard order; the
in-process command turns its scores into the same columns, so both paths build their result
with the same code from the same values (docs/scaleout.md, "Exactness rules").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st


@dataclass
class ScoreColumns:
    """The scores of ``len(status)`` samples, in input order.

    ``values[m]`` is the per-sample output column of metric ``m`` (its value where that
    metric's status is ``ok``, else ``None``) and ``statuses[m]`` that metric's status per
    sample (the sample's status where the metric has none); ``status`` is each sample's status.
    ``flags`` holds the samples that have flags only (row → flags), ``str_em_hit`` the
    ``str-em-alce`` hits (``None`` when that metric was not asked for), and the two counts are
    summed over the samples.
    """

    status: list[str]
    values: dict[str, list[Any]]
    statuses: dict[str, list[str]]
    flags: dict[int, list[str]] = field(default_factory=dict)
    str_em_hit: list[Any] | None = None
    empty_golds_dropped: int = 0
    groups_dropped: int = 0

    def __len__(self) -> int:
        return len(self.status)

    @classmethod
    def from_scores(
        cls, scores: Sequence[Any], outputs: Sequence[str], *, str_em_hit: bool = False
    ) -> ScoreColumns:
        """The columns of :class:`SampleScore` objects (``outputs``: the metrics' columns)."""
        ok = st.OK
        return cls(
            status=[s.status for s in scores],
            values={
                m: [s.values.get(m) if s.statuses.get(m) == ok else None for s in scores]
                for m in outputs
            },
            statuses={m: [s.statuses.get(m, s.status) for s in scores] for m in outputs},
            flags={i: list(s.flags) for i, s in enumerate(scores) if s.flags},
            str_em_hit=[s.extra.get("str_em_hit") for s in scores] if str_em_hit else None,
            empty_golds_dropped=sum(s.empty_golds_dropped for s in scores),
            groups_dropped=sum(s.groups_dropped for s in scores),
        )

    @classmethod
    def concat(cls, parts: Sequence[ScoreColumns]) -> ScoreColumns:
        """The columns of ``parts`` one after the other (shards in shard order)."""
        if len(parts) == 1:
            return parts[0]
        first = parts[0] if parts else cls([], {}, {})
        out = cls(
            status=[],
            values={m: [] for m in first.values},
            statuses={m: [] for m in first.statuses},
            str_em_hit=None if first.str_em_hit is None else [],
        )
        for part in parts:
            offset = len(out.status)
            out.status += part.status
            for m, column in part.values.items():
                out.values[m] += column
            for m, column in part.statuses.items():
                out.statuses[m] += column
            out.flags.update((offset + i, f) for i, f in part.flags.items())
            if out.str_em_hit is not None and part.str_em_hit is not None:
                out.str_em_hit += part.str_em_hit
            out.empty_golds_dropped += part.empty_golds_dropped
            out.groups_dropped += part.groups_dropped
        return out

    def flag_lists(self) -> list[list[str]]:
        """Every sample's flags (``[]`` for most)."""
        out: list[list[str]] = [[] for _ in self.status]
        for i, f in self.flags.items():
            out[i] = list(f)
        return out
