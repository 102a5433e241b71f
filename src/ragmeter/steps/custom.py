"""Custom LLM evaluations of graphrag-eval v6 configs (docs/steps.md)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["INPUTS", "PLACEHOLDERS", "CustomEvaluation", "substitute"]

INPUTS = ("question", "reference_answer", "reference_steps", "actual_answer", "actual_steps")
PLACEHOLDERS = INPUTS
STEPS_KEYS = ("args", "output")
_TOKEN = re.compile(r"\{\{|\}\}|\{(\w+)\}")


def placeholders_in(text: str) -> list[str]:
    """Declared placeholders written in ``text`` (``{{`` and ``}}`` are escapes).

    >>> placeholders_in("Q: {question} {{question}} {other}")
    ['question']
    """
    return [m.group(1) for m in _TOKEN.finditer(text) if m.group(1) in PLACEHOLDERS]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """Replace declared placeholders; ``{{``/``}}`` become braces; other braces stay literal.

    >>> substitute("Q: {question} {{x}} {y}", {"question": "why?"})
    'Q: why? {x} {y}'
    """

    def repl(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = m.group(1)
        return values.get(name, token)

    return _TOKEN.sub(repl, text)


def _heading(name: str) -> str:
    return name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class CustomEvaluation:
    """One validated ``custom_evaluations`` entry."""

    name: str
    inputs: tuple[str, ...]
    instructions: str
    outputs: tuple[tuple[str, str], ...]
    steps_name: str | None = None
    steps_keys: tuple[str, ...] = ()

    @property
    def output_names(self) -> list[str]:
        return [k for k, _d in self.outputs]

    @property
    def error_key(self) -> str:
        return f"{self.name}_error"

    def error(self, message: str) -> dict[str, Any]:
        out: dict[str, Any] = dict.fromkeys(self.output_names)
        out[self.error_key] = message
        return out

    def _format_steps(self, steps: Sequence[Any]) -> str:
        formatted = []
        for step in steps:
            if not isinstance(step, Mapping) or step.get("name") != self.steps_name:
                continue
            item: dict[str, Any] = {}
            for key in self.steps_keys:
                value = step.get(key)
                if isinstance(value, str):
                    with contextlib.suppress(ValueError):
                        value = json.loads(value)
                item[key] = value
            formatted.append(item)
        return json.dumps(formatted, indent=2, default=str)

    def inputs_for(
        self, question: Mapping[str, Any], response: Mapping[str, Any]
    ) -> dict[str, str] | str:
        """Input values for the prompt, or the error message of a missing input."""
        values: dict[str, str] = {}
        wanted = set(self.inputs)
        if "question" in wanted:
            if "question_text" not in question:
                return "Reference missing key 'question_text'"
            values["question"] = question["question_text"]
        if "reference_answer" in wanted:
            if "reference_answer" not in question:
                return "Reference missing key 'reference_answer'"
            values["reference_answer"] = question["reference_answer"]
        if "actual_answer" in wanted:
            if "actual_answer" not in response:
                return "Actual output missing key 'actual_answer'"
            values["actual_answer"] = response["actual_answer"]
        if "reference_steps" in wanted:
            if "reference_steps" not in question:
                return "Reference missing key 'reference_steps'"
            values["reference_steps"] = "\n\n".join(
                self._format_steps(group) for group in question["reference_steps"]
            )
        if "actual_steps" in wanted:
            if "actual_steps" not in response:
                return "Actual output missing key 'actual_steps'"
            values["actual_steps"] = self._format_steps(response["actual_steps"])
        return values

    def prompt(self, values: Mapping[str, str]) -> str:
        """The prompt: instructions, the output list, then one section per input."""
        outputs = "Output the following values separated by tabs:" + "".join(
            f"\n- {key}: {substitute(desc, values)}" for key, desc in self.outputs
        )
        sections = "\n\n".join(f"# {_heading(name)}\n{values[name]}" for name in self.inputs)
        return "\n\n".join([substitute(self.instructions.strip(), values), outputs, sections])

    def parse(self, response: str) -> dict[str, Any]:
        """Tab-separated response → one value per output (JSON-decoded where possible)."""
        fields = response.split("\t")
        if len(fields) != len(self.outputs):
            return self.error(f"Expected {len(self.outputs)} tab-separated values, got: {response}")
        out: dict[str, Any] = {}
        for (key, _desc), text in zip(self.outputs, fields, strict=False):
            try:
                value = json.loads(text, parse_constant=_no_constant)
            except ValueError:
                value = text
            out[key] = value
        return out


def _no_constant(name: str) -> Any:
    raise ValueError(name)
