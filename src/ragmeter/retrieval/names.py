"""Measure names in both grammars: trec_eval (``P.5,10``) and ir_measures (``P@10``).

This module is the single source of measure names (docs/retrieval.md#measure-names): the CLI, the
registry entry (:mod:`ragmeter.retrieval.registry`), the docs and the output all read it. It is
pure Python and imports nothing heavy, so the registry can use it.

A requested name expands to one or more :class:`Measure` objects, one per printed value (``P.5,10``
is ``P_5`` and ``P_10``). A Measure knows its trec_eval spelling, its ir_measures spelling (when
either exists), its canonical name (the ir_measures spelling where one exists, else the trec_eval
one) and the spelling it was requested in.

>>> [m.printed() for m in parse_measures("P.5,10 nDCG@10")]
['P_5', 'P_10', 'nDCG@10']
>>> [m.canonical for m in parse_measures(["map", "ndcg_cut.10", "recip_rank"])]
['AP', 'RR', 'nDCG@10']
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.io.cnum import C_SPACE, c_atof, c_atol

__all__ = [
    "CANONICAL_ORDER",
    "FAMILIES",
    "NICKNAMES",
    "Family",
    "Measure",
    "MeasureSpec",
    "parse_measures",
    "resolve_one",
]

_COMMAND = "trec"
REFERENCE = "trec_eval 10.0"
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# the largest cutoff: beyond it a cutoff cannot be told from "the whole ranking" anyway, and
# trec_eval's atol would clamp larger text to 2**63 - 1
_MAX_CUTOFF = 2**31 - 1
_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass(frozen=True)
class Family:
    """One measure family: a trec_eval measure (or a ragmeter extension) and its spellings.

    ``kind`` says how parameters are written and how many values a request yields:
    ``runid`` (a string), ``count`` (an integer), ``scalar`` (one float, no parameter),
    ``gm`` (a geometric mean, summary only), ``cut`` (integer cutoffs, one value each),
    ``point`` (real cutoffs, one value each), ``reals`` (one value, real parameters),
    ``pairs`` (one value, ``name=value`` parameters).
    """

    name: str
    kind: str
    summary: str
    defaults: tuple[Any, ...] = ()
    ir: str | None = None  # ir_measures base name (``P`` for ``P@k``)
    ir_params: tuple[tuple[str, Any], ...] = ()  # fixed ir_measures parameters (relative=true)
    binary: bool = True  # uses the relevance level (-l); gain measures do not
    gain: str | None = None  # "linear" | "exp" for the nDCG families
    extension: bool = False  # a ragmeter extension, not in trec_eval
    direction: str = "higher"
    range: tuple[float | None, float | None] = (0.0, 1.0)
    formula: str = ""


def _f(name: str, kind: str, summary: str, **kw: Any) -> Family:
    return Family(name, kind, summary, **kw)


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        _f(
            "runid",
            "runid",
            "run tag of the run (summary only)",
            direction="none",
            range=(None, None),
        ),
        _f(
            "num_q",
            "count",
            "number of evaluated queries",
            ir="NumQ",
            direction="none",
            range=(0, None),
        ),
        _f(
            "num_ret",
            "count",
            "number of retrieved documents",
            ir="NumRet",
            direction="none",
            range=(0, None),
        ),
        _f(
            "num_rel",
            "count",
            "number of relevant documents (R)",
            ir="NumRel",
            direction="none",
            range=(0, None),
        ),
        _f(
            "num_rel_ret",
            "count",
            "number of relevant retrieved documents",
            ir="NumRelRet",
            range=(0, None),
        ),
        _f("map", "scalar", "average precision", ir="AP", formula="(1/R)·Σⱼ j/iⱼ"),
        _f(
            "gm_map",
            "gm",
            "geometric mean of average precision (floor 1e-5)",
            formula="exp(mean ln max(AP, 1e-5))",
        ),
        _f("Rprec", "scalar", "precision after R documents", ir="Rprec", formula="hits(R)/R"),
        _f(
            "bpref",
            "scalar",
            "binary preference",
            ir="Bpref",
            formula="(1/R)·Σ (1 − min(m, R)/min(N, R))",
        ),
        _f(
            "recip_rank",
            "scalar",
            "reciprocal rank of the first relevant document",
            ir="RR",
            formula="1/i₁",
        ),
        _f(
            "iprec_at_recall",
            "point",
            "interpolated precision at recall levels",
            defaults=_POINTS,
            ir="IPrec",
        ),
        _f("P", "cut", "precision at k", defaults=_CUTS, ir="P", formula="hits(k)/k"),
        _f(
            "relstring",
            "reals",
            "relevance string of the top ranks (per query only)",
            defaults=(10.0,),
            direction="none",
            range=(None, None),
        ),
        _f("recall", "cut", "recall at k", defaults=_CUTS, ir="R", formula="hits(k)/R"),
        _f("infAP", "scalar", "inferred average precision", ir="infAP"),
        _f("gm_bpref", "gm", "geometric mean of bpref (floor 1e-5)"),
        _f("Rprec_mult", "point", "precision at m·R documents", defaults=_RPREC_MULT),
        _f(
            "utility",
            "reals",
            "linear utility p1·a + p2·b + p3·c + p4·d",
            defaults=(1.0, -1.0, 0.0, 0.0),
            range=(None, None),
        ),
        _f("11pt_avg", "reals", "mean interpolated precision over recall points", defaults=_POINTS),
        _f("binG", "scalar", "binary G"),
        _f(
            "G",
            "pairs",
            "G (gain with cost of non-relevant documents)",
            binary=False,
            gain="linear",
        ),
        _f(
            "dcg",
            "pairs",
            "discounted cumulative gain",
            binary=False,
            gain="linear",
            range=(None, None),
        ),
        _f(
            "ideal_dcg",
            "pairs",
            "ideal discounted cumulative gain",
            binary=False,
            gain="linear",
            range=(None, None),
        ),
        _f(
            "ndcg",
            "pairs",
            "normalised DCG over the whole ranking",
            ir="nDCG",
            binary=False,
            gain="linear",
            formula="DCG(n)/IDCG(|I|)",
        ),
        _f(
            "ndcg_rel",
            "pairs",
            "nDCG averaged over relevant documents",
            binary=False,
            gain="linear",
        ),
        _f(
            "Rndcg",
            "pairs",
            "nDCG averaged over gain-change boundaries",
            binary=False,
            gain="linear",
        ),
        _f(
            "ndcg_cut",
            "cut",
            "normalised DCG at k",
            defaults=_CUTS,
            ir="nDCG",
            binary=False,
            gain="linear",
            formula="DCG(k)/IDCG(k)",
        ),
        _f(
            "map_cut",
            "cut",
            "average precision restricted to the top k (divided by R)",
            defaults=_CUTS,
            ir="AP",
        ),
        _f("relative_P", "cut", "precision at k relative to min(k, R)", defaults=_CUTS),
        _f(
            "success",
            "cut",
            "1 if a relevant document is in the top k",
            defaults=(1, 5, 10),
            ir="Success",
        ),
        _f("set_P", "scalar", "precision of the retrieved set", ir="SetP"),
        _f(
            "set_relative_P",
            "scalar",
            "set precision relative to min(n, R)",
            ir="SetP",
            ir_params=(("relative", True),),
        ),
        _f("set_recall", "scalar", "recall of the retrieved set", ir="SetR"),
        _f("set_map", "scalar", "set precision × set recall", ir="SetAP"),
        _f("set_F", "reals", "F-measure of the retrieved set", defaults=(1.0,), ir="SetF"),
        _f(
            "num_nonrel_judged_ret",
            "count",
            "number of judged non-relevant retrieved documents",
            direction="none",
            range=(0, None),
        ),
        _f("rbp", "pairs", "rank-biased precision", ir="RBP", binary=False, gain="linear"),
        _f(
            "rbp_resid",
            "pairs",
            "rank-biased precision residual (unjudged mass)",
            binary=False,
            direction="none",
        ),
        _f(
            "unj",
            "cut",
            "fraction of unjudged documents in the top k",
            defaults=(5, 10, 20),
            direction="lower",
        ),
        # ragmeter extensions (docs/retrieval.md#measures)
        _f(
            "ndcg_exp",
            "pairs",
            "nDCG with exponential gain 2^g − 1",
            ir="nDCG",
            ir_params=(("gain", "exp"),),
            binary=False,
            gain="exp",
            extension=True,
        ),
        _f(
            "ndcg_cut_exp",
            "cut",
            "nDCG at k with exponential gain 2^g − 1",
            defaults=_CUTS,
            ir="nDCG",
            ir_params=(("gain", "exp"),),
            binary=False,
            gain="exp",
            extension=True,
        ),
        _f(
            "recip_rank_cut",
            "cut",
            "reciprocal rank within the top k (MRR@k)",
            defaults=(10,),
            ir="RR",
            extension=True,
        ),
        _f(
            "judged",
            "cut",
            "fraction of the top min(k, n) documents that are judged",
            defaults=(10,),
            ir="Judged",
            binary=False,
            extension=True,
        ),
        _f(
            "success_all",
            "cut",
            "1 if every relevant document is in the top k",
            defaults=(1, 5, 10),
            ir="Success",
            ir_params=(("all", True),),
            extension=True,
        ),
    )
}

CANONICAL_ORDER: tuple[str, ...] = tuple(FAMILIES)
"""trec_eval's table order, then ragmeter's extensions (docs/retrieval.md#measure-names)."""

ALL_TREC: tuple[str, ...] = tuple(
    f for f in CANONICAL_ORDER[: CANONICAL_ORDER.index("unj") + 1] if f not in ("dcg", "ideal_dcg")
)

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": [
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
    ],
    "all_trec": ALL_TREC,
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}
ULTRARAG_KS = (1, 5, 10, 20, 50, 100)

