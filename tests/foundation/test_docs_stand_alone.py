"""The project's documentation stands alone.

Users and maintainers read docs/, the README, the benchmarks, the examples, the docstrings and the
tests; none of them may send the reader to a design document that is not in this repository. The
decisions such documents made are written in docs/ instead (each engine page's "Decisions"
section, docs/conventions.md and docs/architecture.md). docs/architecture.md names every package
and says where a new metric, reader and command go.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import REPO

# The private design documents were cited as a path into the specs folder, as the name of the
# design overview, or as a section of "the spec". The section sign is written as an escape so that
# this file does not match its own pattern.
OUTSIDE_CITATION = re.compile(r"\bspecs/[a-z_]+\.md|\bDESIGN\.md|\bspec \u00a7")

SCANNED = ("README.md", "docs", "src", "tests", "benchmarks", "examples")
TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".yaml", ".yml", ".toml", ".html", ".js", ".css"}

# Files allowed to cite a design document outside the repository: none. (The list stays so that a
# future exception is explicit; an entry ending in "/" covers a folder.)
ALLOWED: tuple[str, ...] = ()

# The docs pages have no numbered sections, so "stats.md \u00a79" is a section of a design document
# that shares the page's name. Only the copied conformance fixtures still carry such numbers: their
# tables name the sections their vectors test (provenance, kept as delivered).
NUMBERED_SECTION = re.compile(r"\b[a-z_]+\.md`{0,2} ?\u00a7 ?\d")
ALLOWED_NUMBERED = (
    *ALLOWED,
    "tests/data/conformance/",
)

PACKAGES = sorted(
    p.name
    for p in (REPO / "src" / "ragmeter").iterdir()
    if p.is_dir() and (p / "__init__.py").is_file()
)
ARCHITECTURE = REPO / "docs" / "architecture.md"


def _allowed(rel: str, allowed: tuple[str, ...] = ALLOWED) -> bool:
    return any(rel.startswith(a) if a.endswith("/") else rel == a for a in allowed)


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for top in SCANNED:
        root = REPO / top
        candidates = [root] if root.is_file() else root.rglob("*") if root.is_dir() else []
        for path in candidates:
            parts = set(path.relative_to(REPO).parts)
            if parts & {"__pycache__", ".venv", "node_modules"}:
                continue
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                files.append(path)
    return files


def outside_citations(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every citation of a document outside the repository."""
    return [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if OUTSIDE_CITATION.search(line)
    ]


def test_the_pattern_finds_each_form_of_outside_citation_and_nothing_else():
    text = "\n".join(
        [
            "see specs" + "/retrieval.md for the rules",  # split: this file is scanned too
            "the registry (DESIGN" + ".md, principle 5)",
            "scored 0.0 (spec \u00a73.7.6)",
            "see docs/retrieval.md, Decisions",
            "parse_measures(spec) returns Measure objects",
            "as ir_measures specs say",
        ]
    )
    assert [n for n, _ in outside_citations(text)] == [1, 2, 3]


def test_no_file_cites_a_document_outside_the_repository():
    files = _scanned_files()
    # the scan really covers the trees it names (a wrong root would make this test vacuous)
    rels = {f.relative_to(REPO).as_posix() for f in files}
    assert {"README.md", "docs/architecture.md", "src/ragmeter/result.py"} <= rels
    assert any(r.startswith("tests/data/conformance/") for r in rels)
    found = []
    for path in files:
        rel = path.relative_to(REPO).as_posix()
        if _allowed(rel):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{rel}:{n}: {line[:120]}" for n, line in outside_citations(text)]
    assert found == [], "cite docs/ or the literature instead:\n" + "\n".join(found)


def test_no_docs_page_is_cited_by_a_section_number():
    assert NUMBERED_SECTION.search("the rule of ``stats.md`` \u00a74")
    assert NUMBERED_SECTION.search("(steps.md \u00a716.4)")
    assert not NUMBERED_SECTION.search("see docs/stats.md, Decisions")
    found = []
    for path in _scanned_files():
        rel = path.relative_to(REPO).as_posix()
        if _allowed(rel, ALLOWED_NUMBERED):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [
            f"{rel}:{n}: {line.strip()[:120]}"
            for n, line in enumerate(text.splitlines(), 1)
            if NUMBERED_SECTION.search(line)
        ]
    assert found == [], "name the docs page (and its heading) instead:\n" + "\n".join(found)


def test_the_allow_list_names_only_places_that_exist_or_are_being_added():
    for entry in ALLOWED_NUMBERED:
        assert (REPO / entry.rstrip("/")).exists(), entry


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchor_follows_githubs_rule():
    assert _anchor("Semantics (trec_eval 10.0)") == "semantics-trec_eval-100"
    assert _anchor("Dataset splits (`ragmeter.stats.datasets`)") == (
        "dataset-splits-ragmeterstatsdatasets"
    )


def test_every_docs_anchor_cited_in_the_source_exists():
    # the citations that replaced section numbers point at headings; a renamed heading must not
    # leave them dangling
    pages: dict[str, set[str]] = {}
    cited = 0
    for path in (REPO / "src").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for page, anchor in re.findall(r"\bdocs/([\w-]+\.md)#([\w-]+)", text):
            if page not in pages:
                doc = (REPO / "docs" / page).read_text(encoding="utf-8")
                pages[page] = {_anchor(h) for h in re.findall(r"^#+ (.+)$", doc, flags=re.M)}
            assert anchor in pages[page], f"{path.relative_to(REPO)}: docs/{page}#{anchor}"
            cited += 1
    assert cited >= 30 and "retrieval.md" in pages


def test_architecture_page_is_linked_and_names_every_package():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert "(architecture.md)" in (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    assert "(docs/architecture.md)" in (REPO / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    for heading in ("Layers", "Packages", "Where a new metric goes", "Where a new reader goes"):
        assert heading in headings
    assert "Where a new command goes" in headings
    # the layer diagram is a text diagram with arrows
    diagram = text.split("## Layers", 1)[1].split("```")[1]
    assert "▼" in diagram and "io/" in diagram and "store/" in diagram
    missing = [p for p in PACKAGES if f"`{p}/`" not in text]
    assert missing == [], f"docs/architecture.md says nothing about {missing}"


def test_architecture_page_links_and_paths_exist():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 10
    for link in links:
        assert (ARCHITECTURE.parent / link).exists(), link
    paths = set(re.findall(r"`((?:src|tests)/[\w/.<>-]+\.py)`", text))
    concrete = [p for p in paths if "<" not in p]
    assert len(concrete) >= 5
    for p in concrete:
        assert (REPO / p).is_file(), p
