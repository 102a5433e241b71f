"""Gate semantics (docs/runner.md): thresholds on unrounded values, no-regression, SKIP, strict."""

from __future__ import annotations

import pytest

from ragmeter.errors import UsageError
from ragmeter.result import Aggregate
from ragmeter.runner.config import GateRule
from ragmeter.runner.gates import GATE_PROFILES, evaluate_rules, parse_rule
from tests.helpers import warns


def rule(kind, metric, threshold=None, **kw):
    task, _, name = metric.partition(".")
    return GateRule(kind, metric, task, kw.pop("canonical", name), threshold, **kw)


AGGS = {
    "grounded": {
        "precision": Aggregate(0.79996, 10, {"ok": 10}),
        "under_refusal": Aggregate(0.05, 10, {"ok": 10}),
    },
    "judge": {"faithfulness": Aggregate(None, 0, {"needs_llm": 10}, reason="no scored samples")},
}


def verdicts(rules, **kw):
    out = evaluate_rules(
        rules,
        system="s",
        aggregates=kw.pop("aggregates", AGGS),
        task_reasons=kw.pop("reasons", {}),
        **kw,
    )
    return [(o.verdict, o.reason) for o in out]


def test_thresholds_use_unrounded_values():
    assert verdicts([rule("min", "grounded.precision", 0.80)]) == [
        ("FAIL", "0.79996 is not >= 0.8")
    ]
    assert verdicts([rule("max", "grounded.under_refusal", 0.05)]) == [("PASS", None)]


def test_missing_values_skip_and_strict_fails():
    rules = [
        rule("min", "judge.faithfulness", 0.8),
        rule("min", "ner.overall.strict.f1", 0.85),
        rule("min", "linking.ranking.mrr", 0.75, canonical=None),
    ]
    reasons = {"judge": "task judge skipped: LLM metrics skipped (status needs_llm): ..."}
    out = verdicts(rules, reasons=reasons)
    assert out == [
        (
            "SKIP",
            "judge.faithfulness has no value (task judge skipped: LLM metrics skipped "
            "(status needs_llm): ...)",
        ),
        ("SKIP", "task ner was not evaluated"),
        ("SKIP", "the linking engine is not part of this build of ragmeter"),
    ]
    strict = verdicts(rules, reasons=reasons, strict=True)
    assert [v for v, _ in strict] == ["FAIL"] * 3
    assert strict[1][1] == "task ner was not evaluated (strict gates: SKIP counts as FAIL)"


def test_no_regression_follows_the_metric_direction():
    comps = {
        ("grounded", "precision"): {"mean_diff": -0.1, "p_value": 0.01, "p_adjusted": 0.02},
        ("grounded", "under_refusal"): {"mean_diff": 0.1, "p_value": 0.01, "p_adjusted": 0.04},
    }
    rules = [
        rule("no_regression", "grounded.precision", baseline="b"),
        rule("no_regression", "grounded.under_refusal", baseline="b", direction="lower"),
        rule(
            "no_regression", "grounded.under_refusal", baseline="b", direction="lower", alpha=0.01
        ),
    ]
    out = evaluate_rules(rules, system="s", aggregates=AGGS, task_reasons={}, comparisons=comps)
    assert [(o.verdict, o.p_value) for o in out] == [("FAIL", 0.02), ("FAIL", 0.04), ("PASS", 0.04)]
    assert out[0].reason == "significantly worse than b: difference -0.1, p = 0.02 <= 0.05"
    better = {("grounded", "precision"): {"mean_diff": 0.3, "p_value": 0.001, "p_adjusted": 0.001}}
    assert verdicts([rules[0]], comparisons=better) == [("PASS", None)]
    # the baseline itself is not gated against itself
    assert (
        evaluate_rules(rules, system="b", aggregates=AGGS, task_reasons={}, comparisons=comps) == []
    )
    degenerate = {("grounded", "precision"): {"mean_diff": 0.0, "p_value": 1.0, "degenerate": True}}
    assert verdicts([rules[0]], comparisons=degenerate) == [("PASS", None)]


def test_rules_apply_to_the_listed_systems_only():
    r = rule("min", "grounded.precision", 0.5, systems=("other",))
    assert verdicts([r]) == []


def test_profiles_name_registry_metrics():
    assert [m for _, m, _ in GATE_PROFILES["grounded"]] == [
        "grounded.precision",
        "grounded.chr",
        "grounded.under_refusal",
        "grounded.over_refusal",
    ]
    assert ("min", "retrieval.RR", 0.55) in GATE_PROFILES["heritage"]
    assert len(GATE_PROFILES["heritage"]) == 11


def test_grounded_profile_is_the_scorers_defaults_with_registry_directions():
    """One home each: thresholds from `ragmeter grounded`, floor/ceiling from the registry."""
    from ragmeter import registry
    from ragmeter.answers.grounded import DEFAULT_GATES, score

    assert DEFAULT_GATES == "precision=0.80,chr=0.75,under=0.05,over=0.10"
    assert GATE_PROFILES["grounded"] == (
        ("min", "grounded.precision", 0.80),
        ("min", "grounded.chr", 0.75),
        ("max", "grounded.under_refusal", 0.05),
        ("max", "grounded.over_refusal", 0.10),
    )
    assert score.__kwdefaults__["gates"] == DEFAULT_GATES
    for name in GATE_PROFILES:
        for kind, metric, _ in GATE_PROFILES[name]:
            direction = registry.resolve(metric).definition.direction
            assert kind == ("max" if direction == "lower" else "min"), metric


def test_grounded_gates_pass_by_registry_direction():
    from ragmeter.answers.grounded_report import parse_gates

    gates = {g.name: g for g in parse_gates("precision=0.8,chr=0.7,under=0.05,over=0.1,recall=0.5")}
    assert {n: g.at_least for n, g in gates.items()} == {
        "precision": True,
        "chr": True,
        "under": False,
        "over": False,
        "recall": True,
    }
    assert gates["under"].check(0.05) and not gates["under"].check(0.06)
    assert gates["precision"].check(0.8) and not gates["precision"].check(0.79)


@pytest.mark.parametrize("text", ["nDCG>0.5", "retrieval.nDCG@10 >= x", "no_regression:"])
def test_bad_rule_text(text):
    with pytest.raises(UsageError, match="ragmeter gate: "):
        parse_rule(text)


def test_the_old_name_of_the_gate_profiles_warns():
    import ragmeter.runner
    from ragmeter.runner import gates

    with warns(DeprecationWarning, "use GATE_PROFILES"):
        assert gates.PROFILES is GATE_PROFILES
    with warns(DeprecationWarning, "use GATE_PROFILES"):
        assert ragmeter.runner.PROFILES is GATE_PROFILES
