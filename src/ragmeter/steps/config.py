"""graphrag-eval v6 configuration files (docs/steps.md).

A config enables the LLM-judged keys: ``llm.generation`` and ``llm.embedding`` say which models
to use (the judge layer maps them onto its endpoint settings), ``answer_correctness`` and
``answer_relevance`` switch the built-in judged metrics, ``custom_evaluations`` adds prompts of
the user's own. Every problem is an :class:`~ragmeter.errors.InputError` raised before any
evaluation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.graphrag import Located, load_config_file
from ragmeter.steps.custom import INPUTS, STEPS_KEYS, CustomEvaluation, placeholders_in

__all__ = ["RESERVED_KEYS", "StepsConfig", "load_config", "parse_config"]

RESERVED_KEYS = frozenset(
    {
        "template_id",
        "question_id",
        "question_text",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "elapsed_sec",
        "actual_answer",
        "reference_answer",
        "reference_steps",
        "status",
        "error",
        "actual_steps",
        "steps_score",
        "answer_relevance",
        "answer_relevance_error",
        "answer_relevance_cost",
        "answer_relevance_reason",
        "answer_reference_claims_count",
        "answer_actual_claims_count",
        "answer_matching_claims_count",
        "answer_correctness_reason",
        "answer_recall",
        "answer_precision",
        "answer_f1",
        "answer_correctness_error",
        "answer_eval_error",
    }
)
"""Keys a record can carry at top level; custom outputs may not reuse them."""

_CORRECTNESS_PLACEHOLDERS = ("question", "reference_answer", "actual_answer")
_TOP_KEYS = ("llm", "answer_correctness", "answer_relevance", "custom_evaluations")
_EVAL_KEYS = ("name", "inputs", "instructions", "outputs", "steps_name", "steps_keys")


@dataclass
class StepsConfig:
    """A validated graphrag-eval v6 config."""

    raw: Mapping[str, Any]
    generation: Mapping[str, Any] | None = None
    embedding: Mapping[str, Any] | None = None
    answer_correctness: bool = False
    correctness_prompt: str | None = None
    answer_relevance: bool = False
    custom_evaluations: list[CustomEvaluation] = field(default_factory=list)

    @property
    def needs_judge(self) -> bool:
        """True when the config asks for any LLM-judged key."""
        return self.answer_correctness or self.answer_relevance or bool(self.custom_evaluations)

    def custom_output_names(self) -> list[str]:
        return [name for ev in self.custom_evaluations for name in ev.output_names]


class _Errors:
    def __init__(self, located: Located) -> None:
        self.located = located

    def __call__(self, path: tuple, problem: str, expected: str | None = None) -> InputError:
        where = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path)
        where = where.replace(".[", "[")
        message = f"{where}: {problem}" if where else problem
        if expected:
            message += f" (expected {expected})"
        return InputError(message, path=self.located.name, line=self.located.line(path))


def _mapping(err: _Errors, value: Any, path: tuple, expected: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise err(path, f"a {type(value).__name__}, not a mapping", expected)
    return value


def _model_section(err: _Errors, value: Any, path: tuple) -> Mapping[str, Any]:
    section = _mapping(err, value, path, "a mapping with provider and model")
    for key in ("provider", "model"):
        if key not in section:
            raise err((*path, key), "missing", "a string")
        if not isinstance(section[key], str) or not section[key]:
            raise err((*path, key), f"{section[key]!r}", "a non-empty string")
    return section


def _enabled(err: _Errors, value: Any, path: tuple, default: bool) -> tuple[bool, Mapping]:
    if value is None:
        return default, {}
    section = _mapping(err, value, path, "a mapping")
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise err((*path, "enabled"), f"{enabled!r}", "true or false")
    return enabled, section


def parse_config(located: Located) -> StepsConfig:
    """Validate a loaded config (docs/steps.md)."""
    err = _Errors(located)
    data = located.data
    if not isinstance(data, Mapping):
        raise err(
            (),
            f"a {type(data).__name__}, not a config",
            "a mapping with llm, answer_correctness, answer_relevance, custom_evaluations",
        )
    for key in data:
        if key not in _TOP_KEYS:
            raise err((key,), "unknown key", f"one of {', '.join(_TOP_KEYS)}")
    config = StepsConfig(raw=data)
    llm = data.get("llm")
    if llm is not None:
        llm = _mapping(err, llm, ("llm",), "a mapping with generation and embedding")
        for key in llm:
            if key not in ("generation", "embedding"):
                raise err(("llm", key), "unknown key", "generation or embedding")
        if "generation" not in llm:
            raise err(("llm", "generation"), "missing", "a mapping with provider and model")
        gen = _model_section(err, llm["generation"], ("llm", "generation"))
        temperature = gen.get("temperature", 0.0)
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, (int, float))
            or not 0 <= temperature <= 2
        ):
            raise err(
                ("llm", "generation", "temperature"), f"{temperature!r}", "a number in [0, 2]"
            )
        max_tokens = gen.get("max_tokens")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise err(("llm", "generation", "max_tokens"), f"{max_tokens!r}", "a positive integer")
        config.generation = gen
        if llm.get("embedding") is not None:
            config.embedding = _model_section(err, llm["embedding"], ("llm", "embedding"))

    correctness, section = _enabled(
        err, data.get("answer_correctness"), ("answer_correctness",), llm is not None
    )
    for key in section:
        if key not in ("enabled", "prompt"):
            raise err(("answer_correctness", key), "unknown key", "enabled or prompt")
    if correctness and llm is None:
        raise err(
            ("answer_correctness",),
            "enabled without an llm section",
            "llm.generation, or enabled: false",
        )
    prompt = section.get("prompt")
    if prompt is not None:
        if not isinstance(prompt, str):
            raise err(("answer_correctness", "prompt"), f"{prompt!r}", "a prompt template")
        for m in re.finditer(r"\{\{|\}\}|\{([^{}]*)\}", prompt):
            name = m.group(1)
            if name is not None and name not in _CORRECTNESS_PLACEHOLDERS:
                raise err(
                    ("answer_correctness", "prompt"),
                    f"unknown placeholder {{{name}}}",
                    "only {question}, {reference_answer} and {actual_answer}; write {{ and }} "
                    "for literal braces",
                )
    config.answer_correctness = correctness
    config.correctness_prompt = prompt

    relevance, section = _enabled(
        err, data.get("answer_relevance"), ("answer_relevance",), config.embedding is not None
    )
    for key in section:
        if key != "enabled":
            raise err(("answer_relevance", key), "unknown key", "enabled")
    if relevance and config.embedding is None:
        raise err(
            ("answer_relevance",),
            "enabled without llm.embedding",
            "llm.embedding, or enabled: false",
        )
    config.answer_relevance = relevance

    if "custom_evaluations" in data:
        config.custom_evaluations = _custom(err, data["custom_evaluations"], llm is not None)
    return config


def _custom(err: _Errors, value: Any, has_llm: bool) -> list[CustomEvaluation]:
    path = ("custom_evaluations",)
    if not isinstance(value, list) or not value:
        raise err(
            path,
            "empty" if value == [] else f"a {type(value).__name__}",
            "a non-empty list of evaluations",
        )
    if not has_llm:
        raise err(path, "custom evaluations need an llm section", "llm.generation")
    evaluations = []
    taken: dict[str, str] = {}
    for n, entry in enumerate(value):
        here = (*path, n)
        entry = _mapping(err, entry, here, "a mapping with name, inputs, instructions, outputs")
        for key in entry:
            if key not in _EVAL_KEYS:
                raise err((*here, key), "unknown key", f"one of {', '.join(_EVAL_KEYS)}")
        for key in ("name", "inputs", "instructions", "outputs"):
            if key not in entry:
                raise err((*here, key), "missing")
        name = entry["name"]
        if not isinstance(name, str) or not name:
            raise err((*here, "name"), f"{name!r}", "a non-empty string")
        inputs = entry["inputs"]
        if (
            not isinstance(inputs, list)
            or not inputs
            or not all(isinstance(i, str) and i in INPUTS for i in inputs)
        ):
            raise err((*here, "inputs"), f"{inputs!r}", f"a non-empty list of {', '.join(INPUTS)}")
        instructions = entry["instructions"]
        if not isinstance(instructions, str):
            raise err((*here, "instructions"), f"a {type(instructions).__name__}", "a string")
        outputs = entry["outputs"]
        if (
            not isinstance(outputs, Mapping)
            or not outputs
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in outputs.items())
        ):
            raise err((*here, "outputs"), f"{outputs!r}", "a mapping of output name → description")
        uses_steps = bool({"reference_steps", "actual_steps"} & set(inputs))
        steps_name = entry.get("steps_name")
        steps_keys = entry.get("steps_keys")
        if uses_steps:
            if steps_name is None:
                raise err(
                    (*here, "steps_name"),
                    "missing (steps are among the inputs)",
                    "the tool name of the steps to show",
                )
            if steps_keys is None:
                raise err(
                    (*here, "steps_keys"),
                    "missing (steps are among the inputs)",
                    "a non-empty list of args, output",
                )
        if steps_name is not None and not isinstance(steps_name, str):
            raise err((*here, "steps_name"), f"{steps_name!r}", "a string")
        if steps_keys is not None and (
            not isinstance(steps_keys, list)
            or not steps_keys
            or not all(k in STEPS_KEYS for k in steps_keys)
        ):
            raise err((*here, "steps_keys"), f"{steps_keys!r}", "a non-empty list of args, output")
        texts = [instructions, *outputs.values()]
        for text in texts:
            for placeholder in placeholders_in(text):
                if placeholder not in inputs:
                    raise err(
                        (*here, "instructions"),
                        f"placeholder {{{placeholder}}} names an input not in inputs",
                        f"one of {', '.join(inputs)}, or {{{{ }}}} for literal braces",
                    )
        for key in (*outputs, f"{name}_error"):
            if key in RESERVED_KEYS:
                raise err(
                    (*here, "outputs"), f"output {key!r} is a reserved record key", "another name"
                )
            if key in taken:
                raise err(
                    (*here, "outputs"),
                    f"output {key!r} is also produced by {taken[key]!r}",
                    "unique output names",
                )
            taken[key] = name
        evaluations.append(
            CustomEvaluation(
                name=name,
                inputs=tuple(dict.fromkeys(inputs)),
                instructions=instructions,
                outputs=tuple(outputs.items()),
                steps_name=steps_name,
                steps_keys=tuple(dict.fromkeys(steps_keys or ())),
            )
        )
    return evaluations


def load_config(path: str | os.PathLike[str]) -> StepsConfig:
    """Read and validate a graphrag-eval v6 config file."""
    return parse_config(load_config_file(path))
