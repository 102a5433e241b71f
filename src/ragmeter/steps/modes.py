"""The three evaluation modes of ``ragmeter.steps`` (docs/steps.md)."""

from __future__ import annotations

from typing import Final, Literal

from ragmeter.errors import UsageError

__all__ = ["COMPAT_CHOICES", "DEFAULT", "V5", "V6", "Mode", "check_compat"]

Mode = Literal["default", "graphrag-eval-6", "graphrag-eval-5"]

DEFAULT: Final = "default"
V6: Final = "graphrag-eval-6"
V5: Final = "graphrag-eval-5"

COMPAT_CHOICES: Final = (V6, V5)


def check_compat(compat: str | None) -> Mode:
    """Normalise a ``compat=`` argument to a mode name.

    >>> check_compat(None), check_compat("graphrag-eval-5")
    ('default', 'graphrag-eval-5')
    >>> check_compat("graphrag-eval-7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragmeter.errors.UsageError: unknown compat mode 'graphrag-eval-7' (expected ...)
    """
    if compat is None or compat == DEFAULT:
        return DEFAULT
    if compat in COMPAT_CHOICES:
        return compat  # type: ignore[return-value]
    raise UsageError(f"unknown compat mode {compat!r} (expected {' or '.join(COMPAT_CHOICES)})")
