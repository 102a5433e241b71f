"""The warning category ragmeter issues (``ragmeter.RagmeterWarning``)."""

from __future__ import annotations

import warnings

__all__ = ["RagmeterWarning", "warn"]


class RagmeterWarning(UserWarning):
    """A diagnostic that did not stop scoring (also recorded in ``Result.warnings``)."""


def warn(message: str, *, stacklevel: int = 2) -> None:
    """Issue ``message`` as a :class:`RagmeterWarning` attributed to the caller's caller."""
    warnings.warn(message, RagmeterWarning, stacklevel=stacklevel + 1)
