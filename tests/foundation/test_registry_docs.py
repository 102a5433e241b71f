"""Every metric says what it computes and where the definition comes from, everywhere it is listed.

The registry is the one source: ``ragmeter metrics --json`` (and MCP ``list_metrics``), the
``--long`` and ``TASK.METRIC`` views of ``ragmeter metrics``, the generated docs/metrics.md and the
report tooltips all read ``MetricDef.formula`` and ``MetricDef.citation``. Counts have a value
and a formula too; the only entries exempt are those whose value is text,
``registry.NO_NUMERIC_VALUE`` (trec_eval's run tag and relevance string).
"""

from __future__ import annotations

import json
import re

import pytest

from ragmeter import registry
from ragmeter.runner import metrics_page
from tests.helpers import REPO, invoke

# A citation names literature, a standard or a versioned package: never a project document.
NOT_A_CITATION = re.compile(r"specs/|DESIGN|internal|\bthe spec\b|docs/|\.md\b", re.IGNORECASE)


def _defs(task: str) -> list[registry.MetricDef]:
    try:
        return list(registry.get_task(task).metrics)
    except registry.UnknownMetricError:  # an engine left out of this build has nothing to list
        return []


@pytest.mark.parametrize("task", list(registry.TASK_PROVIDERS))
def test_every_metric_has_a_formula_and_a_citation(task):
    missing = [
        f"{m.full_name}: {', '.join(k for k in ('formula', 'citation') if not getattr(m, k))}"
        for m in _defs(task)
        if m.full_name not in registry.NO_NUMERIC_VALUE
        and not (m.formula.strip() and m.citation.strip())
    ]
    assert not missing, f"{len(missing)} {task} metrics lack a field: " + "; ".join(missing)


@pytest.mark.parametrize("task", list(registry.TASK_PROVIDERS))
def test_citations_name_literature_not_project_documents(task):
    bad = [f"{m.full_name}: {m.citation}" for m in _defs(task) if NOT_A_CITATION.search(m.citation)]
    assert not bad, "; ".join(bad)


def test_only_text_valued_entries_are_exempt():
    # the exempt list cannot hide a number: its entries have no direction and no range
    for name in registry.NO_NUMERIC_VALUE:
        try:
            d = registry.resolve(name).definition
        except registry.UnknownMetricError:
            continue  # engine not in this build
        assert (d.direction, d.range) == ("none", (None, None)), name


def test_records_carry_formula_and_citation():
    records = {r["full_name"]: r for r in registry.metric_records()}
    assert set(records) == {m.full_name for t in registry.all_tasks() for m in t.metrics}
    em = records["answers.em"]
    assert em["formula"] == "max_g [n(p) = n(g)]"
    assert em["citation"].startswith("Rajpurkar et al. 2016, SQuAD")
    kappa = records["agreement.cohen_kappa"]
    assert kappa["citation"].startswith("Cohen 1960")
    # the fields around them keep their names and order
    assert list(em) == [
        "task",
        "name",
        "full_name",
        "aliases",
        "summary",
        "reference",
        "formula",
        "citation",
        "direction",
        "range",
        "params",
        "needs",
        "extra",
        "level",
    ]


def test_metrics_json_prints_formula_and_citation():
    res = invoke("metrics", "judge", "--json")
    assert res.code == 0
    faith = next(r for r in json.loads(res.stdout) if r["name"] == "faithfulness")
    assert faith["formula"] == "#supported / #statements"
    assert faith["citation"].startswith("Es et al. 2024, RAGAS")


def test_one_metric_in_detail_resolves_aliases_and_parameters():
    res = invoke("metrics", "ner.ner_f1_strict")
    assert res.code == 0
    lines = res.stdout.splitlines()
    assert lines[0] == "ner.overall.strict.f1  (asked as ner.ner_f1_strict)"
    d = registry.resolve("ner.overall.strict.f1").definition
    assert f"  formula    {d.formula}" in lines
    assert f"  citation   {d.citation}" in lines
    res = invoke("metrics", "linking.hits@10")
    assert res.stdout.splitlines()[0] == (
        "linking.ranking.hits@10  (linking.ranking.hits@k with k=10; asked as linking.hits@10)"
    )
    res = invoke("metrics", "linking.hits@10", "--json")
    assert [r["full_name"] for r in json.loads(res.stdout)] == ["linking.ranking.hits@k"]


def test_long_view_prints_every_metric_of_the_task_as_a_block():
    res = invoke("metrics", "grounded", "--long")
    assert res.code == 0
    blocks = res.stdout.strip().split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [m.full_name for m in _defs("grounded")]
    assert "  formula    |S ∩ U| / |U| (0.0 if U is empty)" in blocks[2].splitlines()


def test_unknown_metric_in_detail_is_a_usage_error():
    res = invoke("metrics", "answers.bleu")
    assert res.code == 2
    assert res.stderr.strip().endswith("unknown answers metric 'bleu'")


def test_metrics_page_is_up_to_date():
    committed = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert committed == metrics_page.render(), (
        "docs/metrics.md is stale: run `python -m ragmeter.runner.metrics_page > docs/metrics.md`"
    )


def test_metrics_page_lists_every_metric_with_its_formula_and_citation():
    page = metrics_page.render()
    for tdef in registry.all_tasks():
        assert f"\n## {tdef.name}\n" in page
        section = page.split(f"\n## {tdef.name}\n", 1)[1].split("\n## ", 1)[0]
        for m in tdef.metrics:
            row = next(r for r in section.splitlines() if r.startswith(f"| `{m.name}` |"))
            if m.formula:
                assert f"`{m.formula.replace('|', chr(92) + '|')}`" in row
            if m.citation:
                number = int(row.split(" | ")[2].strip("[]"))
                assert f"\n{number}. {m.citation.replace('|', chr(92) + '|')}" in section
    assert "[metrics.md](metrics.md)" in (REPO / "docs" / "README.md").read_text(encoding="utf-8")
