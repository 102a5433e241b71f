"""What one judged (sample, metric, repeat) carries through the runtime's calls.

:class:`Ctx` names the sample, metric and repeat and collects the accounting
(:class:`CallStats`); a call ends in a :class:`CallOutcome`; a pipeline stage that did not give
``ok`` raises :class:`Stop` with the sample's status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st

__all__ = ["CallOutcome", "CallStats", "Ctx", "Stop", "prompt_versions"]


@dataclass
class CallStats:
    """Accounting of one (sample, metric, repeat): the per-sample record's cost fields."""

    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    prompt_versions: list[str] = field(default_factory=list)
    # the judge-cache entries the sample's result came from, in call order: what lets the
    # dashboard show the prompts and replies (hashes and stage names only, never the text)
    cache_keys: list[dict[str, Any]] = field(default_factory=list)

    def merge(self, other: CallStats) -> None:
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        if self.cost_usd is None or other.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += other.cost_usd
        for p in other.prompt_versions:
            if p not in self.prompt_versions:
                self.prompt_versions.append(p)
        self.cache_keys.extend(other.cache_keys)


@dataclass
class Ctx:
    sample_id: str
    metric: str
    repeat: int = 0
    stats: CallStats = field(default_factory=CallStats)
    key_extra: Mapping[str, Any] = field(default_factory=dict)  # cache-key only, never sent

    def sub(self, **key_extra: Any) -> Ctx:
        """The same sample, metric and accounting, with extra cache-key fields."""
        return Ctx(
            self.sample_id, self.metric, self.repeat, self.stats, {**self.key_extra, **key_extra}
        )


@dataclass(frozen=True)
class CallOutcome:
    status: str
    detail: str | None = None
    value: Any = None  # the validated pydantic object, or the text of a free-text call
    logprobs: list[Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == st.OK


class Stop(Exception):
    """A pipeline stage did not give ``ok``: carries the sample's status and detail."""

    def __init__(self, status: str, detail: str | None = None) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"{status}: {detail}")


def prompt_versions(refs: set[str]) -> dict[str, int | str]:
    """``{"faithfulness.verify": 1, ...}`` from the prompt references a run used."""
    out: dict[str, int | str] = {}
    for ref in sorted(refs):
        for part in ref.split("+"):
            pid, _, ver = part.partition("@")
            out[pid] = int(ver) if ver.isdigit() else ver
    return out