# ir_measures spellings -> family; cutoff rules are applied by the parser
_IR_BASE = {
    "AP": "map",
    "MAP": "map",
    "P": "P",
    "Precision": "P",
    "R": "recall",
    "Recall": "recall",
    "RR": "recip_rank",
    "MRR": "recip_rank",
    "nDCG": "ndcg",
    "NDCG": "ndcg",
    "Rprec": "Rprec",
    "RPrec": "Rprec",
    "Bpref": "bpref",
    "BPref": "bpref",
    "infAP": "infAP",
    "Success": "success",
    "IPrec": "iprec_at_recall",
    "SetP": "set_P",
    "SetRelP": "set_relative_P",
    "SetR": "set_recall",
    "SetAP": "set_map",
    "SetF": "set_F",
    "NumQ": "num_q",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "RBP": "rbp",
    "RBP_resid": "rbp_resid",
    "Judged": "judged",
}
_LOWER_ALIASES = {  # common RAG spellings (ranx, UltraRAG); printed in ir_measures style
    "mrr": "RR",
    "ndcg": "nDCG",
    "map": "AP",
    "precision": "P",
    "recall": "R",
    "hit_rate": "Success",
}
_UNSUPPORTED = {
    "ERR",
    "nERR",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "ERR_IA",
    "nERR_IA",
    "alpha_nDCG",
    "alpha-nDCG",
    "alpha_ndcg",
    "INST",
    "INSQ",
    "SDCG",
    "NRBP",
    "Compat",
    "BPM",
    "StRecall",
    "AP_IA",
    "MAP_IA",
    "P_IA",
    "Accuracy",
    "yaap",
    "ndcg_p",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "num_nonjudged_ret",
    "all_prefs",
    "qrels_jg",
    "relstring_avgjg",
}
_PREFS_PREFIX = "prefs_"


