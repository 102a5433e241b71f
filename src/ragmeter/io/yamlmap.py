"""YAML loading that remembers where every key is, for ``FILE:LINE: key.path: ...`` errors.

PyYAML's ``safe_load`` forgets line numbers and silently keeps the last of two equal keys. This
loader composes the node tree once, rejects duplicate keys, and returns the data together with a
map from key path (a tuple of keys and list indices) to the 1-based line it was written on.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import yaml

from ragmeter.errors import InputError
from ragmeter.io.files import display_name, read_text
from ragmeter.io.yamlsafe import compose, construct

__all__ = ["LineMap", "format_path", "load_yaml"]

Path = tuple[str | int, ...]


class LineMap:
    """Key path → line; a path that was not written takes the line of its closest parent."""

    def __init__(
        self, lines: dict[Path, int] | None = None, texts: dict[Path, str] | None = None
    ) -> None:
        self.lines = lines or {}
        # path -> source text of each non-string scalar as written (``3.10``, which YAML reads
        # as the number 3.1), so a message can quote what the user typed
        self.texts = texts or {}

    def text(self, path: Sequence[str | int]) -> str | None:
        """The source text of the scalar at ``path`` as written, if it was not a string."""
        return self.texts.get(tuple(path))

    def line(self, path: Sequence[str | int]) -> int | None:
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)


def format_path(path: Sequence[str | int]) -> str:
    """``('systems', 0, 'outputs', 'run')`` → ``systems[0].outputs.run``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _construct(
    node: yaml.Node, path: Path, lines: dict[Path, int], name: str, texts: dict[Path, str]
) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise InputError(
                    "YAML merge keys (<<) are not supported (expected plain keys)",
                    path=name,
                    line=key_node.start_mark.line + 1,
                )
            key = _construct(key_node, path, lines, name, texts)
            if isinstance(key, (dict, list)):
                raise InputError(
                    "a key that is not a scalar (expected a plain key)",
                    path=name,
                    line=key_node.start_mark.line + 1,
                )
            if key in out:
                raise InputError(
                    f"key '{key}' appears twice in the same block (first at line "
                    f"{lines[(*path, key)]})",
                    path=name,
                    line=key_node.start_mark.line + 1,
                )
            lines[(*path, key)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, (*path, key), lines, name, texts)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            items.append(_construct(item, (*path, i), lines, name, texts))
        return items
    value = construct(node, name)
    if not isinstance(value, str) and isinstance(node, yaml.ScalarNode):
        texts[path] = node.value
    return value


def load_yaml(path: str | os.PathLike[str]) -> tuple[Any, LineMap]:
    """Parse one YAML document safely; return ``(data, LineMap)``."""
    name = display_name(path)
    text = read_text(path)
    node = compose(text, name)  # aliases, depth and tags bounded before anything is expanded
    if node is None:
        raise InputError("empty file (expected a YAML mapping of config keys)", path=name)
    lines: dict[Path, int] = {(): node.start_mark.line + 1}
    texts: dict[Path, str] = {}
    data = _construct(node, (), lines, name, texts)
    return data, LineMap(lines, texts)
