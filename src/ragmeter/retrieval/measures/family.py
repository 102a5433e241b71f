"""The declaration of one measure family (docs/retrieval.md#measures).

Each family is one :class:`Family` object declared next to its kernel in
``ragmeter/retrieval/measures/<group>.py``: its spellings in both grammars, its typed parameters,
direction, range, formula and literature citation. The name grammar
(:mod:`ragmeter.retrieval.names`) and the metrics registry (:mod:`ragmeter.retrieval.registry`)
read these declarations and keep no per-family tables of their own.

Pure Python: this module imports neither numpy nor the kernels.

Every family has a formula and a citation. ``runid`` and ``relstring`` have no numeric value;
their "formula" describes the string they print.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ragmeter.metric_param import Param

__all__ = [
    "BUCKLEY_VOORHEES_2004",
    "BUCKLEY_VOORHEES_2005",
    "CUTS",
    "GAINS",
    "JARVELIN_KEKALAINEN_2002",
    "JUDGED",
    "KANTOR_VOORHEES_2000",
    "MOFFAT_ZOBEL_2008",
    "PERSISTENCE",
    "POINTS",
    "RAGMETER",
    "RECALL_POINT",
    "REL",
    "ROBERTSON_2006",
    "SALTON_MCGILL_1983",
    "TREC_APPENDIX",
    "TREC_EVAL",
    "TREC_EVAL_DOC",
    "VAN_RIJSBERGEN",
    "Family",
    "K",
    "MeasureArgs",
]

TREC_EVAL = "trec_eval 10.0"
"""The reference implementation the numbers are tested against (``reference``)."""
RAGMETER = "ragmeter (trec_eval 10.0 definitions)"
"""The reference of extensions and variants that no other implementation computes."""

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# literature cited by several families; trec_eval's own measure descriptions stand in where a
# measure has no paper (counts, set measures, Buckley's experimental G, binG, ndcg_rel, Rndcg)
TREC_EVAL_DOC = "Buckley, trec_eval 10.0 measure descriptions (trec_eval -h -m NAME), NIST 2026"
TREC_APPENDIX = '"Common Evaluation Measures", appendix to the TREC proceedings (NIST)'
VAN_RIJSBERGEN = "van Rijsbergen, Information Retrieval, 2nd ed., Butterworths 1979"
BUCKLEY_VOORHEES_2005 = (
    'Buckley and Voorhees, "Retrieval System Evaluation", ch. 3 of TREC: Experiment and '
    "Evaluation in Information Retrieval, MIT Press 2005"
)
BUCKLEY_VOORHEES_2004 = (
    'Buckley and Voorhees, "Retrieval Evaluation with Incomplete Information", SIGIR 2004'
)
ROBERTSON_2006 = 'Robertson, "On GMAP: and other transformations", CIKM 2006'
KANTOR_VOORHEES_2000 = (
    'Kantor and Voorhees, "The TREC-5 Confusion Track: Comparing Retrieval Methods for '
    'Scanned Text", Information Retrieval 2(2/3), 2000'
)
SALTON_MCGILL_1983 = "Salton and McGill, Introduction to Modern Information Retrieval, 1983"
JARVELIN_KEKALAINEN_2002 = (
    'Järvelin and Kekäläinen, "Cumulated Gain-Based Evaluation of IR Techniques", ACM TOIS '
    "20(4), 2002"
)
MOFFAT_ZOBEL_2008 = (
    'Moffat and Zobel, "Rank-Biased Precision for Measurement of Retrieval Effectiveness", '
    "ACM TOIS 27(1), 2008"
)

# typed parameters shared by many families (registry ``params``)
K = Param("k", "int", None, "cutoff (integer ≥ 1)")
RECALL_POINT = Param("r", "float", None, "recall level or multiple of R")
REL = Param("rel", "int", None, "relevance level for this measure (default: -l)")
JUDGED = Param("judged_only", "bool", False, "drop unjudged documents before ranking (-J)")
GAINS = Param("gains", "dict[int, float]", None, "gain per grade, e.g. {0:0,1:1,2:3}")
PERSISTENCE = Param("p", "float", None, "persistence (0 < p < 1); 0.9 for rbp, 0.8 for RBP")


class MeasureArgs(Protocol):
    """What a kernel reads of a requested measure (:class:`ragmeter.retrieval.measure.Measure`).

    Kernels are typed against this protocol rather than the class, so that the declarations and
    kernels sit below the name grammar that imports them.
    """

    @property
    def family(self) -> str: ...

    @property
    def cutoff(self) -> int | float | None: ...

    @property
    def gains(self) -> tuple[tuple[int, float], ...] | None: ...

    def param(self, name: str, default: Any = None) -> Any: ...


class Family:
    """One measure family: a trec_eval measure (or a ragmeter extension) and its spellings.

    ``kind`` says how parameters are written and how many values a request yields:
    ``runid`` (a string), ``count`` (an integer), ``scalar`` (one float, no parameter),
    ``gm`` (a geometric mean, summary only), ``cut`` (integer cutoffs, one value each),
    ``point`` (real cutoffs, one value each), ``reals`` (one value, real parameters),
    ``pairs`` (one value, ``name=value`` parameters).

    Spellings: ``name`` is the trec_eval name; ``ir`` the ir_measures base name printed for it
    (``P`` of ``P@k``) and ``ir_params`` the fixed ir_measures arguments that select it
    (``relative=true``); ``ir_spellings`` are the ir_measures-style base names that parse to it
    (``AP``, ``MAP``) and ``ir_args`` the ir_measures arguments they accept. ``registry_name``
    and ``aliases`` are the family's entry in the metrics registry (the canonical spelling with
    a parameter placeholder, and its single-valued alternatives).

    ``defaults`` are the cutoffs or points of a bare trec_eval request (``P`` is ``P.5,…,1000``);
    ``bare_params`` the parameters of a bare request of a ``reals``/``pairs`` family, and
    ``ir_bare_params`` those of a bare ir_measures-style request when they differ (RBP).

    A plain class, not a dataclass: creating a dataclass of this size cost ~2 ms of every
    ``ragmeter trec`` start (docs/retrieval.md#speed).
    """

    def __init__(
        self,
        name: str,
        kind: str,
        summary: str,
        formula: str,
        citation: str,
        registry_name: str,
        aliases: tuple[str, ...] = (),
        params: tuple[Param, ...] = (),
        defaults: tuple[Any, ...] = (),
        bare_params: tuple[tuple[str, Any], ...] = (),
        ir_bare_params: tuple[tuple[str, Any], ...] | None = None,
        ir: str | None = None,
        ir_params: tuple[tuple[str, Any], ...] = (),
        ir_spellings: tuple[str, ...] = (),
        ir_args: frozenset[str] = frozenset(),
        binary: bool = True,
        gain: str | None = None,
        extension: bool = False,
        direction: str = "higher",
        range: tuple[float | None, float | None] = (0.0, 1.0),
        reference: str = TREC_EVAL,
        level: str = "sample",
        default: bool = False,
        kernel: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.summary = summary
        self.formula = formula
        self.citation = citation
        self.registry_name = registry_name
        self.aliases = aliases
        self.params = params
        self.defaults = defaults
        self.bare_params = bare_params
        self.ir_bare_params = ir_bare_params
        self.ir = ir
        self.ir_params = ir_params
        self.ir_spellings = ir_spellings
        self.ir_args = ir_args
        self.binary = binary  # uses the relevance level (-l); gain measures do not
        self.gain = gain  # "linear" | "exp" for the nDCG families
        self.extension = extension  # a ragmeter extension, not in trec_eval
        self.direction = direction
        self.range = range
        self.reference = reference  # the implementation whose numbers ragmeter reproduces
        self.level = level  # "corpus": the summary is not a mean of per-query values
        self.default = default  # part of the retrieval task's default metric set
        self.kernel = kernel  # None: the engine fills it (runid, num_q)
        if not self.formula or not self.citation:
            raise ValueError(f"measure family {self.name!r} needs a formula and a citation")

    def __repr__(self) -> str:
        return f"Family({self.name!r})"

    def default_params(self, style: str) -> tuple[tuple[str, Any], ...]:
        """The parameters of a bare request in ``style`` (``"trec"`` or ``"ir"``)."""
        if style == "ir" and self.ir_bare_params is not None:
            return self.ir_bare_params
        return self.bare_params