# --------------------------------------------------------------------------------------------
# Measure


def _fmt_real(x: float) -> str:
    """Shortest round-trip spelling of a real parameter (``0.8``, ``1``, ``-0.5``)."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _fmt_real(v)
    if isinstance(v, tuple):  # gains
        return "{" + ",".join(f"{lv}:{_fmt_real(g)}" for lv, g in v) + "}"
    return str(v)


@dataclass(frozen=True)
class Measure:
    """One printed value: a family with its parameters, and how it was requested.

    ``cutoff`` is the one integer cutoff (``cut`` families) or real point (``point`` families);
    ``params`` holds the other parameters as a sorted tuple of ``(name, value)``: ``gains``
    (a tuple of ``(level, gain)``), ``p``, ``coeffs``, ``points``, ``beta``, ``length``, ``rel``,
    ``judged_only``, ``tail``. ``param_text`` keeps a trec_eval parameter string as typed, which
    trec_eval prints (``utility_2,-1,0,0``).
    """

    family: str
    cutoff: int | float | None = None
    params: tuple[tuple[str, Any], ...] = ()
    param_text: str | None = None
    style: str = "trec"  # the style it was requested in: "trec" or "ir"
    requested: str = ""
    explicit: bool = field(default=True, compare=False)  # False: a family's default parameters

    # -- parameters --------------------------------------------------------------------------
    def param(self, name: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        return default

    @property
    def fam(self) -> Family:
        return FAMILIES[self.family]

    @property
    def rel(self) -> int | None:
        """The measure's own relevance level (``rel=``), or None for the global ``-l``."""
        return self.param("rel")

    @property
    def judged_only(self) -> bool:
        return bool(self.param("judged_only", False))

    @property
    def gains(self) -> tuple[tuple[int, float], ...] | None:
        return self.param("gains")

    @property
    def key(self) -> tuple[Any, ...]:
        """Identity: two requests with the same key name one value."""
        return (self.family, self.cutoff, tuple(p for p in self.params if p[0] != "_text"))

    @property
    def is_variant(self) -> bool:
        """A variant that only ir_measures style can spell (``P(rel=2)@10``)."""
        if self.rel is not None or self.judged_only:
            return True
        return self.family in ("ndcg_cut", "ndcg_cut_exp") and self.gains is not None

    # -- names -------------------------------------------------------------------------------
    @property
    def trec_name(self) -> str | None:
        """The name trec_eval prints (``P_5``, ``iprec_at_recall_0.10``), or None."""
        if self.is_variant:
            return None
        f = self.fam
        if f.kind == "cut":
            return f"{f.name}_{self.cutoff}"
        if f.kind == "point":
            return f"{f.name}_{self.cutoff:3.2f}"
        if f.kind in ("reals", "pairs"):
            text = self.param_text
            if text is None and self.params:
                text = self._synth_param_text()
            return f"{f.name}_{text}" if text else f.name
        return f.name

    def _synth_param_text(self) -> str | None:
        """A trec_eval parameter string for a measure requested in ir_measures style."""
        f = self.fam
        if f.kind == "pairs":
            parts = []
            p = self.param("p")
            if p is not None and not (f.name in ("rbp", "rbp_resid") and p == 0.9):
                parts.append(f"p={_fmt_real(p)}")
            for lv, g in self.gains or ():
                parts.append(f"{lv}={_fmt_real(g)}")
            return ",".join(parts) or None
        if f.name == "set_F":
            beta = self.param("beta", 1.0)
            return None if beta == 1.0 else _fmt_real(beta)
        return None

    @property
    def ir_name(self) -> str | None:
        """The ir_measures-style name (``P@5``, ``nDCG(gain=exp)@10``), or None."""
        f = self.fam
        base = f.ir
        args: list[tuple[str, Any]] = list(f.ir_params)
        cut: str | None = None
        if self.family == "map_cut":
            base = "AP"
        if self.family == "rbp_resid":
            base = "RBP_resid"
        if base is None:
            if not self.is_variant:
                return None
            base = f.name  # variants of trec-only families: name(rel=2)
        if f.kind == "cut":
            cut = str(self.cutoff)
        elif f.kind == "point":
            if f.name != "iprec_at_recall":
                return None
            cut = repr(float(self.cutoff))
        elif f.kind == "reals":
            if f.name == "set_F":
                beta = self.param("beta", 1.0)
                if beta != 1.0:
                    args.append(("beta", beta))
            else:
                return None
        if self.rel is not None:
            args.insert(0, ("rel", self.rel))
        if self.judged_only:
            args.append(("judged_only", True))
        if f.kind == "pairs":
            if f.name in ("rbp", "rbp_resid"):
                args.append(("p", self.param("p")))
                if f.name == "rbp_resid" and self.param("tail"):
                    args.append(("tail", True))
            if self.gains is not None:
                args.append(("gains", self.gains))
        elif f.gain is not None and self.gains is not None:
            args.append(("gains", self.gains))
        text = base
        if args:
            text += "(" + ",".join(f"{k}={_fmt_value(v)}" for k, v in args) + ")"
        if cut is not None:
            text += "@" + cut
        return text

    @property
    def canonical(self) -> str:
        """The registry key: the ir_measures spelling where one exists, else trec_eval's."""
        name = self.ir_name or self.trec_name
        assert name is not None
        return name

    def printed(self, names: str = "as-requested") -> str:
        """The name to print: as requested, or forced to one style where it has a spelling."""
        trec, ir = self.trec_name, self.ir_name
        if names == "trec":
            return trec or ir or ""
        if names == "ir":
            return ir or trec or ""
        if self.style == "ir":
            return ir or trec or ""
        return trec or ir or ""

    # -- registry facts ----------------------------------------------------------------------
    @property
    def reference(self) -> str:
        if self.fam.extension or self.is_variant:
            if self.family in ("judged", "recip_rank_cut"):
                return "ir_measures 0.4.3"
            if self.family in ("ndcg_exp", "ndcg_cut_exp"):
                return "ranx 0.3.21 ndcg_burges"
            return "ragmeter (trec_eval 10.0 definitions)"
        if self.family == "rbp_resid" and self.param("tail"):
            return "Moffat and Zobel 2008"
        return REFERENCE

    @property
    def direction(self) -> str:
        return self.fam.direction

    @property
    def range(self) -> tuple[float | None, float | None]:
        return self.fam.range

    @property
    def value_type(self) -> str:
        """``int`` (counts), ``str`` (runid, relstring) or ``float``."""
        if self.fam.kind == "count":
            return "int"
        if self.fam.kind == "runid" or self.family == "relstring":
            return "str"
        return "float"

    @property
    def per_query(self) -> bool:
        """Whether the measure has a per-query value (runid, num_q and gm_* do not)."""
        return self.fam.kind not in ("runid", "gm") and self.family != "num_q"

    @property
    def summary_row(self) -> bool:
        return self.family != "relstring"

    def describe(self) -> dict[str, Any]:
        """This measure's entry in ``measures`` of the ``--json`` document."""
        params: dict[str, Any] = {}
        if self.cutoff is not None:
            params["cutoff"] = self.cutoff
        for k, v in self.params:
            params[k] = [list(p) for p in v] if k == "gains" else v
        return {
            "name": self.printed(),
            "trec": self.trec_name,
            "ir": self.ir_name,
            "canonical": self.canonical,
            "family": self.family,
            "params": params,
            "reference": self.reference,
        }

    def __str__(self) -> str:
        return self.printed()


