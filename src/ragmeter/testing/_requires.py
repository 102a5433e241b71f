"""``@pytest.mark.ragmeter_requires(...)``: what a test needs, and why it is missing.

- ``llm``: a judge endpoint is configured (``RAGMETER_LLM_BASE_URL`` and ``RAGMETER_LLM_MODEL``,
  docs/judge.md) and its client is installed;
- ``semantic``, ``spacy``: the extra is importable;
- ``postgres``: the session's store (``--ragmeter-store``) is a PostgreSQL URL on a loopback
  address that accepts a connection, and psycopg is installed.
"""

from __future__ import annotations

import importlib.util
import socket
from urllib.parse import urlsplit

__all__ = ["KNOWN", "missing_requirement"]

KNOWN = ("llm", "semantic", "spacy", "postgres")
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _llm() -> str | None:
    from ragmeter.runner.judge_settings import resolve_judge

    reason = resolve_judge(None).reason
    return None if reason is None else f"needs an LLM judge: {reason}"


def _extra(module: str, extra: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"needs ragmeter[{extra}] ({module} is not installed)"
    return None


def _postgres(store: str | None) -> str | None:
    if not store or not store.startswith("postgresql"):
        return "needs a PostgreSQL store (pass --ragmeter-store postgresql+psycopg://...)"
    if importlib.util.find_spec("psycopg") is None:
        return "needs ragmeter[postgres] (psycopg is not installed)"
    parts = urlsplit(store)
    host, port = parts.hostname or "localhost", parts.port or 5432
    if host not in _LOOPBACK:
        return f"needs a PostgreSQL store on loopback (the store is on {host}; tests stay offline)"
    try:
        with socket.create_connection((host, port), timeout=2):
            pass
    except OSError as exc:
        return f"needs a PostgreSQL server on {host}:{port} ({exc.strerror or exc})"
    return None


def missing_requirement(name: str, store: str | None = None) -> str | None:
    """``None`` when ``name`` is available, else a one-line reason."""
    key = name.lower()
    if key == "llm":
        return _llm()
    if key == "semantic":
        return _extra("sentence_transformers", "semantic")
    if key == "spacy":
        return _extra("spacy", "spacy")
    if key == "postgres":
        return _postgres(store)
    return f"unknown requirement {name!r} (expected one of {', '.join(KNOWN)})"
