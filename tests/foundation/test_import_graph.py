"""The package import graph, and the module graph inside each package, have no circles outside
shrinking allow-lists.

The graph is read from the source with :mod:`ast`, so it sees every import: module level,
inside functions (lazy imports) and under ``TYPE_CHECKING``. A package is the first component
below ``ragmeter`` (``ragmeter.io.brat`` belongs to ``io``; ``ragmeter.errors`` is its own).
Run this file as a script to print every package circle with one import that closes it, then
every module circle inside a package.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ragmeter"

# Package circles still to cut, each the packages of one strongly connected component. None is
# left: a circle found in the code must lie inside one entry, so any new circle fails.
ALLOWED_CYCLES: list[frozenset[str]] = []


# Module circles inside one package still to cut, as the modules of each. None is left.
ALLOWED_MODULE_CYCLES: list[frozenset[str]] = []
NO_MODULE_CYCLES = ("judge", "runner", "datasets")


def module_name(path: Path) -> str:
    """Dotted name of a source file under ``src/ragmeter``."""
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, known: set[str] | None = None) -> set[str]:
    """Every ``ragmeter`` module a file imports, wherever the import statement is.

    With ``known`` (every module name), ``from pkg import sub`` of submodules only counts as an
    import of those submodules, not of ``pkg/__init__`` too (which Python runs for every
    ``pkg.x`` import anyway); the module graph needs that, the package graph does not care.
    """
    name = module_name(path)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                # a relative import counts from the package, which a module is not
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from ragmeter import status`` imports the module ragmeter.status
            subs = {f"{target}.{alias.name}" for alias in node.names}
            found.update(subs)
            if known is None or not subs <= known:
                found.add(target)
    return {m for m in found if m == "ragmeter" or m.startswith("ragmeter.")}


def package_of(module: str) -> str | None:
    """The package a module belongs to, or None for ``ragmeter`` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def package_graph() -> dict[str, dict[str, str]]:
    """package -> {imported package: one importing module, as evidence}."""
    known = {module_name(p) for p in SRC.rglob("*.py")}
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(SRC.rglob("*.py")):
        source = module_name(path)
        src_pkg = package_of(source)
        if src_pkg is None:
            continue
        for target in imported_modules(path):
            if target not in known:  # ``from ragmeter.x import name`` adds x.name, not a module
                continue
            dst_pkg = package_of(target)
            if dst_pkg and dst_pkg != src_pkg:
                graph[src_pkg].setdefault(dst_pkg, f"{source} -> {target}")
    return graph


def module_graph(package: str) -> dict[str, dict[str, str]]:
    """module -> {imported module of the same package: the import, as evidence}."""
    known = {module_name(p) for p in SRC.rglob("*.py")}
    top = f"ragmeter.{package}"
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted((SRC / package).rglob("*.py")):
        source = module_name(path)
        for target in imported_modules(path, known):
            if target in known and target != source and (target + ".").startswith(top + "."):
                graph[source].setdefault(target, f"{source} -> {target}")
    return graph


def packages() -> list[str]:
    """Every package below ``ragmeter`` (directories with an ``__init__.py``)."""
    return sorted(p.parent.name for p in SRC.glob("*/__init__.py"))