@dataclass
class MeasureSpec:
    """A parsed measure list: the measures in canonical order plus parse-time warnings."""

    measures: list[Measure]
    warnings: list[str] = field(default_factory=list)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.measures)

    def __len__(self) -> int:
        return len(self.measures)


# --------------------------------------------------------------------------------------------
# Parsing


def _err(msg: str) -> UsageError:
    return UsageError(msg, command=_COMMAND)


def _parse_number(text: str, *, what: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _err(f"bad {what} '{text}' in '{name}' (expected a number)") from None
    if not math.isfinite(value):
        raise _err(f"bad {what} '{text}' in '{name}' (expected a finite number)")
    return value


def _ignored(text: str, used: int) -> str:
    """What C's atol/atof left unread, or "" when only white space remains."""
    rest = text[used:]
    return rest if rest.strip(C_SPACE) else ""


def _c_real(text: str, *, what: str, name: str, warnings: list[str]) -> float:
    """A real parameter read as trec_eval reads it (``atof``); a warning when text is ignored.

    Text without any number (trec_eval: 0) and non-finite values are refused.
    """
    value, used = c_atof(text)
    if used == 0:
        raise _err(f"bad {what} '{text}' in '{name}' (expected a number)")
    if not math.isfinite(value):
        raise _err(f"bad {what} '{text}' in '{name}' (expected a finite number)")
    rest = _ignored(text, used)
    if rest:
        warnings.append(
            f"{what} '{text}' in '{name}' is read as {_fmt_real(value)}, as trec_eval reads it "
            f"(atof stops at '{rest}')"
        )
    return value


def _int_cutoff(text: str, name: str, warnings: list[str]) -> int:
    """An integer cutoff read as trec_eval 10.0 reads it: ``atol``, so ``1e1`` is 1, ``10x`` 10."""
    k, used = c_atol(text)
    if k < 1:
        raise _err(f"bad cutoff '{text}' in '{name}' (cutoffs are integers ≥ 1)")
    if k > _MAX_CUTOFF:
        raise _err(
            f"bad cutoff '{text}' in '{name}' (cutoffs are integers from 1 to {_MAX_CUTOFF})"
        )
    rest = _ignored(text, used)
    if rest:
        if re.fullmatch(r"\.[0-9]*[" + C_SPACE + "]*", rest):
            warnings.append(f"cutoff '{text}' in '{name}' is not an integer; using {k}")
        else:
            hint = ""
            if rest.startswith("="):
                hint = "; level=gain pairs belong to ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg, rbp"
            warnings.append(
                f"cutoff '{text}' in '{name}' is read as {k}, as trec_eval reads it "
                f"(atol stops at '{rest}'){hint}"
            )
    return k


def _real_cutoff(text: str, name: str, warnings: list[str]) -> float:
    value = _c_real(text, what="cutoff", name=name, warnings=warnings)
    if value < 0:
        raise _err(f"bad cutoff '{text}' in '{name}' (expected a number ≥ 0)")
    return value


def _parse_pairs(
    text: str, name: str, family: str, warnings: list[str]
) -> tuple[tuple[str, Any], ...]:
    """trec_eval's ``name=value`` pairs: integer names are gain levels, ``p`` is RBP's p."""
    gains: dict[int, float] = {}
    params: list[tuple[str, Any]] = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key or not value.strip():
            raise _err(
                f"malformed parameter '{part}' in '{name}' (expected level=gain pairs such as "
                "ndcg.1=3,2=9)"
            )
        if re.fullmatch(r"[+-]?\d+", key):
            level = int(key)
            if level < 0:
                raise _err(f"bad gain level '{key}' in '{name}' (levels are integers ≥ 0)")
            if level in gains:
                raise _err(f"gain level {level} is given twice in '{name}'")
            gains[level] = _c_real(value, what="gain", name=name, warnings=warnings)
        elif key == "p" and family in ("rbp", "rbp_resid"):
            p = _c_real(value, what="p", name=name, warnings=warnings)
            if not 0 < p < 1:
                raise _err(f"bad p '{value}' in '{name}' (expected 0 < p < 1)")
            params.append(("p", p))
        else:
            raise _err(
                f"unknown parameter '{key}' in '{name}' "
                + (
                    "(expected p=… or level=gain pairs)"
                    if family in ("rbp", "rbp_resid")
                    else "(expected level=gain pairs such as ndcg.1=3,2=9)"
                )
            )
    if family == "rbp_resid" and gains:
        raise _err(f"rbp_resid takes only p=… ('{name}')")
    if gains:
        params.append(("gains", tuple(sorted(gains.items()))))
    return tuple(params)


def _family_params(
    fam: Family, text: str, name: str, warnings: list[str]
) -> tuple[tuple[str, Any], ...]:
    """Parameters of ``reals`` and ``pairs`` families from a trec_eval parameter string."""
    if fam.kind == "pairs":
        return _parse_pairs(text, name, fam.name, warnings)
    values = [_c_real(v, what="parameter", name=name, warnings=warnings) for v in text.split(",")]
    if fam.name == "utility":
        if len(values) != 4:
            raise _err(f"utility takes exactly 4 coefficients, not {len(values)} ('{name}')")
        return (("coeffs", tuple(values)),)
    if fam.name == "11pt_avg":
        if any(v < 0 for v in values):
            raise _err(f"bad recall point in '{name}' (expected numbers ≥ 0)")
        return (("points", tuple(sorted(values))),)
    if len(values) != 1:
        raise _err(f"{fam.name} takes one parameter ('{name}')")
    if fam.name == "set_F":
        return (("beta", values[0]),)
    if fam.name == "relstring":
        length = int(values[0])
        if length < 0:
            raise _err(f"bad length in '{name}' (expected an integer ≥ 0)")
        return (("length", length),)
    raise _err(f"{fam.name} takes no parameters ('{name}')")  # pragma: no cover


def _default_params(fam: Family, style: str) -> tuple[tuple[str, Any], ...]:
    if fam.name in ("rbp", "rbp_resid"):
        return (("p", 0.8 if style == "ir" else 0.9),)
    if fam.name == "utility":
        return (("coeffs", fam.defaults),)
    if fam.name == "11pt_avg":
        return (("points", fam.defaults),)
    if fam.name == "set_F":
        return (("beta", 1.0),)
    if fam.name == "relstring":
        return (("length", 10),)
    return ()


def _expand_family(
    fam: Family, params_text: str | None, name: str, style: str, warnings: list[str]
) -> list[Measure]:
    """A trec_eval-style request ``fam[.params]`` as Measures."""
    if fam.kind in ("runid", "count", "scalar", "gm"):
        if params_text is not None:
            raise _err(f"{fam.name} takes no parameters ('{name}')")
        return [Measure(fam.name, style=style, requested=name)]
    explicit = params_text is not None
    if fam.kind == "cut":
        if params_text is None:
            cuts = list(fam.defaults)
        else:
            cuts = [_int_cutoff(c, name, warnings) for c in params_text.split(",")]
        return [
            Measure(fam.name, cutoff=k, style=style, requested=name, explicit=explicit)
            for k in sorted(set(cuts))
        ]
    if fam.kind == "point":
        if params_text is None:
            points = list(fam.defaults)
        else:
            points = [_real_cutoff(c, name, warnings) for c in params_text.split(",")]
        return [
            Measure(fam.name, cutoff=p, style=style, requested=name, explicit=explicit)
            for p in sorted(set(points))
        ]
    # reals / pairs: one value
    if params_text is None:
        return [
            Measure(
                fam.name,
                params=_default_params(fam, style),
                style=style,
                requested=name,
                explicit=False,
            )
        ]
    if not params_text:
        raise _err(f"empty parameters in '{name}'")
    params = dict(_default_params(fam, style))
    params.update(dict(_family_params(fam, params_text, name, warnings)))
    return [
        Measure(
            fam.name,
            params=tuple(sorted(params.items())),
            param_text=params_text,
            style=style,
            requested=name,
        )
    ]


_PARAM_KINDS = ("cut", "point", "reals", "pairs")
_PRINTED_CUT = re.compile(r"^(?P<fam>[A-Za-z0-9_]+?)_(?P<param>.+)$")


def _try_trec(name: str, warnings: list[str]) -> list[Measure] | None:
    """A trec_eval-style name (``P.5,10``, ``map``) or printed form (``P_5``), else None."""
    base, dot, params = name.partition(".")
    if base in FAMILIES:
        return _expand_family(FAMILIES[base], params if dot else None, name, "trec", warnings)
    # printed forms: the longest family name followed by "_" and a valid parameter
    for fam_name in sorted(FAMILIES, key=len, reverse=True):
        fam = FAMILIES[fam_name]
        if not name.startswith(fam_name + "_") or fam.kind in ("runid", "count", "scalar", "gm"):
            continue
        rest = name[len(fam_name) + 1 :]
        try:
            if fam.kind == "cut" and re.fullmatch(r"\d+", rest):
                return _expand_family(fam, rest, name, "trec", warnings)
            if fam.kind == "point" and re.fullmatch(r"\d*\.?\d+", rest):
                return _expand_family(fam, rest, name, "trec", warnings)
            if fam.kind in ("reals", "pairs"):
                return _expand_family(fam, rest, name, "trec", warnings)
        except UsageError:
            continue
    return None


# ir_measures grammar: Name[(args)][@cutoff]
_IR_RE = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<args>.*)\))?(?:@(?P<cut>[^@()]+))?$"
)


