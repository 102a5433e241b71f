"""``ragmeter trec``'s ``--spill DIR``, ``--plan`` and ``--keep-work``.

docs/scaleout.md, "Unsorted runs: the hash plan", says what they do.

Kept apart from :mod:`ragmeter.retrieval.spill` so that parsing the command line imports
neither numpy nor pyarrow (``ragmeter trec`` keeps trec_eval's lean start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PLANS = ("auto", "grouped", "hash")


def spill_flags(
    cfg: dict[str, Any], scale: dict[str, Any], usage: Callable[[str], Exception]
) -> None:
    """Check the flags and set ``cfg``'s ``spill``, ``plan``, ``keep_work``, ``partitions`` and
    ``worker_memory``. ``--spill DIR`` alone implies ``--stream`` in-process; under Dask it
    names the work dir the workers share."""
    cfg.setdefault("spill", None)
    cfg.setdefault("keep_work", False)
    plan = cfg.setdefault("plan", "auto")
    if plan not in PLANS:
        raise usage(f"--plan takes auto, grouped or hash, not '{plan}'")
    if cfg["spill"] is not None and not cfg["spill"].strip():
        raise usage("--spill needs a directory (expected --spill DIR)")
    local = cfg.get("executor") is None
    if local and plan == "hash" and not cfg["spill"]:
        raise usage("--plan hash needs --spill DIR in this process, or --executor dask")
    if local and cfg["spill"]:
        cfg["stream"] = True
    cfg["partitions"] = scale.get("partitions")
    cfg["worker_memory"] = scale.get("worker_memory")
