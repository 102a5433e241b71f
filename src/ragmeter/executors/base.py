"""The :class:`Executor` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

S = TypeVar("S")
R = TypeVar("R")
# shard -> (its parts, a function merging the parts' results into the shard's result)
Split = Callable[[Any], tuple[Sequence[Any], Callable[[list[Any]], Any]]]


@runtime_checkable
class Executor(Protocol):
    """Runs a module-level task function over shards and yields the results in shard order.

    ``task`` must be a module-level function (pickled by reference) and each shard a small
    frozen dataclass of plain values: nothing large travels to the workers, which read their
    inputs from files. ``split``, when given, is asked for the parts of a shard that killed
    the workers that ran it, and how to merge their results; the parts run once, and their
    merged result is that shard's (an executor whose workers cannot die ignores it).
    ``describe()`` is the ``executor`` metadata block of a result, the only
    part of a result that may differ between executors.
    """

    kind: str

    def run(
        self,
        task: Callable[[Any], Any],
        shards: Sequence[Any],
        *,
        label: str,
        split: Split | None = None,
    ) -> Iterator[Any]: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...
