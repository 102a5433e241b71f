"""The warning category ragmeter issues (``ragmeter.RagmeterWarning``)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["RagmeterWarning", "renamed_attributes", "show_warning", "warn"]


class RagmeterWarning(UserWarning):
    """A diagnostic that did not stop scoring (also recorded in ``Result.warnings``)."""


def warn(message: str, *, stacklevel: int = 2) -> None:
    """Issue ``message`` as a :class:`RagmeterWarning` attributed to the caller's caller."""
    warnings.warn(message, RagmeterWarning, stacklevel=stacklevel + 1)


def renamed_attributes(
    module: str, renamed: Mapping[str, str], namespace: Mapping[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves each old name in ``renamed`` (old → new) as the new
    one from ``namespace`` (the module's ``globals()``), with a :class:`DeprecationWarning`.

    >>> import warnings as w
    >>> getattr_ = renamed_attributes("m", {"OLD": "NEW"}, {"NEW": 1})
    >>> with w.catch_warnings(record=True) as caught:
    ...     w.simplefilter("always")
    ...     value = getattr_("OLD")
    >>> value, str(caught[0].message)
    (1, 'm.OLD is deprecated: use NEW')
    """

    def __getattr__(name: str) -> Any:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated: use {new}", DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__


def show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A :data:`warnings.showwarning` for the commands: one line of ragmeter's on stderr, not
    Python's two lines pointing into a library (docs/conventions.md)."""
    text = " ".join(str(message).split())
    print(f"ragmeter: warning: {text}", file=sys.stderr)
