"""The in-process executor (the default): shards run one after another in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ragmeter.executors.base import Split


class LocalExecutor:
    """Runs each shard in the calling process, in order.

    Commands keep their own in-process code path when no executor is asked for; this class
    exists so that code written against :class:`~ragmeter.executors.base.Executor` (plans,
    benchmarks, tests) can run the same shards without a cluster.
    """

    kind = "local"

    def run(
        self,
        task: Callable[[Any], Any],
        shards: Sequence[Any],
        *,
        label: str = "shards",
        split: Split | None = None,  # in one process, a shard that dies takes the command along
    ) -> Iterator[Any]:
        for shard in shards:
            yield task(shard)

    def describe(self) -> dict[str, Any]:
        return {"kind": "local"}

    def close(self) -> None:
        return None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
