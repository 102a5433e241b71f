"""Repeats of one judged (sample, pipeline) combined into one value per output metric.

Called by :func:`ragmeter.judge.result.build_result`; kept apart from the engine that runs the
repeats so that the result never imports the engine (which builds the result).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ragmeter import status as st
from ragmeter.judge.metrics._common import Outcome, Part

__all__ = ["combine_repeats"]


def combine_repeats(
    pipe: str, outs: Sequence[Outcome], n_repeats: int
) -> tuple[dict[str, Part], dict[str, Any], Any, dict[str, Any]]:
    """Per output: mean over ``ok`` repeats (median for rubrics), spread, status."""
    parts: dict[str, Part] = {}
    spreads: dict[str, Any] = {}
    first_ok = next((o for o in outs if o.status == st.OK), None)
    base = first_ok or outs[-1]
    for name in outs[-1].parts:
        ok_parts = [o.parts[name] for o in outs if o.parts[name].status == st.OK]
        if ok_parts:
            vals = [p.value for p in ok_parts if p.value is not None]
            if pipe.startswith("rubric:"):
                value = float(statistics.median(vals))
            else:
                total = 0.0
                for v in vals:
                    total += v
                value = total / len(vals)
            parts[name] = Part(st.OK, ok_parts[-1].detail, value)
            if n_repeats > 1:
                mean = sum(vals) / len(vals)
                spreads[name] = {
                    "std": math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals)),
                    "min": min(vals),
                    "max": max(vals),
                    "n_ok": len(vals),
                }
        else:
            last = outs[-1].parts[name]
            parts[name] = Part(last.status, last.detail, None)
            if n_repeats > 1:
                spreads[name] = {"std": None, "min": None, "max": None, "n_ok": 0}
    return parts, spreads, base.explanation, dict(base.fields)
