"""Config validation: every bad input is one line with file, line and key path (docs/runner.md)."""

from __future__ import annotations

import pytest

from ragmeter.errors import InputError
from ragmeter.runner.config import load_config, redact
from tests.helpers import invoke
from tests.runner import toy


@pytest.fixture
def project(tmp_path, monkeypatch):
    toy.install()
    monkeypatch.chdir(tmp_path)
    toy.write_project(tmp_path)
    yield tmp_path
    toy.uninstall()


BASE = """\
project: p
dataset:
  path: gold.jsonl
systems:
  - name: base
    outputs: {answers: outputs/base.jsonl}
  - name: good
    outputs: {answers: outputs/good.jsonl}
tasks:
  toy: {metrics: [match]}
compare: {baseline: base}
"""


def error_of(project, text: str) -> str:
    path = project / "ragmeter.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_config(path)
    return str(exc.value).replace(str(project) + "/", "")


def test_a_valid_config_loads(project):
    cfg = load_config(project / "ragmeter.yaml")
    assert cfg.project == "toy-project" and [s.name for s in cfg.systems] == ["base", "good"]
    assert list(cfg.tasks) == ["toy"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            BASE + "taskz: {}\n",
            "ragmeter.yaml:12: taskz: unknown key (expected one of project, dataset, systems, "
            "tasks, stratify_by, compare, gates, judge, store, executor); did you mean 'tasks'?",
        ),
        (
            BASE.replace("project: p\n", ""),
            "ragmeter.yaml:1: project: missing (a required key)",
        ),
        (
            BASE.replace("gold.jsonl", "nope.jsonl"),
            "ragmeter.yaml:3: dataset.path: dataset not found: nope.jsonl (resolved to nope.jsonl)",
        ),
        (
            BASE.replace("outputs/good.jsonl", "outputs/missing.jsonl"),
            "ragmeter.yaml:8: systems[1].outputs.answers: file not found: outputs/missing.jsonl "
            "(resolved to outputs/missing.jsonl)",
        ),
        (
            BASE.replace("{answers: outputs/good.jsonl}", "{answerz: outputs/good.jsonl}"),
            "ragmeter.yaml:8: systems[1].outputs.answerz: unknown key (expected one of run, "
            "answers, traces, entities); did you mean 'answers'?",
        ),
        (
            BASE.replace("name: good", "name: base"),
            "ragmeter.yaml:7: systems[1].name: system name 'base' is used twice (first as "
            "systems[0])",
        ),
        (
            BASE.replace("name: good", "name: 'has space'"),
            "ragmeter.yaml:7: systems[1].name: 'has space' is not a valid name (expected letters, "
            "digits, '.', '_' or '-', starting with a letter or digit)",
        ),
        (
            BASE.replace("name: good\n", "name: good\n    version: 3.10\n"),
            "ragmeter.yaml:8: systems[1].version: is a number (expected a string; quote it: "
            '"3.10")',
        ),
        (
            BASE.replace("name: good\n", "name: good\n    version: 1.5e+1\n"),
            "ragmeter.yaml:8: systems[1].version: is a number (expected a string; quote it: "
            '"1.5e+1")',
        ),
        (
            BASE.replace("name: good\n", "name: good\n    version: 7\n"),
            'ragmeter.yaml:8: systems[1].version: is a number (expected a string; quote it: "7")',
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "retreival: {}"),
            "ragmeter.yaml:10: tasks.retreival: unknown task (expected one of retrieval, answers, "
            "grounded, semantic, judge, steps, ner, classification, linking, toy); did you mean "
            "'retrieval'?",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "toy: {metrics: [match, mtch]}"),
            "ragmeter.yaml:10: tasks.toy.metrics[1]: unknown toy metric 'mtch' (expected a toy "
            "metric; see ragmeter metrics toy); did you mean 'match'?",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "retrieval: {measures: [nDCG@10, bogus]}"),
            "ragmeter.yaml:10: tasks.retrieval.measures[1]: unknown retrieval measure 'bogus' "
            "(expected a retrieval measure; see ragmeter metrics retrieval)",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "retrieval:\n    measures:\n      - NDCG10"),
            "ragmeter.yaml:12: tasks.retrieval.measures[0]: unknown retrieval measure 'NDCG10' "
            "(expected a retrieval measure; see ragmeter metrics retrieval); did you mean "
            "'nDCG@10'?",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "retrieval: {metrics: [RR, bogus]}"),
            "ragmeter.yaml:10: tasks.retrieval.metrics[1]: unknown retrieval metric 'bogus' "
            "(expected a retrieval metric; see ragmeter metrics retrieval)",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "toy: {metrics: [match], lowercse: true}"),
            "ragmeter.yaml:10: tasks.toy.lowercse: unknown key (expected one of metrics, "
            "lowercase); did you mean 'lowercase'?",
        ),
        (
            BASE.replace("toy: {metrics: [match]}", "toy: {lowercase: 'yes'}"),
            "ragmeter.yaml:10: tasks.toy.lowercase: is a string (expected true or false)",
        ),
        (
            BASE.replace("baseline: base", "baseline: bsae"),
            "ragmeter.yaml:11: compare.baseline: unknown system 'bsae' (expected one of base, "
            "good); did you mean 'base'?",
        ),
        (
            BASE.replace("baseline: base", "baseline: base, test: ttest"),
            "ragmeter.yaml:11: compare.test: 'ttest' is not allowed (expected 'randomization', "
            "'t' or 'wilcoxon')",
        ),
        (
            BASE
            + "gates:\n  rules:\n    - {metric: toy.match, min: 0.5}\n    - {metric: toy.match}\n",
            "ragmeter.yaml:15: gates.rules[1]: has neither min nor max (expected a threshold)",
        ),
        (
            BASE + "gates:\n  rules:\n    - {metric: match, min: 0.5}\n",
            "ragmeter.yaml:14: gates.rules[0].metric: 'match' is not a task.metric name "
            "(expected e.g. retrieval.nDCG@10)",
        ),
        (
            BASE + "gates:\n  rules:\n    - {metric: toy.match, mni: 0.5}\n",
            "ragmeter.yaml:14: gates.rules[0].mni: unknown key (expected one of metric, min, max, "
            "systems); did you mean 'min'?",
        ),
        (
            BASE + "gates:\n  rules:\n    - no_regression: {metrics: [toy.matsh]}\n",
            "ragmeter.yaml:14: gates.rules[0].no_regression.metrics[0]: unknown toy metric "
            "'matsh'; did you mean 'match'?",
        ),
        (
            BASE.replace("compare: {baseline: base}\n", "")
            + "gates:\n  rules:\n    - no_regression: {metrics: [toy.match]}\n",
            "ragmeter.yaml:13: gates.rules[0].no_regression: has no baseline (expected "
            "no_regression.baseline or compare.baseline)",
        ),
        (
            BASE + "gates: {profile: heritag}\n",
            "ragmeter.yaml:12: gates.profile: unknown gate profile 'heritag' (expected one of "
            "heritage, grounded); did you mean 'heritage'?",
        ),
        (
            BASE + "judge: {model: m, api_key: sk-123}\n",
            "ragmeter.yaml:12: judge.api_key: API keys never go in the config (expected "
            "api_key_env: the NAME of an environment variable that holds the key)",
        ),
        (
            BASE + "project: q\n",
            "ragmeter.yaml:12: key 'project' appears twice in the same block (first at line 1)",
        ),
        (
            "- a\n- b\n",
            "ragmeter.yaml: is a list (expected a mapping with keys project, dataset, "
            "systems, tasks, stratify_by, compare, gates, judge, store, executor)",
        ),
        (
            "project: [\n",
            "ragmeter.yaml:2: not valid YAML: expected the node content, but found "
            "'<stream end>' (expected YAML)",
        ),
        (
            BASE.replace("tasks:\n  toy: {metrics: [match]}\n", "tasks: {}\n"),
            "ragmeter.yaml:9: tasks: no tasks (expected at least one of retrieval, "
            "answers, grounded, semantic, judge, steps, ner, classification, linking, "
            "toy)",
        ),
    ],
)
def test_one_line_errors(project, text, message):
    assert error_of(project, text) == message


