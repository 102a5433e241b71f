"""The step match score ``S(ref, act)`` (docs/steps.md).

Steps are wrapped once per question (:class:`ReferenceStep`, :class:`ActualStep`) so that every
output is parsed and canonicalised once, however many reference steps it is compared with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ragmeter.steps import sparql as sp
from ragmeter.steps.iri import score_iri_discovery
from ragmeter.steps.json_outputs import NOT_JSON, json_equal, load_json
from ragmeter.steps.modes import DEFAULT, V6, check_compat
from ragmeter.steps.retrieval_steps import compat_recall_at_k, document_ids, recall_at_k
from ragmeter.steps.timeseries import score_data_points, score_time_series

__all__ = [
    "JSON_MEDIA_TYPE",
    "SPARQL_MEDIA_TYPE",
    "SPECIAL_NAMES",
    "ActualStep",
    "ReferenceStep",
    "score_pair",
    "score_step",
]

SPARQL_MEDIA_TYPE: Final = "application/sparql-results+json"
JSON_MEDIA_TYPE: Final = "application/json"
SPECIAL_NAMES: Final = (
    "retrieval",
    "sparql_query",
    "iri_discovery",
    "retrieve_time_series",
    "retrieve_data_points",
)

_UNSET: Final = object()
Warn = Callable[[str], None]


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


class ReferenceStep:
    """A reference step with its output parsed once."""

    __slots__ = ("_ids", "_json", "_sparql", "args", "media", "name", "output", "step")

    def __init__(self, step: Mapping[str, Any]) -> None:
        self.step = step
        self.name = step.get("name")
        args = step.get("args")
        self.args: Mapping[str, Any] = args if isinstance(args, Mapping) else {}
        self.output = step.get("output")
        self.media = step.get("output_media_type")
        self._sparql: Any = _UNSET
        self._json: Any = _UNSET
        self._ids: Any = _UNSET

    @property
    def has_output(self) -> bool:
        return self.output is not None

    def sparql(self) -> sp.SparqlResult | None:
        if self._sparql is _UNSET:
            ok = self.output is not None and sp.reference_problem(self.output) is None
            self._sparql = sp.load_result(self.output) if ok else None
        return self._sparql

    def json(self) -> Any:
        if self._json is _UNSET:
            self._json = load_json(self.output) if self.output is not None else NOT_JSON
        return self._json

    def ids(self) -> list[Any] | None:
        if self._ids is _UNSET:
            self._ids = document_ids(self.output) if self.output is not None else None
        return self._ids

    @property
    def required_columns(self) -> list[str] | None:
        rc = self.step.get("required_columns")
        return list(rc) if isinstance(rc, list) else None

    @property
    def ordered(self) -> bool:
        return bool(self.step.get("ordered", False))

    @property
    def ignore_duplicates(self) -> bool:
        return bool(self.step.get("ignore_duplicates", True))


class ActualStep:
    """An executed step with its output parsed on demand and cached."""

    __slots__ = ("_ids", "_json", "_sparql", "index", "name", "output", "step", "success")

    def __init__(self, step: Mapping[str, Any], index: int) -> None:
        self.step = step
        self.index = index
        self.name = step.get("name")
        self.success = step.get("status") == "success"
        self.output = step.get("output")
        self._sparql: Any = _UNSET
        self._json: Any = _UNSET
        self._ids: Any = _UNSET

    @property
    def has_output(self) -> bool:
        return self.output is not None

    @property
    def id(self) -> Any:
        return self.step.get("id")

    def sparql(self) -> sp.SparqlResult | None:
        if self._sparql is _UNSET:
            self._sparql = sp.load_result(self.output) if self.output is not None else None
        return self._sparql

    def json(self) -> Any:
        if self._json is _UNSET:
            self._json = load_json(self.output) if self.output is not None else NOT_JSON
        return self._json

    def ids(self) -> list[Any] | None:
        if self._ids is _UNSET:
            self._ids = document_ids(self.output) if self.output is not None else None
        return self._ids


def _sparql_score(ref: ReferenceStep, act: ActualStep, mode: str) -> float:
    reference = ref.sparql()
    actual = act.sparql()
    if reference is None or actual is None:
        return 0.0
    _q, _v, sigma = sp._compare(
        reference, actual, ref.required_columns, ref.ordered, ref.ignore_duplicates, mode
    )
    return 0.0 if sigma is None else 1.0


def _json_score(ref: ReferenceStep, act: ActualStep) -> float:
    a, b = ref.json(), act.json()
    if a is NOT_JSON or b is NOT_JSON:
        return 0.0
    return float(json_equal(a, b))


def _compat_recall(ref: ReferenceStep, act: ActualStep) -> float:
    rel, ret = ref.ids(), act.ids()
    if rel is None or ret is None:
        return 0.0
    act_args = act.step.get("args")
    k = _positive_int(act_args.get("k")) if isinstance(act_args, Mapping) else None
    if k is None:
        k = _positive_int(ref.args.get("k")) or len(ret)
    return compat_recall_at_k(rel, ret, k)


def default_recall(ref: ReferenceStep, act: ActualStep) -> float:
    """``k`` from the reference (else the number of distinct reference ids)."""
    rel, ret = ref.ids(), act.ids()
    if rel is None or ret is None:
        return 0.0
    k = _positive_int(ref.args.get("k"))
    if k is None:
        k = len(set(map(_hashable, rel)))
        if k == 0:
            return 0.0
    return recall_at_k(rel, ret, k)


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _outputs_equal(ref: ReferenceStep, act: ActualStep) -> float:
    return float(ref.has_output and act.has_output and ref.output == act.output)


def score_pair(ref: ReferenceStep, act: ActualStep, mode: str, warn: Warn | None = None) -> float:
    """``S(ref, act)`` for prepared steps; see :func:`score_step`."""
    if not act.success:
        return 0.0
    if mode == DEFAULT:
        if ref.name == "iri_discovery":
            return _iri(ref, act, mode)
        if ref.name != act.name:
            return 0.0
        if ref.media == SPARQL_MEDIA_TYPE:
            return _sparql_score(ref, act, mode)
        if ref.media == JSON_MEDIA_TYPE:
            return _json_score(ref, act)
        if ref.name == "retrieval":
            return default_recall(ref, act)
        if ref.name == "retrieve_time_series":
            return score_time_series(ref.step, act.step)
        if ref.name == "retrieve_data_points":
            return score_data_points(ref.step, act.step, warn)
        return _outputs_equal(ref, act)
    if mode == V6:
        same = ref.name == act.name
        if same and ref.name == "sparql_query" and ref.media == SPARQL_MEDIA_TYPE:
            return _sparql_score(ref, act, mode)
        if same and ref.name == "retrieval" and ref.output:
            return _compat_recall(ref, act)
        if same and ref.name == "retrieve_time_series":
            return score_time_series(ref.step, act.step)
        if same and ref.name == "retrieve_data_points":
            return score_data_points(ref.step, act.step, warn)
        if ref.name == "iri_discovery":
            return _iri(ref, act, mode)
        if same and ref.media == JSON_MEDIA_TYPE:
            return _json_score(ref, act)
        return _outputs_equal(ref, act) if same else 0.0
    # graphrag-eval-5: same-name pairs only, no special step types beyond retrieval
    if ref.name != act.name or not ref.output:
        return 0.0
    if ref.media == SPARQL_MEDIA_TYPE:
        return _sparql_score(ref, act, mode)
    if ref.media == JSON_MEDIA_TYPE:
        return _json_score(ref, act)
    if ref.name == "retrieval":
        return _compat_recall(ref, act)
    return _outputs_equal(ref, act)


def _iri(ref: ReferenceStep, act: ActualStep, mode: str) -> float:
    if not isinstance(ref.output, str):
        return 0.0
    parsed = act.sparql() if act.name in ("autocomplete_search", "sparql_query") else None
    return score_iri_discovery(ref.output, act.name, act.output, mode, parsed)


def score_step(
    reference_step: Mapping[str, Any],
    actual_step: Mapping[str, Any],
    *,
    compat: str | None = None,
) -> float:
    """The match score ``S(ref, act) ∈ [0, 1]`` of one reference step and one executed step.

    Only successful actual steps score. Default mode (first rule that applies):
    ``iri_discovery`` references match a tool that discovered the IRI; otherwise names must be
    equal; SPARQL results compare as tables, ``application/json`` outputs structurally,
    ``retrieval`` steps give recall@k of document ids (the only fractional score),
    time-series and data-point calls compare arguments, anything else compares outputs
    with ``==``. ``compat`` selects graphrag-eval's rules.

    Parameters
    ----------
    reference_step, actual_step : mapping
        A reference step (``name``, ``args``, ``output``, ``output_media_type``…) and an
        executed step (``name``, ``status``, ``output``…).
    compat : {None, "graphrag-eval-6", "graphrag-eval-5"}

    Returns
    -------
    float
        A pair *matches* when the score is positive.

    Examples
    --------
    >>> ref = {"name": "retrieval", "args": {"k": 5},
    ...        "output": '[{"id": 1}, {"id": 3}, {"id": 5}, {"id": 7}, {"id": 9}]'}
    >>> act = {"name": "retrieval", "status": "success", "args": {"k": 5},
    ...        "output": str([{"id": i} for i in range(1, 11)]).replace("'", '"')}
    >>> score_step(ref, act)
    0.6
    >>> score_step({"name": "calculation", "output": 15},
    ...            {"name": "calculation", "status": "success", "output": 16})
    0.0
    """
    mode = check_compat(compat)
    from ragmeter.warnings import warn

    return score_pair(ReferenceStep(reference_step), ActualStep(actual_step, 0), mode, warn)
