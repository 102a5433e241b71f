"""``ragmeter split`` on a gold JSONL file: manifest, balance table, sampling, bad input."""

from __future__ import annotations

import json

import pytest

from ragmeter.stats.datasets import split
from tests.helpers import invoke, run_cli
from tests.stats.conftest import load

ROWS = load("splits.json")["TV-SPLIT-00"]["input"]["rows"]
FACTORS = ["custodian_type", "country", "data_tier", "source_type"]


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for r in ROWS:
            strata = {k: v for k, v in r.items() if k != "id"}
            fh.write(json.dumps({"id": r["id"], "text": "…", "strata": strata}) + "\n")
    return path


def test_split_writes_the_manifest_and_prints_the_balance_table(gold, tmp_path):
    out = tmp_path / "split-manifest.json"
    res = run_cli(
        "split",
        str(gold),
        "--by",
        "custodian_type,country",
        "--by",
        "data_tier,source_type",
        "--group",
        "institution_id",
        "--ratios",
        "0.70,0.15,0.15",
        "--seed",
        "3",
        "--min-count",
        "3",
        "-o",
        str(out),
    )
    assert res.code == 0, res.stderr
    manifest = json.loads(out.read_text())
    lib = split(
        ROWS,
        ratios=[0.7, 0.15, 0.15],
        factors=FACTORS,
        group_key="institution_id",
        seed=3,
        min_count=3,
    )
    assert manifest == lib.manifest
    assert "balance (share per split)" in res.stdout and "max deviation" in res.stdout
    assert "groups in more than one split: 0" in res.stdout
    assert f"sha256 {lib.sha256}" in res.stdout
    assert "coverage: moved group" in res.stdout


def test_manifest_to_stdout_without_output_and_json(gold):
    res = invoke("split", str(gold), "--by", "custodian_type", "--group", "institution_id")
    assert res.code == 0
    assert json.loads(res.stdout)["format"] == "ragmeter-split-manifest/1"
    assert "balance" in res.stderr
    res = invoke(
        "split", str(gold), "--by", "custodian_type", "--group", "institution_id", "--json"
    )
    data = json.loads(res.stdout)
    assert set(data) == {"manifest", "report"}
    assert data["report"]["leakage"]["groups_in_more_than_one_split"] == 0


def test_every_split_option_has_a_flag(gold, tmp_path):
    hier = tmp_path / "h.yaml"
    hier.write_text("parent:\n  I: COMMUNITY\n  S: COMMUNITY\n")
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--group",
        "institution_id",
        "--ratios",
        "dev=0.3,test=0.7",
        "--rare-policy",
        "merge",
        "--min-count",
        "6",
        "--hierarchy",
        f"custodian_type={hier}",
        "--no-coverage",
        "--json",
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    m = data["manifest"]
    assert m["ratios"] == {"dev": 0.3, "test": 0.7} and m["coverage"] is False
    assert m["rare_policy"] == "merge" and m["min_count"] == 6
    assert data["report"]["rare"]["merged"] == {
        "custodian_type": {"I": "COMMUNITY", "S": "COMMUNITY"}
    }
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type,country",
        "--rare-policy",
        "bucket",
        "--rare-policy",
        "custodian_type=pin:test",
        "--min-count",
        "6",
        "--json",
    )
    assert json.loads(res.stdout)["manifest"]["rare_policy"] == {
        "custodian_type": "pin:test",
        "country": "bucket",
    }
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--group",
        "institution_id",
        "--method",
        "sklearn_group",
        "--primary-factor",
        "custodian_type",
        "--json",
    )
    assert json.loads(res.stdout)["manifest"]["method"] == "sklearn_group"
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--method",
        "iterstrat",
        "--group",
        "institution_id",
        "--ignore-groups",
        "--json",
    )
    assert json.loads(res.stdout)["manifest"]["ignore_groups"] is True
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--group",
        "institution_id",
        "--kfold",
        "4",
        "--json",
    )
    assert list(json.loads(res.stdout)["manifest"]["splits"]) == [
        "fold0",
        "fold1",
        "fold2",
        "fold3",
    ]
    res = invoke("split", str(gold), "--by", "country", "--ratios", "heritage", "--json")
    assert json.loads(res.stdout)["manifest"]["ratios"] == {"train": 0.7, "dev": 0.15, "test": 0.15}


def test_sample(gold, tmp_path):
    out = tmp_path / "sample.json"
    res = run_cli(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--sample",
        "40",
        "--seed",
        "1",
        "-o",
        str(out),
    )
    assert res.code == 0, res.stderr
    m = json.loads(out.read_text())
    assert m["method"] == "stratified_sample" and len(m["splits"]["sample"]) == 40
    assert "stratified sample of 40" in res.stdout
    res = invoke(
        "split",
        str(gold),
        "--by",
        "custodian_type",
        "--sample",
        "40",
        "--allocation",
        "equal",
        "--min-per-stratum",
        "1",
        "--json",
    )
    rows = json.loads(res.stdout)["report"]["strata"]
    assert all(r["allocated"] >= 1 for r in rows) and sum(r["allocated"] for r in rows) == 40


@pytest.mark.parametrize(
    ("lines", "args", "message"),
    [
        (
            ['{"id": "a"}', '{"id": "a"}'],
            [],
            "gold.jsonl:2: id 'a' appears twice (first at line 1)",
        ),
        (['{"text": "x"}'], [], "gold.jsonl:1: no 'id' (expected one id per sample)"),
        (['{"id": "a", "strata": []}'], [], "gold.jsonl:1: strata is not an object"),
        (
            ['{"id": "a", "strata": {"t": {"x": 1}}}'],
            ["--by", "t"],
            "gold.jsonl:1: strata.t is a JSON object (expected a string, number or boolean)",
        ),
        (
            [
                '{"id": "a"',
            ],
            [],
            "gold.jsonl:1: not valid JSON",
        ),
        ([], [], "gold.jsonl: no data lines"),
        (['{"id": "a"}'], ["--ratios", "0.5,0.2"], "ragmeter split: ratios sum to 0.7"),
        (['{"id": "a"}'], ["--ratios", "x"], "ragmeter split: --ratios 'x' (expected"),
        (
            ['{"id": "a"}'],
            ["--kfold", "3", "--sample", "1", "--by", "t"],
            "ragmeter split: --kfold and --sample are different operations",
        ),
        (
            ['{"id": "a", "t": "x"}'],
            ["--by", "t", "--rare-policy", "error"],
            "ragmeter split: factor 't' has values with fewer than 3 items: x (1)",
        ),
        (['{"id": "a"}'], ["--method", "random"], "ragmeter split: unknown split method 'random'"),
        (
            ['{"id": "a", "strata": {"country": "NL"}, "type": "M"}'],
            ["--by", "contry"],
            "gold.jsonl: no sample has the factor 'contry' (expected one of country, type); "
            "did you mean 'country'?",
        ),
        (
            ['{"id": "a", "t": "x"}', '{"id": "b"}'],
            ["--by", "t", "--group", "inst"],
            "gold.jsonl: no sample has the group key 'inst' (expected one of t)",
        ),
        (
            ['{"id": "a", "t": "x"}'],
            ["--by", "t", "--sample", "5"],
            "ragmeter split: sample size 5 is larger than the 1 items",
        ),
    ],
)
def test_bad_input(tmp_path, lines, args, message):
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(line + "\n" for line in lines))
    out = tmp_path / "m.json"
    res = invoke("split", str(gold), *args, "-o", str(out))
    assert res.code == 2
    assert message in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and not out.exists()