def package_cycles(graph: dict[str, dict[str, str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm); the nodes are
    packages or, for :func:`module_graph`, modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(frozenset(component))

    # deep graphs recurse deeply; the limit is put back after, since other tests in this
    # process rely on the default (a stack overflow they expect at about 1,000 frames)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(set(graph) | {w for edges in graph.values() for w in edges}):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return result


def test_graph_sees_lazy_imports() -> None:
    # extraction reads JSON through io only inside functions; the graph must still see it
    graph = package_graph()
    assert "io" in graph["extraction"]
    assert "records" in graph["io"] and "records" in graph["extraction"]


def test_no_io_extraction_cycle() -> None:
    graph = package_graph()
    assert "extraction" not in graph["io"], graph["io"].get("extraction")
    assert "io" not in graph["records"] and "extraction" not in graph["records"]
    assert not any({"io", "extraction"} <= c for c in package_cycles(graph))


def test_package_cycles_only_from_allow_list() -> None:
    new = [c for c in package_cycles(package_graph()) if not any(c <= a for a in ALLOWED_CYCLES)]
    assert new == [], "new package circle (run this file as a script to see the imports)"


def test_no_runner_systems_or_plugin_testing_cycle() -> None:
    # the runner hands systems its task outputs; the plugin's state lives in testing._state
    graph = package_graph()
    assert "runner" not in graph["systems"], graph["systems"].get("runner")
    assert "pytest_plugin" not in graph["testing"], graph["testing"].get("pytest_plugin")
    assert "systems" in graph["runner"] and "testing" in graph["pytest_plugin"]


def test_io_is_below_judge_and_stats() -> None:
    # the judged sample and the split manifest format live in records, below io
    graph = package_graph()
    assert "judge" not in graph["io"] and "stats" not in graph["io"], graph["io"]
    assert "result" not in graph["views"], graph["views"].get("result")
    assert {"judge", "stats"} <= set(graph) and "records" in graph["judge"]
    assert "io" not in graph["records"]


def test_yaml_line_maps_are_read_below_the_runner() -> None:
    # baselines and mcp read YAML through io.yamlmap; the runner keeps a deprecated alias only
    graph = package_graph()
    assert "runner" not in graph["baselines"], graph["baselines"].get("runner")
    assert "ragmeter.runner.yamlmap" not in {
        target
        for path in SRC.rglob("*.py")
        if path.parent.name != "runner"
        for target in imported_modules(path)
    }


def test_no_module_cycles_inside_a_package() -> None:
    found = {p: package_cycles(module_graph(p)) for p in packages()}
    assert all(found[p] == [] for p in NO_MODULE_CYCLES), {p: found[p] for p in NO_MODULE_CYCLES}
    new = [
        c
        for cycles in found.values()
        for c in cycles
        if not any(c <= a for a in ALLOWED_MODULE_CYCLES)
    ]
    assert new == [], "new module circle (run this file as a script to see the imports)"


def test_module_graph_sees_the_cut_edges() -> None:
    # the edges that closed the circles run one way now; the graph still sees the other way
    judge, runner, datasets = (
        module_graph("judge"),
        module_graph("runner"),
        module_graph("datasets"),
    )
    assert "ragmeter.judge.adapters" not in judge["ragmeter.judge.config"]
    assert "ragmeter.judge.config" in judge["ragmeter.judge.adapters"]
    assert "ragmeter.judge.engine" not in judge["ragmeter.judge.result"]
    assert "ragmeter.judge.result" in judge["ragmeter.judge.engine"]
    assert "ragmeter.judge.replies" not in judge["ragmeter.judge.client"]
    assert "ragmeter.runner.pipeline" not in runner["ragmeter.runner.evaluation"]
    assert "ragmeter.runner.pipeline" not in runner["ragmeter.runner.live_tasks"]
    assert "ragmeter.runner.evaluation" in runner["ragmeter.runner.pipeline"]
    assert "ragmeter.datasets.gold" not in datasets["ragmeter.datasets.formats"]
    assert "ragmeter.datasets.formats" in datasets["ragmeter.datasets.gold"]


def test_run_pipeline_names_its_return_type() -> None:
    import inspect

    from ragmeter.runner.pipeline import evaluate, run_pipeline

    for fn in (run_pipeline, evaluate):
        assert inspect.signature(fn).return_annotation == "EvaluationResult"


def test_tarjan_finds_a_three_package_circle() -> None:
    graph = {"a": {"b": ""}, "b": {"c": ""}, "c": {"a": ""}, "d": {"a": ""}}
    assert package_cycles(graph) == [frozenset("abc")]


def _print_cycles(graph: dict[str, dict[str, str]]) -> None:
    for cycle in package_cycles(graph):
        print(" <-> ".join(sorted(cycle)))
        for a in sorted(cycle):
            for b, why in sorted(graph[a].items()):
                if b in cycle:
                    print(f"    {why}")


if __name__ == "__main__":
    _print_cycles(package_graph())
    for package in packages():
        _print_cycles(module_graph(package))
