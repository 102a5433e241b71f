"""A graphrag-eval v6 config (``llm.generation``) read as judge settings (docs/judge.md).

Below both :mod:`ragmeter.judge.config`, which loads such a file, and
:mod:`ragmeter.judge.adapters`, which re-exports :func:`graphrag_settings`, so that the config
never imports the adapters.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter.errors import InputError

__all__ = ["graphrag_settings"]

# provider → default base URL (None: OpenAI's URL; "" : api_base required)
_PROVIDERS: dict[str, str | None] = {
    "openai": None,
    "hosted_vllm": "http://localhost:8000/v1",
    "vllm": "http://localhost:8000/v1",
    "ollama": "http://localhost:11434/v1",
    "ollama_chat": "http://localhost:11434/v1",
    "lm_studio": "http://localhost:1234/v1",
    "llamacpp": "",
    "openai_like": "",
    "custom_openai": "",
}
_MINILM = ("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2")


def _installed(name: str) -> bool:
    """True when ``name`` can be imported (without importing it); as
    :func:`ragmeter.judge.engine.module_available`, which sits above the config."""
    if sys.modules.get(name) is not None:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def graphrag_settings(
    data: Mapping[str, Any],
    *,
    path: str | None = None,
    lines: Mapping[tuple[str, ...], int] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Judge settings from a graphrag-eval v6 config (``llm.generation``), plus warnings.

    >>> s, w = graphrag_settings({"llm": {"generation": {"provider": "ollama", "model": "qwen3",
    ...     "temperature": 0.0, "max_tokens": 4096, "num_ctx": 8192}}})
    >>> s["base_url"], s["model"], s["max_tokens"], s["extra_params"], w
    ('http://localhost:11434/v1', 'qwen3', 4096, {'num_ctx': 8192}, [])
    """
    lines = lines or {}

    def err(keys: Sequence[str], message: str) -> InputError:
        line = None
        for n in range(len(keys), 0, -1):
            if tuple(keys[:n]) in lines:
                line = lines[tuple(keys[:n])]
                break
        loc = ".".join(keys)
        if path is None:
            return InputError(message, location=loc)
        return InputError(message, path=path, line=line, location=loc)

    llm = data.get("llm")
    if not isinstance(llm, Mapping):
        raise err(["llm"], "expected a mapping with a generation block")
    gen = llm.get("generation")
    if not isinstance(gen, Mapping):
        raise err(["llm", "generation"], "expected a mapping with provider and model")
    for key in ("provider", "model"):
        if not isinstance(gen.get(key), str) or not gen[key].strip():
            raise err(["llm", "generation", key], f"missing {key} (expected text)")
    provider = gen["provider"].strip()
    settings: dict[str, Any] = {
        "provider": provider,
        "model": gen["model"],
    }
    extra: dict[str, Any] = {}
    base_url = None
    for key, value in gen.items():
        keys = ["llm", "generation", str(key)]
        if key in ("provider", "model"):
            continue
        if key == "api_key":
            raise err(keys, "store the key in an environment variable (name it with api_key_env)")
        if key == "api_key_env":
            settings["api_key_env"] = str(value)
        elif key in ("api_base", "base_url"):
            if not isinstance(value, str) or not value.strip():
                raise err(keys, "expected a URL")
            base_url = value.strip()
        elif key == "temperature":
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= 2
            ):
                raise err(keys, f"{value!r} (expected a temperature between 0 and 2)")
            settings["temperature"] = float(value)
        elif key == "max_tokens":
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise err(keys, f"{value!r} (expected an integer ≥ 1)")
            settings["max_tokens"] = value
            settings["max_tokens_cap"] = max(8192, value)
        else:
            extra[str(key)] = value
    settings.setdefault("temperature", 0.0)
    if provider in _PROVIDERS:
        settings["provider"] = "openai" if provider == "openai" else provider
        default = _PROVIDERS[provider]
        if base_url is None and default == "":
            raise err(
                ["llm", "generation", "provider"],
                f"provider {provider!r} needs api_base (the llama.cpp server's usual one is "
                "http://localhost:8080/v1)",
            )
        settings["base_url"] = base_url or default
        if settings["base_url"] is None:
            del settings["base_url"]
    else:
        if not _installed("litellm"):
            raise err(
                ["llm", "generation", "provider"],
                f"provider {provider!r} is not OpenAI-compatible and needs "
                "pip install 'ragmeter[litellm]'",
            )
        if base_url:
            settings["base_url"] = base_url
    settings["extra_params"] = extra
    warnings: list[str] = []
    emb = llm.get("embedding")
    if isinstance(emb, Mapping) and emb.get("model"):
        model = str(emb["model"])
        if model.lower() not in _MINILM:
            warnings.append(
                f"llm.embedding model {model!r} is not used: ragmeter's answer relevance uses its "
                "offline all-MiniLM-L6-v2 embedder"
            )
        settings["embedding_model"] = model
    return settings, warnings
