"""Shared pieces of the annotation loaders and writers (BRAT, CoNLL, heritage JSON).

Every loader returns a :class:`~ragmeter.records.model.Corpus` and a :class:`LoadReport`
(validation findings, relocations, conversions); every writer returns a
:class:`ConversionReport` listing what the target format cannot hold. Conversions are never
silent (docs/extraction.md#formats).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.records.choices import OFFSET_UNITS, OffsetUnit, expected

__all__ = ["ConversionReport", "LoadReport", "OffsetConverter", "read_text_exact"]


@dataclass
class LoadReport:
    """What a loader read, found and changed."""

    path: str
    format: str
    n_documents: int = 0
    n_spans: int = 0
    validation: dict[str, Any] | None = None
    conversions: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "n_documents": self.n_documents,
            "n_spans": self.n_spans,
            "validation": self.validation,
            "conversions": self.conversions,
            "notes": self.notes,
            "warnings": self.warnings,
        }


@dataclass
class ConversionReport:
    """What a writer wrote and everything the target format could not hold."""

    path: str
    format: str
    n_documents: int = 0
    n_spans: int = 0
    lost: list[dict[str, Any]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def lossless(self) -> bool:
        return not self.lost

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "n_documents": self.n_documents,
            "n_spans": self.n_spans,
            "lossless": self.lossless,
            "lost": self.lost,
            "notes": self.notes,
        }


def read_text_exact(path: str | os.PathLike[str]) -> str:
    """A file's text as strict UTF-8, with no newline translation and no normalization
    (offsets count code points of exactly these characters,
    docs/extraction.md#data-model-and-validation)."""
    from ragmeter.io.files import open_binary

    name = os.fspath(path)
    with open_binary(name) as fh:  # `-` is stdin; devices refused; a missing file is one line
        data = fh.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x}; expected UTF-8 text)",
            path=name,
            line=line,
        ) from None


class OffsetConverter:
    """Converts offsets counted in ``unit`` into code points of ``text``
    (docs/extraction.md#data-model-and-validation).

    >>> c = OffsetConverter("🏛 Rijksmuseum", "utf16")
    >>> c(3)
    2
    >>> OffsetConverter("🏛 Rijksmuseum", "utf8")(5)
    2
    >>> OffsetConverter("🏛 Rijksmuseum", "utf8")(2)
    Traceback (most recent call last):
    ragmeter.errors.InputError: utf8 offset 2 falls inside a character (expected a character ...
    """

    def __init__(self, text: str, unit: OffsetUnit = "codepoint") -> None:
        if unit not in OFFSET_UNITS:
            raise ValueError(f"offset_unit={unit!r} (expected {expected(OFFSET_UNITS)})")
        self.unit = unit
        self._fn: Callable[[int], int]
        if unit == "codepoint" or text.isascii():
            n = len(text)

            def same(offset: int) -> int:
                if not 0 <= offset <= n and unit != "codepoint":
                    raise InputError(f"{unit} offset {offset} is outside the text (length {n})")
                return offset

            self._fn = same
            return
        if unit == "utf16":
            widths = [2 if ord(ch) > 0xFFFF else 1 for ch in text]
        else:
            widths = [len(ch.encode("utf-8")) for ch in text]
        bounds = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)

        def convert(offset: int) -> int:
            i = int(np.searchsorted(bounds, offset))
            if i >= len(bounds) or bounds[i] != offset:
                if offset > bounds[-1] or offset < 0:
                    raise InputError(
                        f"{unit} offset {offset} is outside the text (length {int(bounds[-1])})"
                    )
                raise InputError(
                    f"{unit} offset {offset} falls inside a character (expected a character "
                    "boundary)"
                )
            return i

        self._fn = convert

    def __call__(self, offset: int) -> int:
        return self._fn(offset)
