"""The one YAML loader of ragmeter: safe tags only, bounded aliases and depth, one-line errors.

PyYAML's ``safe_load`` refuses arbitrary Python objects but not hostile structure: an alias
"bomb" (the YAML form of the billion-laughs attack) of a few hundred bytes names billions of
nodes once its aliases are expanded, and every consumer that walks the data (line maps,
validation, JSON dumps) expands them; a recursive alias or a document nested thousands deep
overflows Python's stack. This loader composes the node graph once and refuses, with
``FILE:LINE: ...`` and before anything is expanded:

- aliases that would add more than :data:`MAX_ALIAS_NODES` nodes in total when expanded
  (ordinary anchors that share a block of settings stay well below it);
- an alias to a node that contains it (a recursive structure has no finite expansion);
- nesting deeper than :data:`MAX_DEPTH` levels;
- any tag that the safe constructors do not know (``!!python/name:...``, ``!custom``).

Every loader of user YAML (runner config, steps reference files, judge and price configs,
graphrag-eval data, hierarchy profiles) goes through :func:`compose` or :func:`load`.
"""

from __future__ import annotations

from typing import Any

import yaml

from ragmeter.errors import InputError

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "compose", "construct", "load"]

MAX_ALIAS_NODES = 10_000
"""Nodes that alias expansion may add to a document, in total."""

MAX_DEPTH = 100
"""Nesting levels of mappings and sequences (a config uses fewer than ten)."""


_MERGE = "tag:yaml.org,2002:merge"  # the `<<` key, resolved by the constructor itself


class _GuardedLoader(yaml.SafeLoader):
    """SafeLoader whose composer counts expanded nodes and depth as it builds the graph."""

    def __init__(self, text: str, name: str) -> None:
        super().__init__(text)
        self._name = name
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> nodes it stands for once expanded
        self._added = 0

    def _fail(self, message: str, mark: Any) -> InputError:
        return InputError(message, path=self._name, line=mark.line + 1 if mark else None)

    def fetch_flow_collection_start(self, token_class: Any) -> None:
        # the scanner reads flow brackets ahead of the composer, with work that grows with the
        # open bracket count: `[[[[...` is refused here, before that work adds up
        if self.flow_level >= MAX_DEPTH:
            raise self._fail(
                f"YAML nested deeper than {MAX_DEPTH} levels (expected a flatter document)",
                self.get_mark(),
            )
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:
                size = self._sizes.get(id(node))
                if size is None:  # the anchored node is still open: the alias is inside it
                    raise self._fail(
                        f"recursive YAML alias '*{event.anchor}' (expected an alias to a "
                        "complete node, not to a node that contains it)",
                        event.start_mark,
                    )
                self._added += size
                if self._added > MAX_ALIAS_NODES:
                    raise self._fail(
                        f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} nodes (expected "
                        "aliases that repeat a small block; write the data out instead)",
                        event.start_mark,
                    )
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._fail(
                f"YAML nested deeper than {MAX_DEPTH} levels (expected a flatter document)",
                self.peek_event().start_mark,
            )
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node.tag not in self.yaml_constructors and node.tag != _MERGE:
            raise self._fail(
                f"YAML tag '{node.tag}' is not allowed (expected plain YAML: mappings, lists, "
                "strings, numbers, booleans, null)",
                node.start_mark,
            )
        if isinstance(node, yaml.MappingNode):
            size = 1 + sum(self._sizes[id(k)] + self._sizes[id(v)] for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            size = 1 + sum(self._sizes[id(item)] for item in node.value)
        else:
            size = 1
        self._sizes[id(node)] = size
        return node


def _syntax_error(exc: yaml.YAMLError, text: str, name: str) -> InputError:
    if isinstance(exc, yaml.reader.ReaderError):
        return InputError(
            f"not valid YAML: character #x{exc.character:04x} is not allowed (expected YAML text)",
            path=name,
            line=text.count("\n", 0, exc.position) + 1,
        )
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    problem = " ".join(str(problem).split())
    return InputError(
        f"not valid YAML: {problem} (expected YAML)",
        path=name,
        line=mark.line + 1 if mark is not None else None,
    )


def compose(text: str, name: str) -> yaml.Node | None:
    """The node graph of one YAML document (``None`` when empty), checked as described above."""
    try:
        # the reader checks every character up front, so a NUL byte fails in the constructor
        loader = _GuardedLoader(text, name)
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, name) from None
    try:
        return loader.get_single_node()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, name) from None
    except RecursionError:  # a deep stack at the call site; MAX_DEPTH normally stops it first
        raise InputError(
            "YAML nested too deeply (expected a flatter document)", path=name
        ) from None
    finally:
        loader.dispose()


def construct(node: yaml.Node, name: str) -> Any:
    """Python data of a node from :func:`compose` (safe constructors only)."""
    loader = _GuardedLoader("", name)
    try:
        return loader.construct_document(node)
    except (yaml.YAMLError, ValueError, TypeError) as exc:
        # an explicit `!!int abc` or `!!binary` that does not decode
        mark = getattr(exc, "problem_mark", None) or node.start_mark
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(
            f"not valid YAML: {' '.join(str(problem).split())} (expected a value of its tag)",
            path=name,
            line=mark.line + 1,
        ) from None
    finally:
        loader.dispose()


def load(text: str, name: str) -> Any:
    """``yaml.safe_load`` with the checks of :func:`compose` (``None`` for an empty document)."""
    node = compose(text, name)
    return None if node is None else construct(node, name)
