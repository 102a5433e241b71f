"""``pytest ragmeter.yaml``: a config's gate rules collected as tests.

One item per system and gate rule, ``ragmeter.yaml::hybrid-v1::retrieval.nDCG@10>=0.6`` or
``ragmeter.yaml::hybrid-v1::no_regression[bm25-v3]:answers.f1``. Collecting only parses the
config; the first item that runs evaluates it, through the same session cache as the
``ragmeter_runs`` fixture, so a collected config and ``ragmeter_run`` on the same file evaluate
once. PASS passes, FAIL fails with the rule's message, SKIP skips (fails in strict mode).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragmeter.errors import RagmeterError

__all__ = ["ConfigFile", "GateItem", "rule_name"]


def rule_name(rule: Any) -> str:
    """The test name of one gate rule.

    >>> from types import SimpleNamespace as R
    >>> rule_name(R(kind="min", metric="retrieval.nDCG@10", threshold=0.6, baseline=None))
    'retrieval.nDCG@10>=0.6'
    >>> rule_name(R(kind="no_regression", metric="answers.f1", threshold=None, baseline="bm25"))
    'no_regression[bm25]:answers.f1'
    """
    if rule.kind == "min":
        return f"{rule.metric}>={rule.threshold:g}"
    if rule.kind == "max":
        return f"{rule.metric}<={rule.threshold:g}"
    return f"no_regression[{rule.baseline}]:{rule.metric}"


def _applies(rule: Any, system: str) -> bool:
    if rule.systems is not None and system not in rule.systems:
        return False
    return not (rule.kind == "no_regression" and rule.baseline == system)


class ConfigFile(pytest.File):
    """A ragmeter config named on the command line or matching ``ragmeter_config_files``."""

    def _load(self) -> Any:
        from ragmeter.testing.session import RunFactory

        return RunFactory(self.config).load(self.path)

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        cfg = self._load()
        for system in cfg.system_names:
            rules = [r for r in cfg.rules if _applies(r, system)]
            if rules:
                yield SystemRules.from_parent(self, name=system, rules=rules)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, RagmeterError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class SystemRules(pytest.Collector):
    """The gate rules of one system."""

    def __init__(self, *, rules: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rules = rules

    def collect(self) -> Iterator[pytest.Item]:
        seen: dict[str, int] = {}
        for rule in self.rules:
            name = rule_name(rule)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:  # the same rule from a profile and from rules
                name = f"{name}#{seen[name]}"
            yield GateItem.from_parent(self, name=name, rule=rule, system=self.name)


class GateItem(pytest.Item):
    """One gate rule applied to one system."""

    ragmeter_collected = True

    def __init__(self, *, rule: Any, system: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.system = system

    def runtest(self) -> None:
        __tracebackhide__ = True
        from ragmeter import testing
        from ragmeter.testing._context import strict_enabled
        from ragmeter.testing.assertions import gate_check, gate_outcomes
        from ragmeter.testing.checks import conclude
        from ragmeter.testing.session import RunFactory

        runset = RunFactory(self.config).get(self.path)
        strict = strict_enabled(self.config) or runset.strict
        outcome = next(
            (
                o
                for o in gate_outcomes(runset, strict)
                if o.system == self.system
                and o.rule == self.rule.text
                and o.source == self.rule.source
            ),
            None,
        )
        if outcome is None:  # pragma: no cover - the rules came from the same config
            raise RagmeterError(f"{self.system}: rule {self.rule.text} was not evaluated")
        check = gate_check(outcome, runset)

        def headline(failed: list[dict[str, Any]], _all: list[dict[str, Any]]) -> str:
            c = failed[0]
            return f"{c['system']}: {c['rule']} failed: {c['reason']}"

        testing._end(
            conclude(
                [check],
                label=self.system,
                strict=strict,
                results_dir=runset.results_dir,
                headline=headline,
            )
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        # one line: the rule, the value and the threshold (JUnit shows it as the message)
        if isinstance(excinfo.value, (RagmeterError, AssertionError)):
            return str(excinfo.value).split("\n", 1)[0]
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        # no domain: pytest would show the dots of a metric name as "::"
        return self.path, None, ""
