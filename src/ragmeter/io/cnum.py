"""How trec_eval reads numbers: the C library's ``atol`` and ``atof``.

trec_eval 10.0 reads measure parameters (``-m P.5``), its ``-l``/``-M``/``-N`` flags and qrels
grades with ``atol``, and scores and real-valued parameters with ``atof``. Both read the longest
numeric prefix after leading white space and ignore the rest: ``atol("1e1")`` is 1,
``atol("10x")`` is 10, ``atol("nan")`` is 0, ``atof("0.5x")`` is 0.5. ragmeter reproduces that
reading where it accepts such text, and says so in a warning, so that no parameter is silently read
differently from trec_eval (docs/retrieval.md, "Measure parameters").

Both functions return the value and the number of characters read (0 when nothing could be
converted, as C's ``endptr == nptr``).

>>> c_atol("1e1"), c_atol(" 5"), c_atol("abc"), c_atol("99999999999999999999")
((1, 1), (5, 2), (0, 0), (9223372036854775807, 20))
>>> c_atof("1e1"), c_atof("0.5x"), c_atof("x")
((10.0, 3), (0.5, 3), (0.0, 0))
"""

from __future__ import annotations

import re

__all__ = ["C_SPACE", "LONG_MAX", "LONG_MIN", "c_atof", "c_atol"]

# isspace() in the C locale
C_SPACE = " \t\n\v\f\r"
# glibc on LP64 (trec_eval's reference platform): strtol clamps to the range of a 64-bit long
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)

_LONG = r"[+-]?[0-9]+"
_DOUBLE = (
    r"[+-]?(?:"
    r"(?P<inf>(?i:inf(?:inity)?))"
    r"|(?P<nan>(?i:nan)(?:\([A-Za-z0-9_]*\))?)"
    r"|(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r")"
)
# the patterns are compiled on first use (re caches them), not at import: ``ragmeter trec``
# imports this module, and most of its runs read no number with it


def _skip_space(text: str) -> int:
    i = 0
    while i < len(text) and text[i] in C_SPACE:
        i += 1
    return i


def c_atol(text: str) -> tuple[int, int]:
    """``atol(text)`` as glibc computes it (``strtol`` base 10, clamped), and characters read."""
    start = _skip_space(text)
    m = re.compile(_LONG).match(text, start)
    if m is None:
        return 0, 0
    value = int(m.group())
    return max(LONG_MIN, min(LONG_MAX, value)), m.end()


def c_atof(text: str) -> tuple[float, int]:
    """``atof(text)`` as glibc computes it (``strtod``), and characters read."""
    start = _skip_space(text)
    m = re.compile(_DOUBLE).match(text, start)
    if m is None:
        return 0.0, 0
    token = m.group()
    sign = -1.0 if token.startswith("-") else 1.0
    if m.group("inf"):
        return sign * float("inf"), m.end()
    if m.group("nan"):
        return float("nan"), m.end()
    if m.group("hex"):
        return sign * float.fromhex(m.group("hex")), m.end()
    return float(token), m.end()
