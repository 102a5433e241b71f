"""Which parse a TREC file takes: decided from the files' sizes, without importing numpy.

The plain-Python parse (:mod:`ragmeter.io.trec.small`) wins for small files; the Arrow parse
for the rest (docs/retrieval.md#speed). The command asks before it loads either.
"""

from __future__ import annotations

import os
import stat

from ragmeter.io.files import GZIP_MAGIC

__all__ = ["PARSER_ENV", "SMALL_BYTES", "use_small"]

# Files up to this size take the small path (auto mode). Measured with benchmarks/retrieval.py's
# cases cut to 10, 25 and 50 topics: the plain parse wins at 10,000 lines (a 0.4 MB run), breaks
# even near 25,000 (1 MB) and loses at 50,000, where Arrow's parse on two cores pays its start.
SMALL_BYTES = 1 << 19
PARSER_ENV = "RAGMETER_TREC_PARSER"


def use_small(paths: list[str]) -> bool:
    """Whether these input files take the small path: forced by ``RAGMETER_TREC_PARSER``, else
    plain (uncompressed) regular files of at most :data:`SMALL_BYTES` each."""
    forced = os.environ.get(PARSER_ENV, "")
    if forced in ("small", "arrow"):
        return forced == "small"
    for p in paths:
        if p == "-" or p.endswith((".gz", ".bz2", ".zst")):
            return False
        try:
            st = os.stat(p)
            if not stat.S_ISREG(st.st_mode) or st.st_size > SMALL_BYTES:
                return False
            with open(p, "rb") as fh:
                if fh.read(2) == GZIP_MAGIC:
                    return False
        except OSError:
            return False  # the Arrow path reports it
    return True
