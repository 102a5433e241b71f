"""``ragmeter steps`` (docs/steps.md)."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.helpers import invoke, run_cli
from tests.steps.common import DOCS, LLM, MAIN, assert_same, load_yaml, strip_keys

REF1 = str(MAIN / "reference_1.yaml")
RESP1 = str(MAIN / "actual_responses_1.jsonl")


def test_table_output():
    res = invoke("steps", "--reference", REF1, "--responses", RESP1)
    assert res.code == 0, res.stderr
    assert "micro" in res.stdout and "0.4250" in res.stdout
    assert "list_all_transformers_within_Substat" in res.stdout


def test_json_output_equals_fixture():
    res = invoke("steps", "--reference", REF1, "--responses", RESP1, "--json")
    assert res.code == 0, res.stderr
    assert_same(json.loads(res.stdout), load_yaml(MAIN / "evaluation_summary_1.yaml"))


@pytest.mark.parametrize("ext", ["yaml", "json", "jsonl"])
def test_output_files(tmp_path, ext):
    out = tmp_path / "sub" / f"results.{ext}"
    agg = tmp_path / "agg.yaml"
    res = invoke(
        "steps",
        "--reference",
        REF1,
        "--responses",
        RESP1,
        "--compat",
        "graphrag-eval-6",
        "--output",
        str(out),
        "--aggregates",
        str(agg),
    )
    assert res.code == 0, res.stderr
    assert res.stdout == ""
    text = out.read_text(encoding="utf-8")
    if ext == "jsonl":
        records = [json.loads(line) for line in text.splitlines()]
    else:
        records = yaml.safe_load(text)
    assert_same(records, load_yaml(MAIN / "evaluation_1.yaml"))
    assert_same(yaml.safe_load(agg.read_text()), load_yaml(MAIN / "evaluation_summary_1.yaml"))
    assert not list(tmp_path.rglob("*.tmp"))


def test_yaml_output_keeps_datetimes_and_block_scalars(tmp_path):
    out = tmp_path / "r.yaml"
    res = invoke(
        "steps",
        "--reference",
        str(MAIN / "reference_2.yaml"),
        "--responses",
        str(MAIN / "actual_responses_3.jsonl"),
        "--output",
        str(out),
    )
    assert res.code == 0, res.stderr
    text = out.read_text(encoding="utf-8")
    assert "start: 2025-01-01 00:00:00+00:00" in text
    assert "query: |" in text
    assert_same(strip_keys(yaml.safe_load(text)), load_yaml(MAIN / "evaluation_4.yaml"))
    out_json = tmp_path / "r.json"
    invoke(
        "steps",
        "--reference",
        str(MAIN / "reference_2.yaml"),
        "--responses",
        str(MAIN / "actual_responses_3.jsonl"),
        "--output",
        str(out_json),
    )
    assert '"start": "2025-01-01T00:00:00+00:00"' in out_json.read_text(encoding="utf-8")


def test_missing_response_message_and_error_samples(tmp_path):
    target = str(DOCS / "target.json")
    res = invoke("steps", "--reference", str(DOCS / "reference.yaml"), "--responses", target)
    assert res.code == 2
    assert res.stderr.strip() == (
        f"{target}: question 8bbea9a10876a04ad77a82fd2aedee40: no response (expected one record "
        "per reference question; --on-missing error-sample scores it as an error)"
    )
    res = invoke(
        "steps",
        "--reference",
        str(DOCS / "reference.yaml"),
        "--responses",
        target,
        "--on-missing",
        "error-sample",
        "--json",
    )
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["micro"]["number_of_error_samples"] == 3


def test_line_numbers_in_reference_errors(tmp_path):
    ref = tmp_path / "reference.yaml"
    ref.write_text(
        "- template_id: t\n"
        "  questions:\n"
        "  - id: q1\n"
        "    question_text: Which?\n"
        "    reference_steps:\n"
        "    - - name: iri_discovery\n"
        "        output: urn:x\n"
        "      - name: sparql_query\n"
        "        output_media_type: application/sparql-results+json\n"
        '        output: \'{"head": {"vars": ["x"]}}\'\n',
        encoding="utf-8",
    )
    resp = tmp_path / "responses.jsonl"
    resp.write_text('{"question_id": "q1"}\n', encoding="utf-8")
    out = tmp_path / "out.yaml"
    res = invoke("steps", "--reference", str(ref), "--responses", str(resp), "-o", str(out))
    assert res.code == 2
    assert res.stderr.strip() == (
        f"{ref}:10: question q1: reference_steps[0][1].output: not a SPARQL result: no "
        '"boolean" and no "results.bindings" (expected SPARQL 1.1 JSON results)'
    )
    assert not out.exists()
    ref.write_text(
        "- template_id: t\n  questions:\n  - id: q1\n    question_text: Which?\n"
        "    reference_steps:\n    - - output: urn:x\n        name: iri-discovery\n",
        encoding="utf-8",
    )
    res = invoke("steps", "--reference", str(ref), "--responses", str(resp))
    assert res.stderr.strip() == (
        f'{ref}:7: question q1: reference_steps[0][0].name: unknown step name "iri-discovery" '
        '(expected "iri_discovery")'
    )
    res = invoke("steps", "--reference", str(ref), "--responses", str(resp), "--no-name-check")
    assert res.code == 0, res.stderr


def test_line_numbers_in_response_errors(tmp_path):
    ref = tmp_path / "reference.yaml"
    ref.write_text(
        "- template_id: t\n  questions:\n  - id: q1\n    question_text: a\n"
        "  - id: q2\n    question_text: b\n",
        encoding="utf-8",
    )
    resp = tmp_path / "responses.jsonl"
    lines = [
        {"question_id": "q1", "actual_steps": []},
        {
            "question_id": "q2",
            "actual_steps": [
                {"id": "a", "name": "x", "status": "success"},
                {"id": "b", "name": "y"},
            ],
        },
    ]
    resp.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    res = invoke("steps", "--reference", str(ref), "--responses", str(resp))
    assert res.code == 2
    assert res.stderr.strip() == (
        f"{resp}:2: question q2: actual_steps[1].status: missing (expected a string such as "
        '"success" or "error")'
    )
    resp.write_text('{"question_id": "q1"}\n{"question_id": \n', encoding="utf-8")
    res = invoke("steps", "--reference", str(ref), "--responses", str(resp))
    assert res.stderr.startswith(f"{resp}:2: not valid JSON")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "empty file"),
        ("- template_id: [unclosed\n", "not valid YAML"),
        ("just a string\n", "a string, not a list of templates"),
    ],
)
def test_bad_reference_files(tmp_path, content, expected):
    ref = tmp_path / "r.yaml"
    ref.write_text(content, encoding="utf-8")
    res = invoke("steps", "--reference", str(ref), "--responses", RESP1)
    assert res.code == 2
    assert expected in res.stderr and res.stderr.count("\n") == 1
    assert "Traceback" not in res.stderr


def test_missing_file_and_bad_options(tmp_path):
    res = invoke("steps", "--reference", str(tmp_path / "nope.yaml"), "--responses", RESP1)
    assert res.code == 2 and "cannot read" in res.stderr
    res = invoke("steps", "--reference", REF1, "--responses", RESP1, "--compat", "graphrag-eval-4")
    assert res.code == 2 and "ragmeter steps: --compat 'graphrag-eval-4'" in res.stderr
    res = invoke("steps", "--reference", REF1, "--responses", RESP1, "-o", str(tmp_path / "x.txt"))
    assert res.code == 2 and "unknown output format" in res.stderr
    res = invoke(
        "steps",
        "--reference",
        REF1,
        "--responses",
        RESP1,
        "--aggregates",
        str(tmp_path / "a.jsonl"),
    )
    assert res.code == 2
    res = invoke("steps", "--reference", REF1, "--responses", RESP1, "--on-missing", "skip")
    assert res.code == 2 and "--on-missing" in res.stderr


def test_config_without_judge_is_a_usage_error(tmp_path):
    out = tmp_path / "o.yaml"
    res = invoke(
        "steps",
        "--reference",
        str(LLM / "reference_1.yaml"),
        "--responses",
        str(LLM / "actual_responses_1.jsonl"),
        "--config",
        str(LLM / "config-openai.yaml"),
        "-o",
        str(out),
    )
    assert res.code == 2
    assert res.stderr.startswith("ragmeter steps: the config asks for LLM-judged keys")
    assert not out.exists()


def test_warnings_and_strict(tmp_path):
    res = invoke(
        "steps", "--reference", REF1, "--responses", str(MAIN / "actual_responses_2.jsonl")
    )
    assert res.code == 0
    assert res.stderr.startswith(f"warning: {REF1}:")
    res = invoke(
        "steps",
        "--reference",
        REF1,
        "--responses",
        str(MAIN / "actual_responses_2.jsonl"),
        "--strict",
    )
    assert res.code == 2 and not res.stderr.startswith("warning")


def test_responses_as_json_array_and_object(tmp_path):
    with open(RESP1, encoding="utf-8") as fh:
        records = [json.loads(x) for x in fh]
    arr = tmp_path / "r.json"
    arr.write_text(json.dumps(records), encoding="utf-8")
    obj = tmp_path / "o.json"
    obj.write_text(json.dumps({r["question_id"]: r for r in records}), encoding="utf-8")
    for path in (arr, obj):
        res = invoke("steps", "--reference", REF1, "--responses", str(path), "--json")
        assert res.code == 0, res.stderr
        assert json.loads(res.stdout)["micro"]["steps_score"]["sum"] == 17


def test_gzip_and_subprocess(tmp_path):
    import gzip

    gz = tmp_path / "responses.jsonl.gz"
    with open(RESP1, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    res = run_cli("steps", "--reference", REF1, "--responses", str(gz), "--json")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout)["macro"]["steps_score"]["mean"] == 0.42500000000000004
