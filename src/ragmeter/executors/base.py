"""The :class:`Executor` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

S = TypeVar("S")
R = TypeVar("R")


@runtime_checkable
class Executor(Protocol):
    """Runs a module-level task function over shards and yields the results in shard order.

    ``task`` must be a module-level function (pickled by reference) and each shard a small
    frozen dataclass of plain values: nothing large travels to the workers, which read their
    inputs from files. ``describe()`` is the ``executor`` metadata block of a result, the only
    part of a result that may differ between executors.
    """

    kind: str

    def run(
        self, task: Callable[[Any], Any], shards: Sequence[Any], *, label: str
    ) -> Iterator[Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...