def _split_args(text: str, name: str) -> list[tuple[str, str]]:
    """Split ``k=v, k2={1:2, 3:4}`` at top-level commas."""
    out: list[tuple[str, str]] = []
    depth, start, quote = 0, 0, ""
    parts: list[str] = []
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise _err(f"malformed parameter '{part.strip()}' in '{name}' (expected key=value)")
        out.append((key.strip(), value.strip()))
    return out


def _ir_value(text: str, name: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise _err(f"bad value '{text}' in '{name}' (expected a finite number)")
        return value
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) >= 2:
        return text[1:-1]
    if text.startswith("{"):
        import ast

        try:
            value = ast.literal_eval(text)  # never eval: literals only
        except (ValueError, SyntaxError):
            raise _err(
                f"bad value '{text}' in '{name}' (expected a dict such as {{0:0,1:1,2:3}})"
            ) from None
        return value
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", text):
        return text
    raise _err(f"bad value '{text}' in '{name}'")


def _gains_param(value: Any, name: str) -> tuple[tuple[int, float], ...]:
    if not isinstance(value, dict):
        raise _err(f"gains must be a dict such as {{0:0,1:1,2:3}} in '{name}'")
    out: dict[int, float] = {}
    for k, v in value.items():
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise _err(f"bad gain level {k!r} in '{name}' (levels are integers ≥ 0)")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _err(f"bad gain {v!r} for level {k} in '{name}' (expected a number)")
        out[k] = float(v)
    return tuple(sorted(out.items()))


