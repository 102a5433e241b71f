"""Which parse a TREC file takes: decided from the files' sizes, without importing numpy.

Up to :data:`PLAIN_BYTES` per file the command runs without Arrow (docs/retrieval.md#speed):
the plain-Python parse (:mod:`ragmeter.io.trec.small`) reads files up to :data:`SMALL_BYTES`,
the numpy parse of regular files (:mod:`ragmeter.io.trec.regular`) the larger ones, and a file
that is not regular falls back to the Arrow parse. Larger files take the Arrow parse, whose
reader runs on every core. The command asks before it loads any of them.
"""

from __future__ import annotations

import os
import stat

from ragmeter.io.files import GZIP_MAGIC

__all__ = ["PARSER_ENV", "PLAIN_BYTES", "SMALL_BYTES", "file_parser", "use_plain"]

# Files up to this size take the small path. Measured with benchmarks/retrieval.py's cases cut
# to 10, 25 and 50 topics: the plain parse wins at 10,000 lines (a 0.4 MB run), breaks even
# near 25,000 (1 MB) and loses at 50,000.
SMALL_BYTES = 1 << 19

# Files up to this size take the numpy parse when regular. Measured on benchmarks/retrieval.py's
# deep cases (100 to 1,000 topics x 1,000 lines): it saves Arrow's import and start at every
# size there; at 1M lines (a 40 MB run) it was still 7% faster (0.82 s against 0.88 s) but held
# 400 MB at its peak against 316 MB, which would grow with larger files.
PLAIN_BYTES = 48 << 20

# "small", "regular" or "arrow" forces a path (the tests run every input through each)
PARSER_ENV = "RAGMETER_TREC_PARSER"


def use_plain(paths: list[str]) -> bool:
    """Whether these input files are read without Arrow: forced by ``RAGMETER_TREC_PARSER``,
    else plain (uncompressed) regular files of at most :data:`PLAIN_BYTES` each."""
    forced = os.environ.get(PARSER_ENV, "")
    if forced in ("small", "regular", "arrow"):
        return forced != "arrow"
    for p in paths:
        if p == "-" or p.endswith((".gz", ".bz2", ".zst")):
            return False
        try:
            st = os.stat(p)
            if not stat.S_ISREG(st.st_mode) or st.st_size > PLAIN_BYTES:
                return False
            with open(p, "rb") as fh:
                if fh.read(2) == GZIP_MAGIC:
                    return False
        except OSError:
            return False  # the Arrow path reports it
    return True


def file_parser(path: str) -> str:
    """``small`` or ``regular``: the parse of one file of a command that reads without Arrow."""
    forced = os.environ.get(PARSER_ENV, "")
    if forced in ("small", "regular"):
        return forced
    try:
        return "small" if os.path.getsize(path) <= SMALL_BYTES else "regular"
    except OSError:
        return "small"  # which reports it
