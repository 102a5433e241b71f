"""What every extraction report shares: ``get`` by key path, ``to_dict`` and ``to_json``.

A report keeps the shape of the tool it reproduces (nervaluate, seqeval, scikit-learn, GERBIL),
so its ``to_dict`` is ``_body()`` (the metrics, plus the per-document or per-mention detail)
followed by the fields named in ``_trailer`` (why a value is undefined, conversion reports, the
settings). The base class declares no dataclass fields, so subclasses stay plain dataclasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragmeter.views import ReportViews

__all__ = ["ExtractionReport"]


class ExtractionReport(ReportViews):
    """Base of the NER, classification, linking and agreement reports."""

    #: the report's name in a ``KeyError`` ("NER" -> "no value at 'x' in the NER report")
    _kind: ClassVar[str] = "extraction"
    #: spellings ``get`` accepts for a key at any level (``ent_type`` for ``type``)
    _aliases: ClassVar[Mapping[str, str]] = {}
    #: whether ``get`` may read the rest of a path as one key, for keys that hold a dot
    _dotted_keys: ClassVar[bool] = False
    #: attributes appended to ``to_dict`` after the body, in this order
    _trailer: ClassVar[tuple[str, ...]] = ("undefined", "reports", "settings")

    def _body(self) -> dict[str, Any]:
        """The leading part of :meth:`to_dict`: the metrics themselves by default."""
        return dict(self.metrics)  # type: ignore[attr-defined]

    def get(self, path: str) -> Any:
        """The value at a report key path such as ``"macro.f1"``."""
        node: Any = self.metrics  # type: ignore[attr-defined]
        parts = path.split(".")
        for i, part in enumerate(parts):
            part = self._aliases.get(part, part)
            if isinstance(node, Mapping) and part in node:
                node = node[part]
                continue
            rest = ".".join(parts[i:])
            if self._dotted_keys and isinstance(node, Mapping) and rest in node:
                return node[rest]
            raise KeyError(f"no value at '{path}' in the {self._kind} report")
        return node

    def to_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready data."""
        out = self._body()
        for name in self._trailer:
            out[name] = getattr(self, name)
        return out

    def to_json(self, *, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON (numpy scalars and non-finite floats handled)."""
        from ragmeter.io.jsonutil import dumps

        return dumps(self.to_dict(), indent=indent)
