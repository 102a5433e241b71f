"""Measure families: each declared once, next to its kernel, in one module per group
(docs/retrieval.md#measures).

:data:`FAMILIES` holds every :class:`~ragmeter.retrieval.measures.family.Family` in trec_eval's
table order, then ragmeter's extensions; that order is the order of the output
(docs/retrieval.md#measure-names). :data:`MEASURES` maps a family name to its kernel.

Importing this package imports numpy but not pyarrow (see :mod:`.base`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragmeter.retrieval.measures import (
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
from ragmeter.retrieval.measures.base import Context
from ragmeter.retrieval.measures.family import Family

__all__ = ["FAMILIES", "MEASURES", "ORDER", "Context", "Family"]

ORDER: tuple[str, ...] = (
    # trec_eval 10.0's measure table
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
    # ragmeter extensions
    "ndcg_exp",
    "ndcg_cut_exp",
    "recip_rank_cut",
    "judged",
    "success_all",
)


def _catalog() -> dict[str, Family]:
    declared: dict[str, Family] = {}
    for module in (
        counts,
        ap,
        precision,
        rr,
        bpref,
        infap,
        interpolated,
        sets,
        gain,
        rbp,
        coverage,
    ):
        for fam in module.FAMILIES:
            if fam.name in declared:
                raise ValueError(f"measure family {fam.name!r} is declared twice")
            declared[fam.name] = fam
    if set(declared) != set(ORDER):
        raise ValueError(f"ORDER and the declarations differ: {set(declared) ^ set(ORDER)}")
    return {name: declared[name] for name in ORDER}


FAMILIES: dict[str, Family] = _catalog()
MEASURES: dict[str, Callable[..., Any]] = {
    name: fam.kernel for name, fam in FAMILIES.items() if fam.kernel is not None
}
