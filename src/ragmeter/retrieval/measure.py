"""One requested measure value and its spellings in both grammars (docs/retrieval.md#measure-names).

A :class:`Measure` is a family (:data:`ragmeter.retrieval.measures.FAMILIES`) with its parameters
and the style it was requested in; it prints its trec_eval name (``P_5``), its ir_measures name
(``P@5``) and its canonical name (the ir_measures spelling where one exists). The grammars that
read names into Measures are :mod:`ragmeter.retrieval.names` and its two sub-grammars.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.retrieval.measures import FAMILIES
from ragmeter.retrieval.measures.family import RAGMETER, Family

__all__ = ["COMMAND", "Measure", "MeasureSpec", "fmt_real", "name_error"]

COMMAND = "trec"


def name_error(msg: str) -> UsageError:
    """A bad measure name, reported as ``ragmeter trec`` reports it."""
    return UsageError(msg, command=COMMAND)


def fmt_real(x: float) -> str:
    """Shortest round-trip spelling of a real parameter (``0.8``, ``1``, ``-0.5``)."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return fmt_real(v)
    if isinstance(v, tuple):  # gains
        return "{" + ",".join(f"{lv}:{fmt_real(g)}" for lv, g in v) + "}"
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
                parts.append(f"p={fmt_real(p)}")
            for lv, g in self.gains or ():
                parts.append(f"{lv}={fmt_real(g)}")
            return ",".join(parts) or None
        if f.name == "set_F":
            beta = self.param("beta", 1.0)
            return None if beta == 1.0 else fmt_real(beta)
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
        """The implementation whose numbers this value reproduces."""
        if self.fam.extension:
            return self.fam.reference
        if self.is_variant:
            return RAGMETER
        if self.family == "rbp_resid" and self.param("tail"):
            return "Moffat and Zobel 2008"
        return self.fam.reference

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