def test_split_needs_a_manifest(project):
    text = BASE.replace("  path: gold.jsonl\n", "  path: gold.jsonl\n  split: test\n")
    assert error_of(project, text) == (
        "ragmeter.yaml:4: dataset.split: needs a split manifest (expected dataset.manifest, "
        "written by ragmeter split)"
    )


def test_unknown_stratum_factor_is_caught_after_loading_the_gold(project):
    import ragmeter

    path = project / "ragmeter.yaml"
    path.write_text(BASE + "stratify_by: [country, contry]\n")
    with pytest.raises(InputError) as exc:
        ragmeter.evaluate(path, cache_dir=None)
    assert str(exc.value).endswith(
        "ragmeter.yaml:12: stratify_by[1]: factor 'contry' is in no sample's strata (expected one "
        "of country, tier)"
    )


def test_cli_prints_the_line_and_exits_2(project):
    (project / "ragmeter.yaml").write_text(BASE + "taskz: {}\n")
    out = invoke("run", "ragmeter.yaml", "--quiet")
    assert out.code == 2 and out.stdout == ""
    assert out.stderr.startswith("ragmeter.yaml:12: taskz: unknown key")
    assert out.stderr.count("\n") == 1
    assert not (project / ".ragmeter" / "ragmeter.db").exists()


def test_dict_config_errors_name_the_key_path(project):
    with pytest.raises(InputError) as exc:
        load_config({"project": "p", "dataset": {"path": "gold.jsonl"}, "systems": []})
    assert str(exc.value) == "systems: is empty (expected at least 1 item)"


def test_redaction_never_leaks():
    data = {
        "store": "postgresql+psycopg://user:pw@db/x",
        "judge": {"base_url": "https://tok@api.example/v1", "api_key_env": "MY_KEY"},
        "extra": {"Authorization": "Bearer x", "password": "p"},
    }
    assert redact(data) == {
        "store": "postgresql+psycopg://***@db/x",
        "judge": {"base_url": "https://***@api.example/v1", "api_key_env": "MY_KEY"},
        "extra": {"Authorization": "***", "password": "***"},
    }


def test_a_number_for_a_string_in_a_dict_config_gets_a_generic_hint(tmp_path):
    data = {
        "project": "p",
        "dataset": {"path": "gold.jsonl"},
        "systems": [{"name": "a", "version": 3.1, "outputs": {}}],
    }
    with pytest.raises(InputError) as exc:
        load_config(data, base_dir=tmp_path)
    assert str(exc.value) == "systems[0].version: is a number (expected a string; quote it)"
