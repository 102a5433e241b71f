"""Finding a live system: the import path of ``call:``, ``init:``, and the methods it has.

The import path is code the user chose and it runs in-process, like a pytest plugin. Nothing is
imported from a path the config did not name; the config's folder is put first on ``sys.path``
so that a pipeline module next to ``ragmeter.yaml`` imports without installing it.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError
from ragmeter.systems.protocol import METHOD_TASKS, METHODS

__all__ = ["LiveSystem", "load_live_system", "resolve_object"]


@dataclass
class LiveSystem:
    """A system ragmeter calls: its object, its methods and how it was found."""

    name: str
    obj: Any
    version: str | None
    methods: dict[str, Callable[..., Any]] = field(default_factory=dict)
    is_async: dict[str, bool] = field(default_factory=dict)
    call: str | None = None  # the import path, or None for a Python object handed in
    init_keys: list[str] = field(default_factory=list)
    concurrency: int = 4
    timeout_s: float = 60.0
    max_errors: int | None = None
    deterministic: bool = True
    index: int | None = None  # systems[index] in the config

    @property
    def tasks(self) -> list[str]:
        """The runner tasks this system's methods enable."""
        return [t for m in self.methods for t in METHOD_TASKS[m]]

    def describe(self) -> dict[str, Any]:
        """What the stored run records about the call (init keys, never their values)."""
        return {
            "call": self.call if self.call is not None else f"python object {_type_name(self.obj)}",
            "init_keys": list(self.init_keys),
            "version": self.version,
            "methods": {m: ("async" if self.is_async[m] else "sync") for m in self.methods},
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "deterministic": self.deterministic,
        }


def _type_name(obj: Any) -> str:
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _import(path: str, base_dir: str | None, error: Callable[[str, str], InputError]) -> Any:
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr or " " in path:
        raise error("call", f"{path!r} is not an import path (expected package.module:attr)")
    if base_dir is not None and base_dir not in sys.path:
        sys.path.insert(0, base_dir)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise error("call", f"cannot import {module_name!r} ({exc})") from None
    except Exception as exc:  # the user's module raised while importing: report, never crash
        raise error("call", f"cannot import {module_name!r} ({_first_line(exc)})") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise error(
                "call", f"module {module_name!r} has no attribute {attr!r} (expected {path})"
            )
        obj = getattr(obj, part)
    return obj


def _has_methods(obj: Any) -> bool:
    return any(callable(getattr(obj, m, None)) for m in METHODS)


def resolve_object(
    obj: Any, init: Mapping[str, Any] | None, label: str, error: Callable[[str, str], InputError]
) -> Any:
    """An instance from a class, a factory function or an instance (``init`` as keywords)."""
    if isinstance(obj, type) or (callable(obj) and not _has_methods(obj)):
        try:
            return obj(**dict(init or {}))
        except Exception as exc:
            raise error(
                "init" if init else "call", f"{label}(...) raised {_first_line(exc)}"
            ) from None
    if init:
        raise error("init", f"{label} is an instance (expected a class or a factory for init)")
    return obj


def load_live_system(
    name: str,
    *,
    call: str | None = None,
    obj: Any = None,
    init: Mapping[str, Any] | None = None,
    version: str | None = None,
    base_dir: str | None = None,
    error: Callable[[str, str], InputError],
    options: Mapping[str, Any] | None = None,
) -> LiveSystem:
    """Import (or take) a system and list its protocol methods.

    ``error(key, message)`` builds the one-line error for ``systems[i].<key>``.
    """
    if obj is None:
        assert call is not None
        target = _import(call, base_dir, error)
        label = call
    else:
        target, label = obj, _type_name(obj)
    instance = resolve_object(target, init, label, error)
    live = LiveSystem(
        name, instance, version, call=call, init_keys=sorted(init or {}), **dict(options or {})
    )
    for method in METHODS:
        fn = getattr(instance, method, None)
        if callable(fn):
            live.methods[method] = fn
            live.is_async[method] = inspect.iscoroutinefunction(fn) or (
                inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004
            )
    if not live.methods:
        raise error(
            "call",
            f"{label} has none of the methods {', '.join(METHODS)} "
            "(expected at least one; see ragmeter.systems.Retriever and the other protocols)",
        )
    return live
