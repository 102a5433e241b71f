"""Old entry-point names kept as deprecated aliases.

Every engine's entry point is spelled ``evaluate`` (``ragmeter.evaluate``,
``ragmeter.retrieval.evaluate``, ``ragmeter.answers.evaluate``); the extraction tasks follow, one
module per task: ``ner.evaluate``, ``classification.evaluate``, ``linking.evaluate``. The names
they had before (``evaluate_ner``, ``evaluate_types``, ``evaluate_linking``, ...) still work and
say which name replaces them.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["deprecated_alias"]

F = TypeVar("F", bound=Callable[..., Any])


def deprecated_alias(func: F, old: str, new: str) -> F:
    """``func`` under its old name ``old``: same signature, plus a :class:`DeprecationWarning`
    naming ``new`` on each call."""

    @functools.wraps(func)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{old} is deprecated: use {new} (the same function under the name every engine uses)",
            DeprecationWarning,
            stacklevel=2,
        )
        return func(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated alias of :func:`{new}`.\n\n{func.__doc__ or ''}"
    return alias  # type: ignore[return-value]