_IR_ALLOWED: dict[str, set[str]] = {
    "map": {"rel", "judged_only"},
    "P": {"rel", "judged_only"},
    "recall": {"rel", "judged_only"},
    "recip_rank": {"rel", "judged_only"},
    "ndcg": {"gain", "gains", "dcg", "judged_only"},
    "Rprec": {"rel", "judged_only"},
    "bpref": {"rel"},
    "infAP": {"rel"},
    "success": {"rel", "judged_only", "all"},
    "iprec_at_recall": {"rel", "judged_only"},
    "set_P": {"rel", "judged_only", "relative"},
    "set_relative_P": {"rel", "judged_only"},
    "set_recall": {"rel", "judged_only"},
    "set_map": {"rel", "judged_only"},
    "set_F": {"rel", "judged_only", "beta"},
    "num_q": set(),
    "num_ret": {"rel", "judged_only"},
    "num_rel": {"rel"},
    "num_rel_ret": {"rel", "judged_only"},
    "rbp": {"p", "gains", "judged_only"},
    "rbp_resid": {"p", "tail"},
    "judged": {"judged_only"},
}


def _try_ir(name: str, warnings: list[str]) -> list[Measure] | None:
    m = _IR_RE.match(name)
    if m is None:
        return None
    base, args_text, cut_text = m.group("name"), m.group("args"), m.group("cut")
    if base not in _IR_BASE:
        return None
    family = _IR_BASE[base]
    args: dict[str, Any] = {}
    for key, value in _split_args(args_text or "", name):
        if key in args:
            raise _err(f"parameter '{key}' is given twice in '{name}'")
        args[key] = _ir_value(value, name)
    allowed = _IR_ALLOWED.get(family, set())
    for key in args:
        if key not in allowed:
            if key == "rel" and family in ("ndcg", "rbp"):
                raise _err(
                    f"{base} takes no rel= parameter ({base} uses graded gains and ignores the "
                    "relevance level, as trec_eval does); use gains={…} to change the gain of a "
                    "grade"
                )
            raise _err(
                f"{base} takes no {key}= parameter"
                + (f" (it takes {', '.join(sorted(allowed))})" if allowed else "")
            )
    params: dict[str, Any] = {}
    if "rel" in args:
        rel = args.pop("rel")
        if isinstance(rel, bool) or not isinstance(rel, int) or rel < 0:
            raise _err(f"bad rel '{rel}' in '{name}' (expected an integer ≥ 0)")
        params["rel"] = rel
    if "judged_only" in args:
        if not isinstance(args["judged_only"], bool):
            raise _err(f"judged_only takes true or false in '{name}'")
        if args.pop("judged_only"):
            params["judged_only"] = True
    # family-specific parameters
    if family == "success" and args.pop("all", False) is True:
        family = "success_all"
    if family == "set_P" and args.pop("relative", False) is True:
        family = "set_relative_P"
    if family == "num_ret" and "rel" in params:
        # NumRet(rel=1) is ir_measures' spelling of NumRelRet
        family = "num_rel_ret"
        if params["rel"] == 1:
            del params["rel"]
    if family == "ndcg":
        gain = args.pop("gain", None)
        dcg = args.pop("dcg", None)
        if dcg is not None:
            if dcg != "exp-log2":
                raise _err(f"nDCG supports dcg='exp-log2' only (an alias of gain=exp), not '{dcg}'")
            gain = "exp"
        if gain not in (None, "linear", "exp"):
            raise _err(f"bad gain '{gain}' in '{name}' (expected linear or exp)")
        if "gains" in args:
            if gain == "exp":
                raise _err(f"gain=exp and gains={{…}} cannot be combined ('{name}')")
            params["gains"] = _gains_param(args.pop("gains"), name)
        if gain == "exp":
            family = "ndcg_exp"
        if cut_text is not None:
            family = "ndcg_cut_exp" if family == "ndcg_exp" else "ndcg_cut"
    if family in ("rbp", "rbp_resid"):
        p = args.pop("p", 0.8)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise _err(f"bad p '{p}' in '{name}' (expected 0 < p < 1)")
        params["p"] = float(p)
        if "gains" in args:
            params["gains"] = _gains_param(args.pop("gains"), name)
        if args.pop("tail", False) is True:
            params["tail"] = True
    if family == "set_F":
        beta = args.pop("beta", 1.0)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise _err(f"bad beta '{beta}' in '{name}' (expected a number)")
        params["beta"] = float(beta)
    if args:  # e.g. all=false, relative=false: accepted defaults
        for key, value in args.items():
            if value not in (False, None):
                raise _err(f"bad value {value!r} for {key} in '{name}'")
    # cutoff
    fam = FAMILIES[family]
    cutoff: int | float | None = None
    if family == "map" and cut_text is not None:
        family, fam = "map_cut", FAMILIES["map_cut"]
    if family == "recip_rank" and cut_text is not None:
        family, fam = "recip_rank_cut", FAMILIES["recip_rank_cut"]
    if fam.kind == "cut":
        if cut_text is None:
            if family in ("P", "recall", "success", "success_all", "judged"):
                raise _err(f"{base} needs a cutoff, e.g. {base}@10 ('{name}')")
            raise _err(f"'{name}' needs a cutoff")  # pragma: no cover
        # ir_measures style has no C reading to reproduce: only decimals (23.4 → 23, warned)
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", cut_text.strip()):
            raise _err(f"bad cutoff '{cut_text}' in '{name}' (cutoffs are integers ≥ 1)")
        cutoff = _int_cutoff(cut_text, name, warnings)
    elif fam.kind == "point":
        if cut_text is None:
            raise _err(f"IPrec needs a recall level, e.g. IPrec@0.5 ('{name}')")
        cutoff = _parse_number(cut_text, what="cutoff", name=name)
        if cutoff < 0:
            raise _err(f"bad cutoff '{cut_text}' in '{name}' (expected a number ≥ 0)")
    elif cut_text is not None:
        raise _err(f"{base} takes no cutoff ('{name}')")
    if fam.kind == "reals" and family == "set_F" and "beta" not in params:
        params["beta"] = 1.0
    return [
        Measure(
            family, cutoff=cutoff, params=tuple(sorted(params.items())), style="ir", requested=name
        )
    ]


