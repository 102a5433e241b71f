"""docs/config-reference.md is generated from the schema and the registry, and up to date."""

from __future__ import annotations

from ragmeter.registry import all_tasks
from ragmeter.runner.reference import render
from ragmeter.runner.tasks import get_adapter, task_names
from tests.helpers import REPO


def test_committed_page_is_up_to_date():
    committed = (REPO / "docs" / "config-reference.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/config-reference.md is stale: run "
        "`python -m ragmeter.runner.reference > docs/config-reference.md`"
    )


def test_every_task_and_registry_metric_is_documented():
    page = render()
    for task in task_names():
        assert f"### `tasks.{task}`" in page
        for name in get_adapter(task).options.model_fields:
            alias = get_adapter(task).options.model_fields[name].serialization_alias or name
            assert f"`tasks.{task}.{alias}`" in page
    for tdef in all_tasks():
        if not tdef.runner:
            assert f"`tasks.{tdef.name}`" not in page
            continue
        for m in tdef.metrics:
            assert f"| `{m.name}` |" in page
