"""Measure families, one module each (docs/retrieval.md#measures).

Importing this package registers every family in :data:`MEASURES`.
"""

from ragmeter.retrieval.measures import (  # noqa: F401 - registration side effects
    ap,
    bpref,
    counts,
    coverage,
    gain,
    infap,
    interpolated,
    precision,
    rbp,
    rr,
    sets,
)
from ragmeter.retrieval.measures.base import MEASURES, Context

__all__ = ["MEASURES", "Context"]