def _try_lower_alias(name: str, warnings: list[str]) -> list[Measure] | None:
    m = re.fullmatch(r"(?P<base>[a-z_]+)(?:@(?P<cut>[^@-]+))?(?P<suffix>-l\d+)?", name)
    if m is None or m.group("base") not in _LOWER_ALIASES:
        return None
    base, cut, suffix = m.group("base"), m.group("cut"), m.group("suffix")
    if suffix:
        raise _err(
            f"'{name}' uses ranx's relevance suffix; ragmeter's nDCG ignores the relevance level "
            f"(as trec_eval does), use nDCG(gains={{1:0}})@{cut or 10} to give grade 1 no gain"
            if base == "ndcg"
            else f"'{name}' uses ranx's relevance suffix; use {_LOWER_ALIASES[base]}(rel="
            f"{suffix[2:]})@{cut} instead"
        )
    if cut is None:
        if base in ("map", "ndcg", "recall"):
            return None  # trec_eval names
        if base != "mrr":
            return None
    ir = _LOWER_ALIASES[base] + (f"@{cut}" if cut is not None else "")
    out = _try_ir(ir, warnings)
    if out is not None:
        out = [replace(x, requested=name) for x in out]
    return out


def _nickname(name: str, ks: Sequence[int]) -> list[str] | None:
    if name in NICKNAMES:
        return list(NICKNAMES[name])
    if name == "ultrarag":
        k = ",".join(str(x) for x in ks)
        return ["recip_rank", "map", f"ndcg_cut.{k}", f"P.{k}", f"recall.{k}"]
    return None


def _normalise(name: str) -> str:
    return re.sub(r"[@._\s]|cut", "", name.lower())


def suggestions(name: str) -> list[str]:
    """At most three valid names close to ``name``.

    Names that differ only in case, separators (``@ . _``) and the word ``cut`` come first
    (``NDCG10`` → ``nDCG@10``, ``ndcg_cut.10``); otherwise difflib's closest matches.
    """
    from ragmeter.registry import suggest

    pool = _suggestion_pool(name)
    target = _normalise(name)
    exact: dict[str, str] = {}
    for p in pool:
        if _normalise(p) == target and p != name:
            exact.setdefault(p.lower(), p)
    if exact:
        return list(exact.values())[:3]
    return suggest(name, pool)


def _suggestion_pool(name: str = "") -> list[str]:
    digits = re.findall(r"\d+(?:\.\d+)?", name)
    cut = digits[0] if digits and "." not in digits[0] else "10"
    pool: list[str] = []
    for fam in FAMILIES.values():
        if fam.kind == "cut":
            if fam.ir:
                pool.append(Measure(fam.name, cutoff=int(cut), style="ir").ir_name or "")
            pool.append(f"{fam.name}.{cut}")
        elif fam.kind == "point":
            if fam.ir:
                pool.append("IPrec@0.5")
            pool.append(f"{fam.name}.0.5")
        else:
            if fam.ir:
                ms = Measure(fam.name, params=_default_params(fam, "ir"), style="ir")
                pool.append(ms.ir_name or "")
            pool.append(fam.name)
    pool += [*NICKNAMES, "ultrarag", "mrr", f"precision@{cut}", f"hit_rate@{cut}"]
    return [p for p in dict.fromkeys(pool) if p]


def _unsupported(name: str) -> bool:
    base = re.split(r"[.@(_]", name, maxsplit=1)[0] if not name.startswith(_PREFS_PREFIX) else name
    plain = re.split(r"[.@(]", name, maxsplit=1)[0]
    return (
        name.startswith(_PREFS_PREFIX)
        or plain in _UNSUPPORTED
        or base in _UNSUPPORTED
        or plain.endswith("_avgjg")
    )


def _parse_one(name: str, warnings: list[str]) -> list[Measure]:
    for attempt in (_try_trec, _try_lower_alias, _try_ir):
        out = attempt(name, warnings)
        if out is not None:
            return out
    if _unsupported(name):
        raise _err(f"'{name}' is not supported by ragmeter.retrieval")
    hints = suggestions(name)
    quoted = [f"'{h}'" for h in hints]
    tail = ""
    if quoted:
        body = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
        tail = f"; did you mean {body}?"
    raise _err(f"unknown measure '{name}'{tail}")


