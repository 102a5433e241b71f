from __future__ import annotations

import pytest

from ragmeter import registry
from ragmeter.errors import UsageError
from ragmeter.registry import MetricDef, ResolvedMetric, TaskDef


@pytest.fixture
def toy_task():
    def resolver(name: str) -> ResolvedMetric | None:
        if name.startswith("P@") and name[2:].isdigit():
            k = int(name[2:])
            if k < 1:
                raise UsageError(f"bad cutoff '{k}'")
            return ResolvedMetric(prec, f"P@{k}", name, {"k": k})
        return None

    prec = MetricDef("toy", "P@k", "precision at k", "trec_eval 10.0", aliases=("P.k",))
    rr = MetricDef("toy", "RR", "reciprocal rank", "trec_eval 10.0", aliases=("recip_rank", "mrr"))
    task = TaskDef(
        "toy",
        "ragmeter.toy",
        "toy engine",
        (prec, rr),
        resolver=resolver,
        spellings=("P@10", "nDCG@10"),
    )
    registry.register(task)
    yield task
    registry._tasks.pop("toy")


def test_resolve_aliases_to_canonical(toy_task):
    hit = registry.resolve("toy.recip_rank")
    assert (hit.canonical, hit.requested, hit.full_name) == ("RR", "recip_rank", "toy.RR")
    assert registry.resolve("mrr", task="toy").canonical == "RR"


def test_parameterised_names_go_through_the_resolver(toy_task):
    hit = registry.resolve("toy.P@10")
    assert (hit.canonical, dict(hit.params)) == ("P@10", {"k": 10})
    with pytest.raises(UsageError, match="bad cutoff"):
        registry.resolve("toy.P@0")


def test_unknown_metric_suggests_close_names(toy_task):
    with pytest.raises(registry.UnknownMetricError) as exc:
        registry.resolve("toy.NDCG10")
    assert str(exc.value) == "unknown toy metric 'NDCG10'; did you mean 'nDCG@10'?"


def test_unknown_task_lists_tasks():
    with pytest.raises(registry.UnknownMetricError, match="unknown task 'retreival'"):
        registry.resolve("retreival.map")


def test_name_without_task_prefix_is_refused():
    with pytest.raises(registry.UnknownMetricError, match=r"not a task\.metric name"):
        registry.resolve("map")


def test_split_at_first_dot():
    assert registry.split_name("ner.overall.strict.f1") == ("ner", "overall.strict.f1")


def test_task_definition_rejects_ambiguous_aliases():
    a = MetricDef("t", "a", "", "", aliases=("x",))
    b = MetricDef("t", "b", "", "", aliases=("x",))
    with pytest.raises(ValueError, match="'x' names both 'a' and 'b'"):
        TaskDef("t", "m", "", (a, b))


def test_every_provided_task_is_well_formed():
    for task in registry.all_tasks():
        assert task.name in registry.TASK_PROVIDERS
        for m in task.metrics:
            assert m.reference, f"{m.full_name} names no reference implementation"
            assert m.direction in ("higher", "lower", "none")
            assert registry.resolve(m.full_name).definition is m
