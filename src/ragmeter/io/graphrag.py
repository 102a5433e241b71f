"""Reading and writing graphrag-eval files: reference datasets, agent responses, configs,
evaluation records and aggregates (docs/steps.md#inputs and #result,
docs/judge.md#graphrag-eval-files-and-commands).

YAML is loaded with node marks so that validation errors name the line of the offending node.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import yaml

from ragmeter.errors import InputError
from ragmeter.io import yamlsafe
from ragmeter.io.files import PathLike, atomic_write, display_name, read_text
from ragmeter.io.jsonl import finite_float, iter_jsonl
from ragmeter.io.jsonutil import dumps

__all__ = [
    "Located",
    "ResponseEntry",
    "load_config_file",
    "load_reference",
    "load_responses",
    "load_yaml_or_json",
    "write_aggregates",
    "write_records",
]

Path = tuple[Any, ...]


@dataclass
class Located:
    """Parsed data with the source name and the line of each node (1-based), by key path."""

    data: Any
    name: str
    lines: dict[Path, int] = field(default_factory=dict)

    def line(self, path: Path) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]


@dataclass(frozen=True)
class ResponseEntry:
    """One response record as read: the mapping key (JSON object input), record and line."""

    key: Any
    record: Any
    line: int | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN and infinity have no JSON spelling)")


def _json_error(exc: json.JSONDecodeError | ValueError, name: str, expected: str) -> InputError:
    if isinstance(exc, json.JSONDecodeError):
        return InputError(
            f"not valid JSON: {exc.msg} at column {exc.colno} (expected {expected})",
            path=name,
            line=exc.lineno,
        )
    return InputError(f"{exc} (expected {expected})", path=name)


def _walk(node: yaml.Node, path: Path, lines: dict[Path, int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines)


def _load_yaml(text: str, name: str) -> Located:
    # the shared loader bounds aliases, depth and tags before anything is expanded
    node = yamlsafe.compose(text, name)
    data = yamlsafe.construct(node, name) if node is not None else None
    lines: dict[Path, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(data, name, lines)


def load_yaml_or_json(path: PathLike, *, expected: str = "YAML or JSON") -> Located:
    """Load a ``.json`` file as strict JSON, anything else as YAML (with node lines)."""
    name = display_name(path)
    text = read_text(path)
    if not text.strip():
        raise InputError(f"empty file (expected {expected})", path=name)
    if os.fspath(path).lower().endswith(".json"):
        try:
            return Located(
                json.loads(text, parse_constant=_reject_constant, parse_float=finite_float), name
            )
        except ValueError as exc:
            raise _json_error(exc, name, expected) from None
    return _load_yaml(text, name)


def load_reference(path: PathLike) -> Located:
    """A reference dataset (YAML or JSON list of templates, docs/steps.md#inputs)."""
    return load_yaml_or_json(path, expected="a YAML or JSON list of templates")


def load_config_file(path: PathLike) -> Located:
    """A graphrag-eval v6 configuration file (YAML).

    Its keys: docs/judge.md#graphrag-eval-files-and-commands.
    """
    return load_yaml_or_json(path, expected="a YAML mapping with llm, custom_evaluations, ...")


def _looks_like_record(obj: Mapping[str, Any]) -> bool:
    return "question_id" in obj and not isinstance(obj.get("question_id"), (dict, list))


def load_responses(path: PathLike) -> tuple[list[ResponseEntry], str]:
    """Agent responses: JSONL (one record per line), a JSON array of records, or a JSON
    object keyed by question id (docs/steps.md#inputs). Returns the entries in file order."""
    name = display_name(path)
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputError("empty file (expected JSONL records, a JSON array or object)", path=name)
    if not os.fspath(path).lower().endswith(".jsonl"):
        try:
            whole = json.loads(text, parse_constant=_reject_constant, parse_float=finite_float)
        except ValueError as exc:
            if stripped[0] == "[":
                raise _json_error(exc, name, "a JSON array of response records") from None
        else:
            if isinstance(whole, list):
                return [ResponseEntry(None, rec) for rec in whole], name
            if isinstance(whole, dict):
                if _looks_like_record(whole):  # a JSONL file with a single record
                    return [ResponseEntry(None, whole, 1)], name
                return [ResponseEntry(k, rec) for k, rec in whole.items()], name
            raise InputError(
                f"a JSON {_json_type(whole)} (expected JSONL records, a JSON array of "
                "records or an object keyed by question id)",
                path=name,
            )
    entries = [ResponseEntry(None, rec, line) for line, rec in iter_jsonl(path)]
    return entries, name


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__


# -- writing ------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Safe dumper that writes multi-line strings as block scalars."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_representer)


def _plain(obj: Any) -> Any:
    """Datetimes as ISO strings, everything else as JSON-ready values."""
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _iter_kind(path: PathLike) -> str:
    lower = os.fspath(path).lower()
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith(".jsonl"):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    raise InputError(
        "unknown output format (expected a file name ending in .yaml, .yml, .json or .jsonl)",
        path=os.fspath(path),
    )


def render_records(records: Sequence[Mapping[str, Any]], kind: str) -> str:
    if kind == "yaml":
        return yaml.dump(
            [dict(r) for r in records],
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=100,
        )
    if kind == "jsonl":
        return "".join(dumps(_plain(r)) + "\n" for r in records)
    return dumps(_plain(list(records)), indent=2) + "\n"


def render_aggregates(aggregates: Mapping[str, Any], kind: str) -> str:
    if kind == "yaml":
        return yaml.dump(
            dict(aggregates),
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
        )
    return dumps(_plain(aggregates), indent=2) + "\n"


def output_kind(path: PathLike, *, allow_jsonl: bool = True) -> str:
    """The format of an output file from its extension (raises ``InputError`` if unknown)."""
    kind = _iter_kind(path)
    if kind == "jsonl" and not allow_jsonl:
        raise InputError(
            "unknown aggregates format (expected a file name ending in .yaml, .yml or .json)",
            path=os.fspath(path),
        )
    return kind


def write_records(path: PathLike, records: Sequence[Mapping[str, Any]]) -> None:
    """Write evaluation records as YAML, a JSON array or JSONL (by extension), atomically."""
    text = render_records(records, output_kind(path))
    with atomic_write(path) as fh:
        fh.write(text)


def write_aggregates(path: PathLike, aggregates: Mapping[str, Any]) -> None:
    """Write aggregates as YAML or JSON (by extension), atomically."""
    text = render_aggregates(aggregates, output_kind(path, allow_jsonl=False))
    with atomic_write(path) as fh:
        fh.write(text)


def iter_entries(responses: Mapping[Any, Any]) -> Iterator[ResponseEntry]:
    """In-memory responses (mapping id → record) as entries."""
    for key, record in responses.items():
        yield ResponseEntry(key, record)
