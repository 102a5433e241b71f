"""Label profiles: closed label sets with a hierarchy (docs/extraction.md#type-classification).

This is the one place the heritage label set lives: the 19 custodian codes
``G L A M O R C U B E S F I X P H D N T``, their categories, the heritage NER labels and the
default NER-label → custodian-code table. The runner's gold validation imports it from here.
The module is import-light (standard library only) so that reading the label set costs nothing.

>>> HERITAGE.vocabulary[:4]
('G', 'L', 'A', 'M')
>>> HERITAGE.ancestors("M")
('CULTURAL',)
>>> HERITAGE.ancestors("museum")
()
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import InputError

__all__ = [
    "HERITAGE",
    "HERITAGE_CATEGORIES",
    "HERITAGE_NER_LABELS",
    "HERITAGE_NER_TO_TYPE",
    "HERITAGE_TYPE_CODES",
    "INVALID",
    "HierarchyProfile",
    "get_profile",
    "load_profile",
]

INVALID = "__INVALID__"
"""The sentinel an invalid predicted label is replaced by (docs/extraction.md#type-classification):
it equals no label and has no
ancestor in any hierarchy."""

HERITAGE_TYPE_CODES: tuple[str, ...] = tuple("GLAMORCUBESFIXPHDNT")
"""The 19 custodian type codes, in the heritage framework's order. They are opaque to ragmeter."""

HERITAGE_CATEGORIES: Mapping[str, tuple[str, ...]] = {
    "CULTURAL": ("G", "L", "A", "M"),
    "INSTITUTIONAL": ("O", "R", "E"),
    "COMMUNITY": ("S", "I", "N"),
    "SPECIALIZED": ("B", "H", "T", "F"),
    "DIGITAL": ("D",),
    "PRIVATE": ("C", "P"),
    "UNKNOWN": ("U", "X"),
}
"""Category → codes. ``UNKNOWN`` is a normal category for gold ``U``/``X``, not a fallback."""

HERITAGE_NER_LABELS: tuple[str, ...] = (
    "GRP.HER.MUS",
    "GRP.HER.ARC",
    "GRP.HER.LIB",
    "GRP.HER.SOC",
    "TOP",
    "TMP",
    "IDENTIFIER",
)
"""The heritage NER label vocabulary."""

HERITAGE_NER_TO_TYPE: Mapping[str, str] = {
    "GRP.HER.MUS": "M",
    "GRP.HER.ARC": "A",
    "GRP.HER.LIB": "L",
    "GRP.HER.SOC": "S",
}
"""Default NER label → custodian code table (docs/extraction.md#decisions); TOP, TMP and IDENTIFIER
have no code."""


@dataclass(frozen=True)
class HierarchyProfile:
    """A closed label set with a hierarchy above it (docs/extraction.md#type-classification).

    ``vocabulary`` is the ordered list of leaf labels; ``parent`` maps each leaf to its category
    and optionally each category to a super-category; the root is implicit. ``ner_vocabulary``
    and ``ner_to_type`` are the optional NER side of the profile
    (docs/extraction.md#type-classification). Construction validates
    the profile: every leaf has exactly one parent, there are no cycles, category names are not
    leaf labels, and the NER table maps NER labels to leaf labels.
    """

    name: str
    vocabulary: tuple[str, ...]
    parent: Mapping[str, str] = field(default_factory=dict)
    ner_vocabulary: tuple[str, ...] = ()
    ner_to_type: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        vocab = tuple(self.vocabulary)
        object.__setattr__(self, "vocabulary", vocab)
        object.__setattr__(self, "parent", dict(self.parent))
        object.__setattr__(self, "ner_vocabulary", tuple(self.ner_vocabulary))
        object.__setattr__(self, "ner_to_type", dict(self.ner_to_type))
        where = f"profile '{self.name}'"
        if not vocab:
            raise InputError("empty vocabulary (expected at least one label)", location=where)
        dup = _first_duplicate(vocab)
        if dup is not None:
            raise InputError(f"label '{dup}' listed twice in the vocabulary", location=where)
        if INVALID in vocab:
            raise InputError(
                f"'{INVALID}' is reserved (the invalid-label sentinel)", location=where
            )
        leaves = set(vocab)
        if self.parent:
            missing = [lb for lb in vocab if lb not in self.parent]
            if missing:
                raise InputError(
                    f"label '{missing[0]}' has no parent (expected every vocabulary label to "
                    "have exactly one category)",
                    location=where,
                )
            for child, par in self.parent.items():
                if par in leaves:
                    raise InputError(
                        f"category '{par}' of '{child}' is also a vocabulary label (expected "
                        "category names disjoint from labels)",
                        location=where,
                    )
            for label in self.parent:
                seen = [label]
                node = label
                while node in self.parent:
                    node = self.parent[node]
                    if node in seen:
                        raise InputError(
                            "cycle in the hierarchy: " + " → ".join([*seen, node]), location=where
                        )
                    seen.append(node)
        ner = set(self.ner_vocabulary)
        for key, value in self.ner_to_type.items():
            if ner and key not in ner:
                raise InputError(
                    f"ner_to_type key '{key}' is not in the NER vocabulary", location=where
                )
            if value not in leaves:
                raise InputError(
                    f"ner_to_type maps '{key}' to '{value}', which is not in the type vocabulary",
                    location=where,
                )

    def ancestors(self, label: str) -> tuple[str, ...]:
        """The categories above ``label``, nearest first, root excluded; none for unknown labels."""
        if label not in self.vocabulary:
            return ()
        out = []
        node = label
        while node in self.parent:
            node = self.parent[node]
            out.append(node)
        return tuple(out)

    def category(self, label: str, level: int = 1) -> str | None:
        """The ancestor of ``label`` at ``level`` (1 = parent), or its top ancestor if the
        hierarchy is shallower there; ``None`` for an invalid label or a flat profile."""
        anc = self.ancestors(label)
        if not anc:
            return None
        return anc[min(level, len(anc)) - 1]

    def type_of(self, ner_label: str) -> str | None:
        """The custodian code of an NER label under ``ner_to_type``
        (docs/extraction.md#type-classification), or ``None``."""
        return self.ner_to_type.get(ner_label)

    @property
    def categories(self) -> dict[str, list[str]]:
        """Category → its leaf labels (level 1), in vocabulary order."""
        out: dict[str, list[str]] = {}
        for label in self.vocabulary:
            cat = self.category(label)
            if cat is not None:
                out.setdefault(cat, []).append(label)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "vocabulary": list(self.vocabulary),
            "parent": dict(self.parent),
            "ner_vocabulary": list(self.ner_vocabulary),
            "ner_to_type": dict(self.ner_to_type),
        }

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical JSON form (recorded in results' ``settings``)."""
        text = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _first_duplicate(items: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


HERITAGE = HierarchyProfile(
    name="heritage",
    vocabulary=HERITAGE_TYPE_CODES,
    parent={code: cat for cat, codes in HERITAGE_CATEGORIES.items() for code in codes},
    ner_vocabulary=HERITAGE_NER_LABELS,
    ner_to_type=HERITAGE_NER_TO_TYPE,
)
"""The built-in heritage profile (GLAMORCUBESFIXPHDNT with its seven categories)."""

_BUILTIN = {"heritage": HERITAGE}


def get_profile(profile: str | HierarchyProfile | None) -> HierarchyProfile | None:
    """Resolve a profile argument: a built-in name, a YAML/JSON file path, a profile or ``None``."""
    if profile is None or isinstance(profile, HierarchyProfile):
        return profile
    if profile in _BUILTIN:
        return _BUILTIN[profile]
    if os.path.exists(profile):
        return load_profile(profile)
    raise InputError(
        f"unknown profile '{profile}' (expected one of {', '.join(_BUILTIN)} or a YAML/JSON file)"
    )


def load_profile(path: str | os.PathLike[str]) -> HierarchyProfile:
    """Load ``{"name", "vocabulary": [...], "parent": {...}}`` (plus optional ``ner_vocabulary``
    and ``ner_to_type``) from a YAML or JSON file, validated as :class:`HierarchyProfile` does."""
    name = os.fspath(path)
    from ragmeter.io.files import read_text

    text = read_text(name)  # a regular file, size-capped, UTF-8 checked
    if name.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"not valid JSON ({exc})", path=name) from None
    else:
        from ragmeter.io import yamlsafe

        data = yamlsafe.load(text, name)
    if not isinstance(data, dict):
        raise InputError("expected a mapping with 'vocabulary' and 'parent'", path=name)
    unknown = set(data) - {"name", "vocabulary", "parent", "ner_vocabulary", "ner_to_type"}
    if unknown:
        raise InputError(
            f"unknown key '{sorted(unknown)[0]}' (expected name, vocabulary, parent, "
            "ner_vocabulary, ner_to_type)",
            path=name,
        )
    vocab = data.get("vocabulary")
    if not isinstance(vocab, list) or not all(isinstance(v, str) for v in vocab):
        raise InputError("'vocabulary' must be a list of strings", path=name)
    parent = data.get("parent") or {}
    if not isinstance(parent, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in parent.items()
    ):
        raise InputError("'parent' must map labels to category names (strings)", path=name)
    try:
        return HierarchyProfile(
            name=str(data.get("name") or os.path.splitext(os.path.basename(name))[0]),
            vocabulary=tuple(vocab),
            parent=parent,
            ner_vocabulary=tuple(data.get("ner_vocabulary") or ()),
            ner_to_type=dict(data.get("ner_to_type") or {}),
        )
    except InputError as exc:
        raise InputError(exc.message, path=name, location=exc.location) from None
