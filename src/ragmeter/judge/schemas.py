"""Output schemas of every prompt: JSON Schema for the server, pydantic for local validation.

The JSON Schemas use only ``type``, ``properties``, ``required``, ``items``, ``enum``,
``minItems``, ``maxItems``, ``minimum``, ``maximum`` and ``additionalProperties: false``, the
subset every OpenAI-compatible server understands (docs/judge.md). The pydantic models forbid
extra keys and take verdicts as exact enum values, so ``"Yes, it is supported"`` is never
read as ``"supported"``. Cross-checks that need the request (counts, index permutations,
ranges) are the ``check`` functions of an :class:`OutputSpec`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

__all__ = [
    "OutputSpec",
    "claims_spec",
    "entities_spec",
    "questions_spec",
    "rubric_score_spec",
    "rubric_steps_spec",
    "statements_spec",
    "verdicts_spec",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True)
class OutputSpec:
    """What one call must return: schema name and JSON Schema (sent), model and checks (local)."""

    name: str
    schema: dict[str, Any]
    model: type[BaseModel]
    check: Callable[[Any], list[str]]


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _strings(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "minItems": lo, "maxItems": hi}


# -- statements (faithfulness stage 1, context recall stage 1) ------------------------------


class Statements(_Strict):
    statements: list[StrictStr]


def statements_spec(max_items: int = 50) -> OutputSpec:
    def check(obj: Statements) -> list[str]:
        errs = []
        if len(obj.statements) > max_items:
            errs.append(f"statement count {len(obj.statements)} > {max_items}")
        if any(not s.strip() for s in obj.statements):
            errs.append("a statement is blank")
        return errs

    return OutputSpec(
        "ragmeter_statements", _obj({"statements": _strings(0, max_items)}), Statements, check
    )


# -- entities (context entity recall) -------------------------------------------------------


class Entities(_Strict):
    entities: list[StrictStr]


def entities_spec(max_items: int = 200) -> OutputSpec:
    def check(obj: Entities) -> list[str]:
        if len(obj.entities) > max_items:
            return [f"entity count {len(obj.entities)} > {max_items}"]
        return []

    return OutputSpec(
        "ragmeter_entities", _obj({"entities": _strings(0, max_items)}), Entities, check
    )


# -- verdict lists --------------------------------------------------------------------------


class FaithVerdict(_Strict):
    index: StrictInt
    verdict: Literal["supported", "contradicted", "not_found"]
    evidence: list[StrictInt]
    reason: StrictStr


class FaithVerdicts(_Strict):
    verdicts: list[FaithVerdict]


class AttrVerdict(_Strict):
    index: StrictInt
    attributed: StrictBool
    evidence: list[StrictInt]
    reason: StrictStr


class AttrVerdicts(_Strict):
    verdicts: list[AttrVerdict]


class UseVerdict(_Strict):
    index: StrictInt
    useful: StrictBool
    reason: StrictStr


class UseVerdicts(_Strict):
    verdicts: list[UseVerdict]


_VERDICT_KINDS: dict[str, tuple[type[BaseModel], dict[str, Any], str]] = {
    "faithfulness": (
        FaithVerdicts,
        {
            "index": {"type": "integer"},
            "verdict": {"type": "string", "enum": ["supported", "contradicted", "not_found"]},
            "evidence": {"type": "array", "items": {"type": "integer"}},
            "reason": {"type": "string"},
        },
        "statements",
    ),
    "attribution": (
        AttrVerdicts,
        {
            "index": {"type": "integer"},
            "attributed": {"type": "boolean"},
            "evidence": {"type": "array", "items": {"type": "integer"}},
            "reason": {"type": "string"},
        },
        "statements",
    ),
    "usefulness": (
        UseVerdicts,
        {
            "index": {"type": "integer"},
            "useful": {"type": "boolean"},
            "reason": {"type": "string"},
        },
        "chunks",
    ),
}


def verdicts_spec(kind: str, n_items: int, n_contexts: int | None = None) -> OutputSpec:
    """Exactly one verdict per item, indices a permutation of 1…n, evidence within range.

    >>> spec = verdicts_spec("faithfulness", 4, n_contexts=2)
    >>> v = [{"index": i, "verdict": "supported", "evidence": [1], "reason": ""} for i in (1, 2, 3)]
    >>> obj = spec.model.model_validate({"verdicts": v})
    >>> spec.check(obj)
    ['verdict count 3 != statements 4']
    """
    model, item_props, noun = _VERDICT_KINDS[kind]

    def check(obj: Any) -> list[str]:
        verdicts = obj.verdicts
        if len(verdicts) != n_items:
            return [f"verdict count {len(verdicts)} != {noun} {n_items}"]
        idx = sorted(v.index for v in verdicts)
        if idx != list(range(1, n_items + 1)):
            return [
                f"verdict indices {[v.index for v in verdicts]} "
                f"are not a permutation of 1..{n_items}"
            ]
        if n_contexts is not None:
            for v in verdicts:
                bad = [e for e in getattr(v, "evidence", ()) if not 1 <= e <= n_contexts]
                if bad:
                    return [
                        f"verdict {v.index}: evidence {bad[0]} "
                        f"is not a context number 1..{n_contexts}"
                    ]
        return []

    schema = _obj(
        {
            "verdicts": {
                "type": "array",
                "items": _obj(item_props),
                "minItems": n_items,
                "maxItems": n_items,
            }
        }
    )
    return OutputSpec(f"ragmeter_{kind}_verdicts", schema, model, check)


# -- answer correctness ---------------------------------------------------------------------


class ClaimMatch(_Strict):
    reference: StrictInt
    answer: StrictInt


class Claims(_Strict):
    reference_claims: list[StrictStr]
    answer_claims: list[StrictStr]
    matches: list[ClaimMatch]
    reason: StrictStr


def claims_spec(max_items: int = 100) -> OutputSpec:
    """Claim lists and 1-based matches, each index in range and used at most once.

    >>> spec = claims_spec()
    >>> m = [{"reference": 1, "answer": 1}, {"reference": 2, "answer": 1}]
    >>> obj = spec.model.model_validate(
    ...     {"reference_claims": ["a", "b"], "answer_claims": ["a"], "matches": m, "reason": ""})
    >>> spec.check(obj)
    ['answer claim 1 is matched twice']
    """

    def check(obj: Claims) -> list[str]:
        r, a = len(obj.reference_claims), len(obj.answer_claims)
        if r > max_items or a > max_items:
            return [f"claim count {max(r, a)} > {max_items}"]
        seen_r: set[int] = set()
        seen_a: set[int] = set()
        for m in obj.matches:
            if not 1 <= m.reference <= r:
                return [f"match reference index {m.reference} is not in 1..{r}"]
            if not 1 <= m.answer <= a:
                return [f"match answer index {m.answer} is not in 1..{a}"]
            if m.reference in seen_r:
                return [f"reference claim {m.reference} is matched twice"]
            if m.answer in seen_a:
                return [f"answer claim {m.answer} is matched twice"]
            seen_r.add(m.reference)
            seen_a.add(m.answer)
        return []

    schema = _obj(
        {
            "reference_claims": _strings(0, max_items),
            "answer_claims": _strings(0, max_items),
            "matches": {
                "type": "array",
                "items": _obj(
                    {
                        "reference": {"type": "integer", "minimum": 1},
                        "answer": {"type": "integer", "minimum": 1},
                    }
                ),
            },
            "reason": {"type": "string"},
        }
    )
    return OutputSpec("ragmeter_answer_correctness_claims", schema, Claims, check)


# -- answer relevance -----------------------------------------------------------------------


class Questions(_Strict):
    questions: list[StrictStr]
    noncommittal: StrictBool


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def questions_spec(n: int) -> OutputSpec:
    """Exactly ``n`` non-empty questions, pairwise distinct after whitespace and case folding."""

    def check(obj: Questions) -> list[str]:
        if len(obj.questions) != n:
            return [f"question count {len(obj.questions)} != {n}"]
        if any(not q.strip() for q in obj.questions):
            return ["a question is blank"]
        if len({_norm(q) for q in obj.questions}) != n:
            return ["questions are not pairwise distinct"]
        return []

    schema = _obj(
        {
            "questions": _strings(n, n),
            "noncommittal": {"type": "boolean"},
        }
    )
    return OutputSpec("ragmeter_answer_relevance_questions", schema, Questions, check)


# -- rubric ---------------------------------------------------------------------------------


class Finding(_Strict):
    step: StrictInt
    note: StrictStr


class RubricScore(_Strict):
    findings: list[Finding]
    score: StrictInt
    reason: StrictStr


def rubric_score_spec(n_steps: int, lo: int, hi: int) -> OutputSpec:
    def check(obj: RubricScore) -> list[str]:
        if len(obj.findings) != n_steps:
            return [f"finding count {len(obj.findings)} != steps {n_steps}"]
        if [f.step for f in obj.findings] != list(range(1, n_steps + 1)):
            return [f"findings are not steps 1..{n_steps} in order"]
        if not lo <= obj.score <= hi:
            return [f"score {obj.score} is outside the scale {lo}..{hi}"]
        return []

    schema = _obj(
        {
            "findings": {
                "type": "array",
                "items": _obj({"step": {"type": "integer"}, "note": {"type": "string"}}),
                "minItems": n_steps,
                "maxItems": n_steps,
            },
            "score": {"type": "integer", "minimum": lo, "maximum": hi},
            "reason": {"type": "string"},
        }
    )
    return OutputSpec("ragmeter_rubric_score", schema, RubricScore, check)


class RubricSteps(_Strict):
    steps: list[StrictStr]


def rubric_steps_spec() -> OutputSpec:
    def check(obj: RubricSteps) -> list[str]:
        if not 1 <= len(obj.steps) <= 10:
            return [f"step count {len(obj.steps)} is not in 1..10"]
        if any(not s.strip() for s in obj.steps):
            return ["a step is blank"]
        return []

    return OutputSpec("ragmeter_rubric_steps", _obj({"steps": _strings(1, 10)}), RubricSteps, check)