def _apply_gain(m: Measure, gain: str) -> Measure:
    """``--gain exp``: rewrite nDCG requests to their exponential-gain variants.

    The variants are ragmeter extensions (docs/retrieval.md#measures).
    """
    if gain != "exp" or m.gains is not None:
        return m
    if m.family == "ndcg":
        return replace(m, family="ndcg_exp", param_text=None)
    if m.family == "ndcg_cut":
        return replace(m, family="ndcg_cut_exp")
    return m


def parse_measures(
    spec: str | Iterable[str] | None = ("official",),
    *,
    ks: Sequence[int] = ULTRARAG_KS,
    gain: str = "linear",
    warnings: list[str] | None = None,
) -> list[Measure]:
    """Parse measure names in either style into Measures, deduplicated, in canonical order.

    ``spec`` is a string (several names may be separated by spaces) or an iterable of strings.
    Nicknames (``official``, ``all_trec``, ``set``, ``ultrarag``) expand; repeated requests of one
    trec_eval family take the union of their cutoffs; a value requested twice is kept once, in
    the spelling requested first. ``warnings`` collects parse-time warnings (truncated cutoffs).

    >>> [m.printed() for m in parse_measures(["P.10", "P.5,10", "map"])]
    ['map', 'P_5', 'P_10']
    >>> parse_measures("NDCG10")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragmeter.errors.UsageError: ragmeter trec: unknown measure 'NDCG10'; did you mean 'nDCG@10' ...
    """
    if gain not in ("linear", "exp"):
        raise _err(f"bad gain '{gain}' (expected linear or exp)")
    if spec is None:
        spec = ("official",)
    names = [spec] if isinstance(spec, str) else list(spec)
    tokens: list[str] = []
    for item in names:
        if not isinstance(item, str):
            raise _err(f"measure names are strings, not {type(item).__name__}")
        tokens += _split_names(item)
    if not tokens:
        raise _err("no measure given")
    collected: dict[tuple[Any, ...], tuple[int, Measure]] = {}
    warn_list = warnings if warnings is not None else []
    order = 0
    for token in tokens:
        expanded = _nickname(token, ks)
        items = [(x, "trec") for x in expanded] if expanded is not None else [(token, None)]
        for name, _style in items:
            for m in _parse_one(name, warn_list):
                m = _apply_gain(m, gain)
                if m.key not in collected:
                    collected[m.key] = (order, m)
                    order += 1
    # as in trec_eval, explicit trec_eval-style parameters replace a family's defaults (from a
    # nickname or a bare name): -m all_trec -m relstring.20 prints relstring_20 only
    explicit = {
        m.family
        for _, m in collected.values()
        if m.style == "trec" and m.explicit and m.fam.kind in _PARAM_KINDS
    }
    kept = [
        m
        for _, m in collected.values()
        if m.explicit or m.style != "trec" or m.family not in explicit
    ]
    return sorted(kept, key=lambda m: _sort_key(m, collected))


def _split_names(text: str) -> list[str]:
    """Split at whitespace outside parentheses and braces (``nDCG(gains={0: 0})@10`` is one).

    White space next to a parameter separator (``P. 5``, ``P.5, 10``, ``ndcg.1= 3``) stays inside
    the name: trec_eval takes the whole ``-m`` value as one measure, and its ``atol``/``atof``
    skip leading white space, so these are the measure trec_eval reads, not two names.
    """
    out: list[str] = []
    depth, cur = 0, []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch.isspace() and depth <= 0:
            j = i
            while j < n and text[j].isspace():
                j += 1
            joined = bool(cur) and (cur[-1] in ".,=" or (j < n and text[j] in ",="))
            if joined:
                cur.append(text[i:j])
            elif cur:
                out.append("".join(cur))
                cur = []
            i = j
            continue
        cur.append(ch)
        i += 1
    if cur:
        out.append("".join(cur))
    return [t for t in out if t]


def _sort_key(m: Measure, collected: dict[tuple[Any, ...], tuple[int, Measure]]) -> tuple[Any, ...]:
    request = collected[m.key][0]
    if m.is_variant:
        return (1, 0, request, 0.0)
    fam_index = CANONICAL_ORDER.index(m.family)
    if m.fam.kind in ("cut", "point"):
        return (0, fam_index, 0, float(m.cutoff))  # type: ignore[arg-type]
    return (0, fam_index, request, 0.0)


def resolve_one(name: str) -> Measure | None:
    """Resolve a name that denotes exactly one value (for the registry), or None if unknown.

    Raises :class:`UsageError` for a known name with bad parameters or several values.

    >>> resolve_one("ndcg_cut_10").canonical, resolve_one("P.5").canonical
    ('nDCG@10', 'P@5')
    """
    warnings: list[str] = []
    if name in NICKNAMES or name == "ultrarag":
        raise _err(f"'{name}' is a set of measures, not one measure")
    try:
        measures = _parse_one(name, warnings)
    except UsageError as exc:
        if str(exc).startswith(f"ragmeter {_COMMAND}: unknown measure"):
            return None
        raise
    if warnings:
        # a name that only reads as a measure the way trec_eval's atol/atof read it (recall.1e1
        # is recall_1) is refused outside `ragmeter trec`, where nothing would print the warning
        raise _err(
            f"'{name}' is ambiguous: {warnings[0]}; write the parameter as trec_eval reads it"
        )
    if len(measures) != 1:
        examples = ", ".join(m.printed() for m in measures[:3])
        more = ", …" if len(measures) > 3 else ""
        raise _err(
            f"'{name}' names {len(measures)} values ({examples}{more}); name one, e.g. with a "
            "single cutoff"
        )
    return measures[0]
