"""Judge settings: flags, then environment variables, then the ``judge:`` block (docs/judge.md).

:class:`JudgeConfig` is the resolved, validated configuration the runtime uses. It never holds a
key read from a file: the key comes from the environment variable named by ``api_key_env``
(default ``OPENAI_API_KEY``), and ``repr`` masks it. There is no default model and no default
provider: the judge is *configured* only when a model is known and either a base URL is known
or the key variable is set.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ragmeter.errors import InputError, UsageError
from ragmeter.judge.secrets import MASK, clean_url

__all__ = [
    "HINT",
    "OPENAI_DEFAULT_URL",
    "JudgeConfig",
    "RubricDef",
    "config_from_mapping",
    "is_local_endpoint",
    "load_config_file",
    "resolve_config",
]

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

HINT = (
    "LLM metrics skipped (status needs_llm): set RAGMETER_LLM_BASE_URL and RAGMETER_LLM_MODEL "
    "(and OPENAI_API_KEY if the endpoint needs a key)."
)
HINT_EXTRA = (
    "LLM metrics skipped (status needs_llm): the OpenAI client is not installed; "
    "pip install 'ragmeter[llm]'."
)

STRUCTURED_MODES = ("auto", "json_schema", "json_object", "prompt")
RUBRIC_INPUTS = ("question", "answer", "reference", "contexts")


@dataclass(frozen=True)
class RubricDef:
    """One configured rubric (docs/judge.md)."""

    name: str
    inputs: tuple[str, ...] = ("question", "answer")
    scale: tuple[int, int] = (1, 5)
    steps: tuple[str, ...] = ()
    criteria: str | None = None
    levels: tuple[tuple[int, str], ...] = ()
    weighting: str = "none"


@dataclass(frozen=True)
class JudgeConfig:
    """Resolved judge settings. Build it with :func:`resolve_config`.

    ``repr`` never shows the key:

    >>> JudgeConfig(model="m", base_url="http://127.0.0.1:8000/v1", api_key="sk-secret-1234")
    JudgeConfig(model='m', base_url='http://127.0.0.1:8000/v1', api_key='***', structured='auto')
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    api_key: str | None = field(default=None, compare=False)
    provider: str = "openai"
    temperature: float | None = 0.0
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    max_tokens: int = 2048
    max_tokens_cap: int = 8192
    max_input_tokens: int | None = None
    structured: str = "auto"
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 120.0
    deadline_s: float = 600.0
    max_attempts: int = 6
    # bytes of one HTTP-200 reply body; a larger reply is read no further and becomes
    # parse_error with reason reply_too_large (1 MiB is ~30 times a full 8192-token reply)
    max_reply_bytes: int = 1_048_576
    repeats: int = 1
    cache_namespace: str = ""
    cache_path: str | None = ".ragmeter/judge-cache.sqlite"
    cache_requests: bool = True
    prices: tuple[str, ...] = ()
    price_in: float | None = None
    price_out: float | None = None
    max_cost_usd: float | None = None
    per_chunk: bool = False
    relevance_questions: int = 3
    independent: bool = False
    entity_match: str = "normalized"
    rubrics: tuple[RubricDef, ...] = ()
    extra_params: Mapping[str, Any] = field(default_factory=dict)
    embedding_model: str | None = None
    key_in_env: bool = field(default=False, compare=False)

    def __repr__(self) -> str:
        key = MASK if self.api_key else None
        return (
            f"JudgeConfig(model={self.model!r}, base_url={clean_url(self.base_url)!r}, "
            f"api_key={key!r}, structured={self.structured!r})"
        )

    @property
    def configured(self) -> bool:
        """A model is known and either a base URL is known or the key variable is set."""
        return bool(self.model) and (bool(self.base_url) or self.key_in_env)

    @property
    def effective_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url
        if self.key_in_env and self.provider == "openai":
            return OPENAI_DEFAULT_URL
        return None

    @property
    def is_litellm(self) -> bool:
        return self.provider not in OPENAI_COMPATIBLE

    def with_overrides(self, **changes: Any) -> JudgeConfig:
        """A copy with the given settings replaced (``None`` values are ignored)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    def public(self) -> dict[str, Any]:
        """The settings results record: no key, base URL cleaned."""
        return {
            "model": self.model,
            "base_url": clean_url(self.effective_base_url),
            "provider": self.provider,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "structured": self.structured,
            "repeats": self.repeats,
            "cache_namespace": self.cache_namespace or None,
        }


# providers the OpenAI-compatible client serves directly (docs/judge.md)
OPENAI_COMPATIBLE = frozenset(
    {
        "openai",
        "hosted_vllm",
        "vllm",
        "ollama",
        "ollama_chat",
        "lm_studio",
        "llamacpp",
        "openai_like",
        "custom_openai",
    }
)


def is_local_endpoint(url: str | None) -> bool:
    """True for a loopback or private address, whose calls cost 0.0 unless priced.

    >>> is_local_endpoint("http://127.0.0.1:8000/v1"), is_local_endpoint("http://localhost/v1")
    (True, True)
    >>> is_local_endpoint("http://10.1.2.3/v1"), is_local_endpoint("https://api.openai.com/v1")
    (True, False)
    """
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "ip6-localhost") or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


# -- the judge: block -------------------------------------------------------------------------

_KEYS: dict[str, str] = {
    "base_url": "str",
    "model": "str",
    "api_key_env": "str",
    "provider": "str",
    "temperature": "float?",
    "top_p": "float?",
    "seed": "int?",
    "stop": "strlist?",
    "max_tokens": "int",
    "max_tokens_cap": "int",
    "max_input_tokens": "int?",
    "structured": "structured",
    "concurrency": "int",
    "rpm": "float?",
    "tpm": "float?",
    "timeout_s": "float",
    "deadline_s": "float",
    "max_attempts": "int",
    "max_reply_bytes": "int",
    "repeats": "int",
    "cache_namespace": "str",
    "cache": "str?",
    "prices": "strlist",
    "max_cost_usd": "float?",
    "per_chunk": "bool",
    "relevance_questions": "int",
    "independent": "bool",
    "entity_match": "match",
    "rubrics": "rubrics",
    "params": "mapping",
}
_ATTR = {"cache": "cache_path", "params": "extra_params"}


class _Where:
    """Turns a key path into ``FILE:LINE:`` using the YAML node marks, when known."""

    def __init__(self, path: str | None, lines: Mapping[tuple[str, ...], int] | None) -> None:
        self.path = path
        self.lines = lines or {}

    def error(self, keys: Sequence[str], message: str) -> InputError:
        line = None
        for n in range(len(keys), 0, -1):
            if tuple(keys[:n]) in self.lines:
                line = self.lines[tuple(keys[:n])]
                break
        location = ".".join(keys) if keys else None
        if self.path is None:
            return InputError(message, location=location)
        return InputError(message, path=self.path, line=line, location=location)


def _num(value: Any, *, integer: bool) -> float | int | None:
    if isinstance(value, bool):
        return None
    if integer:
        return value if isinstance(value, int) else None
    return float(value) if isinstance(value, (int, float)) else None


def _coerce(kind: str, value: Any, keys: list[str], where: _Where) -> Any:
    optional = kind.endswith("?")
    base = kind.rstrip("?")
    if value is None:
        if optional:
            return None
        raise where.error(keys, "is empty (expected a value)")
    if base == "str":
        if not isinstance(value, str):
            raise where.error(keys, f"{value!r} is not a string (expected text)")
        return value
    if base in ("int", "float"):
        num = _num(value, integer=base == "int")
        if num is None:
            raise where.error(
                keys,
                f"{value!r} is not a number "
                f"(expected {'an integer' if base == 'int' else 'a number'})",
            )
        return num
    if base == "bool":
        if not isinstance(value, bool):
            raise where.error(keys, f"{value!r} is not true or false")
        return value
    if base == "strlist":
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise where.error(keys, "expected a string or a list of strings")
        return tuple(value)
    if base == "structured":
        if value not in STRUCTURED_MODES:
            raise where.error(keys, f"{value!r} (expected one of {', '.join(STRUCTURED_MODES)})")
        return value
    if base == "match":
        if value not in ("normalized", "exact"):
            raise where.error(keys, f"{value!r} (expected normalized or exact)")
        return value
    if base == "mapping":
        if not isinstance(value, Mapping):
            raise where.error(keys, "expected a mapping of request parameters")
        return dict(value)
    if base == "rubrics":
        return _rubrics(value, keys, where)
    raise AssertionError(kind)


def _rubrics(value: Any, keys: list[str], where: _Where) -> tuple[RubricDef, ...]:
    if not isinstance(value, list):
        raise where.error(keys, "expected a list of rubrics")
    out: list[RubricDef] = []
    names: set[str] = set()
    allowed = {"name", "inputs", "scale", "steps", "criteria", "levels", "weighting"}
    for i, item in enumerate(value):
        k = [*keys, str(i)]
        if not isinstance(item, Mapping):
            raise where.error(k, "expected a mapping with name, inputs, scale and steps")
        unknown = sorted(set(item) - allowed)
        if unknown:
            raise where.error(
                [*k, unknown[0]], f"unknown key (expected one of {', '.join(sorted(allowed))})"
            )
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise where.error([*k, "name"], "missing rubric name (expected text)")
        if name in names:
            raise where.error([*k, "name"], f"rubric {name!r} is defined twice")
        names.add(name)
        inputs = item.get("inputs", ["question", "answer"])
        if (
            not isinstance(inputs, list)
            or not inputs
            or any(x not in RUBRIC_INPUTS for x in inputs)
        ):
            raise where.error(
                [*k, "inputs"], f"expected a non-empty list of {', '.join(RUBRIC_INPUTS)}"
            )
        scale = item.get("scale", [1, 5])
        if (
            not isinstance(scale, list)
            or len(scale) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in scale)
            or scale[0] >= scale[1]
        ):
            raise where.error([*k, "scale"], "expected [min, max] integers with min < max")
        steps = item.get("steps")
        criteria = item.get("criteria")
        if steps is None and criteria is None:
            raise where.error(k, "a rubric needs steps or criteria")
        if steps is not None and (
            not isinstance(steps, list)
            or not steps
            or not all(isinstance(s, str) and s.strip() for s in steps)
        ):
            raise where.error([*k, "steps"], "expected a non-empty list of step texts")
        if criteria is not None and (not isinstance(criteria, str) or not criteria.strip()):
            raise where.error([*k, "criteria"], "expected the criteria text")
        levels = item.get("levels", {})
        if not isinstance(levels, Mapping) or not all(
            isinstance(lv, int) and scale[0] <= lv <= scale[1] and isinstance(d, str)
            for lv, d in levels.items()
        ):
            raise where.error([*k, "levels"], "expected a mapping of scale levels to descriptions")
        weighting = item.get("weighting", "none")
        if weighting not in ("none", "logprobs"):
            raise where.error([*k, "weighting"], f"{weighting!r} (expected none or logprobs)")
        out.append(
            RubricDef(
                name=name,
                inputs=tuple(inputs),
                scale=(scale[0], scale[1]),
                steps=tuple(s.strip() for s in steps) if steps else (),
                criteria=criteria.strip() if criteria else None,
                levels=tuple(sorted(levels.items())),
                weighting=weighting,
            )
        )
    return tuple(out)


def config_from_mapping(
    block: Mapping[str, Any] | None,
    *,
    path: str | None = None,
    lines: Mapping[tuple[str, ...], int] | None = None,
    prefix: Sequence[str] = ("judge",),
) -> dict[str, Any]:
    """Validate a ``judge:`` block and return JudgeConfig keyword arguments.

    A literal ``api_key`` is rejected; unknown keys are input errors naming the key path.

    >>> config_from_mapping({"model": "m", "concurrency": 4})
    {'model': 'm', 'concurrency': 4}
    >>> config_from_mapping({"api_key": "sk-1"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragmeter.errors.InputError: judge.api_key: store the key in an environment variable (...)
    """
    where = _Where(path, lines)
    if block is None:
        return {}
    if not isinstance(block, Mapping):
        raise where.error(list(prefix), "expected a mapping of judge settings")
    out: dict[str, Any] = {}
    for key, value in block.items():
        keys = [*prefix, str(key)]
        if key == "api_key":
            raise where.error(
                keys, "store the key in an environment variable (name it with api_key_env)"
            )
        if key not in _KEYS:
            raise where.error(keys, f"unknown key (expected one of {', '.join(sorted(_KEYS))})")
        val = _coerce(_KEYS[key], value, keys, where)
        _check_range(str(key), val, keys, where)
        out[_ATTR.get(str(key), str(key))] = val
    return out


def _check_range(key: str, val: Any, keys: list[str], where: _Where) -> None:
    shown = f"{val:g}" if isinstance(val, float) else repr(val)
    if isinstance(val, float) and not math.isfinite(val):
        # NaN compares false with everything, so the range checks below would let it through
        what = "NaN" if math.isnan(val) else "infinite"
        raise where.error(keys, f"{shown} is {what} (expected a finite number)")
    positive = {
        "max_tokens",
        "max_tokens_cap",
        "max_input_tokens",
        "concurrency",
        "rpm",
        "tpm",
        "timeout_s",
        "deadline_s",
        "max_attempts",
        "max_reply_bytes",
        "repeats",
        "relevance_questions",
    }
    if key in positive and val is not None and val <= 0:
        raise where.error(keys, f"{shown} (expected a number greater than 0)")
    if key == "temperature" and val is not None and not 0 <= val <= 2:
        raise where.error(keys, f"{shown} (expected a temperature between 0 and 2)")
    if key == "max_cost_usd" and val is not None and val < 0:
        raise where.error(keys, f"{shown} (expected a non-negative amount)")


def yaml_key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Key path → 1-based line of every mapping key in a YAML document (for messages)."""
    import yaml

    from ragmeter.errors import RagmeterError
    from ragmeter.io import yamlsafe

    lines: dict[tuple[str, ...], int] = {}
    try:
        root = yamlsafe.compose(text, "<yaml>")
    except RagmeterError:  # the caller's load reports the problem with its file name
        return lines

    def walk(node: Any, keys: tuple[str, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                path = (*keys, str(k.value))
                lines[path] = k.start_mark.line + 1
                walk(v, path)
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                path = (*keys, str(i))
                lines[path] = v.start_mark.line + 1
                walk(v, path)

    if root is not None:
        walk(root, ())
    return lines


@dataclass
class LoadedConfig:
    """What a config file contributes: judge settings, and the runner's ``tasks.judge``."""

    settings: dict[str, Any]
    metrics: list[str] | None = None
    kind: str = "ragmeter"  # ragmeter | graphrag-eval
    graphrag: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


def load_config_file(path: str | os.PathLike[str]) -> LoadedConfig:
    """Read ``ragmeter.yaml`` (its ``judge:`` and ``tasks.judge`` blocks), a bare judge block, or
    a graphrag-eval v6 config (``llm.generation``, docs/judge.md)."""
    from ragmeter.io import yamlsafe

    name = os.fspath(path)
    from ragmeter.io.files import read_text

    text = read_text(name)  # a regular file, size-capped, UTF-8 checked
    data = yamlsafe.load(text, name)
    lines = yaml_key_lines(text)
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise InputError("expected a mapping at the top level", path=name, line=1)
    if "llm" in data and "judge" not in data:
        from ragmeter.judge.graphrag_config import graphrag_settings

        settings, warnings = graphrag_settings(data, path=name, lines=lines)
        return LoadedConfig(settings, kind="graphrag-eval", graphrag=dict(data), warnings=warnings)
    if "judge" in data:
        settings = config_from_mapping(data.get("judge"), path=name, lines=lines)
        metrics: list[str] | None = None
        tasks = data.get("tasks")
        if isinstance(tasks, Mapping) and isinstance(tasks.get("judge"), Mapping):
            tj = tasks["judge"]
            if "metrics" in tj:
                m = tj["metrics"]
                if not isinstance(m, list) or not all(isinstance(x, str) for x in m):
                    raise InputError(
                        "expected a list of metric names",
                        path=name,
                        line=lines.get(("tasks", "judge", "metrics")),
                        location="tasks.judge.metrics",
                    )
                metrics = list(m)
            if tj.get("max_cost_usd") is not None:
                settings.setdefault(
                    "max_cost_usd",
                    _coerce(
                        "float",
                        tj["max_cost_usd"],
                        ["tasks", "judge", "max_cost_usd"],
                        _Where(name, lines),
                    ),
                )
        return LoadedConfig(settings, metrics)
    return LoadedConfig(config_from_mapping(data, path=name, lines=lines, prefix=()))


def resolve_config(
    flags: Mapping[str, Any] | None = None,
    *,
    block: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> JudgeConfig:
    """Resolve settings in the order flags, environment, config block, defaults.

    ``block`` is a raw ``judge:`` mapping (validated here); ``settings`` is already validated
    (from :func:`load_config_file`). ``flags`` holds keyword names of :class:`JudgeConfig`;
    ``None`` values mean "not given".

    >>> env = {"RAGMETER_LLM_MODEL": "m1", "OPENAI_API_KEY": "sk-x"}
    >>> c = resolve_config({"concurrency": 2}, block={"model": "m0"}, environ=env)
    >>> c.model, c.concurrency, c.configured, c.effective_base_url
    ('m1', 2, True, 'https://api.openai.com/v1')
    >>> resolve_config(environ={"OPENAI_API_KEY": "sk-x"}).configured  # a key alone: no
    False
    """
    env = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    merged.update(config_from_mapping(block) if block is not None else {})
    merged.update(settings or {})
    if env.get("RAGMETER_LLM_BASE_URL"):
        merged["base_url"] = env["RAGMETER_LLM_BASE_URL"]
    if env.get("RAGMETER_LLM_MODEL"):
        merged["model"] = env["RAGMETER_LLM_MODEL"]
    if env.get("RAGMETER_JUDGE_CACHE"):
        merged["cache_path"] = env["RAGMETER_JUDGE_CACHE"]
    if env.get("RAGMETER_PRICES"):
        extra = tuple(p for p in env["RAGMETER_PRICES"].split(os.pathsep) if p)
        merged["prices"] = (*merged.get("prices", ()), *extra)
    for k, v in (flags or {}).items():
        if v is not None:
            merged[k] = v
    fields = {f.name for f in dataclasses.fields(JudgeConfig)}
    unknown = sorted(set(merged) - fields)
    if unknown:
        raise UsageError(f"unknown judge setting {unknown[0]!r}")
    key_env = merged.get("api_key_env") or "OPENAI_API_KEY"
    key = env.get(key_env) or None
    merged["api_key"] = key
    merged["key_in_env"] = key is not None
    if merged.get("max_tokens_cap") is None and merged.get("max_tokens", 0) > 8192:
        merged["max_tokens_cap"] = merged["max_tokens"]
    return JudgeConfig(**merged)
