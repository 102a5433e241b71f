"""``baseline all`` handed to ``ragmeter run``: the ``complete`` key it prints and its sidecars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import ragmeter
from tests.baselines.conftest import write_jsonl
from tests.helpers import invoke

DOCS = [
    {"id": "d1", "text": "the town museum of Wilford"},
    {"id": "d2", "text": "the county archive of Beekmeer"},
    {"id": "d3", "text": "a public library with maps"},
]
QUESTIONS = {  # qid: (question, relevant doc); q3 matches no document, so bm25 returns nothing
    "q1": ("Where is the town museum?", "d1"),
    "q2": ("Which county archive?", "d2"),
    "q3": ("zebra xylophone", "d3"),
}


def _gold(path: Path) -> Path:
    return write_jsonl(path, [
        {"id": f"s{i}", "text": "A sample.",
         "qa_pairs": [{"qid": qid, "question": q, "answer": "x"}],
         "relevant_docs": {qid: {doc: 1}}}
        for i, (qid, (q, doc)) in enumerate(QUESTIONS.items(), 1)
    ])  # fmt: skip


@pytest.fixture()
def handed_off(tmp_path, monkeypatch) -> tuple[Path, str]:
    monkeypatch.chdir(tmp_path)
    _gold(tmp_path / "gold.jsonl")
    write_jsonl(tmp_path / "docs.jsonl", DOCS)
    res = invoke("baseline", "all", "--gold", "gold.jsonl", "--corpus", "docs.jsonl",
                 "-o", "b", "--no-dense")  # fmt: skip
    assert res.code == 0, res.stderr
    return tmp_path, res.stdout


def test_all_prints_complete_true_for_a_run_with_empty_queries(handed_off) -> None:
    _, block = handed_off
    assert block == (
        "systems:\n  - name: baseline-bm25\n"
        f'    version: "ragmeter {ragmeter.__version__} bm25 default"\n'
        "    outputs: {run: b/bm25.trec, entities: b/entities-keyword.jsonl}\n"
        "    complete: true\n"
    )


def test_printed_block_runs_and_complete_overrides_the_task(handed_off) -> None:
    """The printed block is valid config; its ``complete: true`` counts q3 as 0 even where the
    retrieval task leaves missing queries out, and the sidecar lands in the run's metadata."""
    tmp_path, block = handed_off
    systems = yaml.safe_load(block)["systems"]
    plain = {"name": "plain", "outputs": {"run": "b/bm25.trec"}}  # same file, no key
    cfg = {
        "project": "handoff",
        "dataset": {"path": "gold.jsonl"},
        "systems": [*systems, plain],
        "tasks": {"retrieval": {"measures": ["RR"], "complete": False}},
    }
    (tmp_path / "ragmeter.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = ragmeter.evaluate(tmp_path / "ragmeter.yaml", cache_dir=None, systems_cache=None)
    # bm25 ranks the relevant document first for q1 and q2; q3 has no line in the run
    assert res.results["baseline-bm25"]["retrieval"].aggregates["RR"].value == pytest.approx(2 / 3)
    assert res.results["plain"]["retrieval"].aggregates["RR"].value == pytest.approx(1.0)
    side = json.loads((tmp_path / "b" / "bm25.trec.meta.json").read_text())
    assert side["queries_without_results"] == ["q3"]
    by_name = {s["name"]: s for s in res.summary["systems"]}
    run_meta = by_name["baseline-bm25"]["outputs"]["run"]
    assert run_meta["sidecar"] == side
    assert run_meta["sha256"] == ragmeter.io.files.sha256_file(tmp_path / "b" / "bm25.trec")
    records = {r.system: r for r in res.run_records()}
    assert records["baseline-bm25"].metadata["outputs"]["run"]["sidecar"] == side


def test_a_sidecar_that_is_not_an_object_is_one_line_exit_2(handed_off) -> None:
    tmp_path, block = handed_off
    (tmp_path / "b" / "bm25.trec.meta.json").write_text("[1, 2]\n")
    cfg = {"project": "handoff", "dataset": {"path": "gold.jsonl"},
           "systems": yaml.safe_load(block)["systems"], "tasks": {"retrieval": {}}}  # fmt: skip
    (tmp_path / "ragmeter.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = invoke("run", "ragmeter.yaml", "--no-store")
    assert (res.code, res.stderr) == (
        2,
        "b/bm25.trec.meta.json:1: a list (expected a JSON object)\n",
    )


def test_the_example_compares_its_systems_with_the_generated_bm25() -> None:
    """examples/heritage/baselines.yaml: the generated run as system ``bm25``, the reference
    point of the synthetic systems' retrieval (numbers quoted in the example's README)."""
    from tests.baselines.conftest import EXAMPLE

    res = ragmeter.evaluate(EXAMPLE / "baselines.yaml", cache_dir=None)
    got = {
        name: tuple(
            round(res.results[name]["retrieval"].aggregates[m].value, 4) for m in ("nDCG@10", "RR")
        )
        for name in ("bm25", "bm25-v3", "hybrid-v1")
    }
    assert got == {
        "bm25": (0.9702, 1.0),
        "bm25-v3": (0.6873, 0.6717),
        "hybrid-v1": (0.9018, 0.923),
    }
    rows = {(c["system"], c["task"], c["metric"]): c for c in res.comparisons}
    assert {c["baseline"] for c in res.comparisons} == {"bm25"}
    for system in ("bm25-v3", "hybrid-v1"):  # both significantly below the real baseline
        row = rows[(system, "retrieval", "nDCG@10")]
        assert row["mean_diff"] == pytest.approx(got[system][0] - 0.9702, abs=1e-4)
        assert row["significant"] is True


def test_linkers_called_by_the_runner_equal_the_files_baseline_all_wrote(tmp_path) -> None:
    """``call: ragmeter.baselines:ExactLinker`` / ``FuzzyLinker`` in a config give the linking
    numbers of the entities files ``baseline all --labels`` wrote for the same label file."""
    from tests.baselines.conftest import EXAMPLE
    from tests.baselines.test_cli import KB_ROWS

    kb = tmp_path / "kb.tsv"
    kb.write_text("kb_id\tlabel\taliases\n" + "".join("\t".join(r) + "\n" for r in KB_ROWS))
    gold = str(EXAMPLE / "data" / "gold.jsonl")
    corpus = str(EXAMPLE / "data" / "corpus.jsonl")
    res = invoke("baseline", "all", "--gold", gold, "--corpus", corpus,
                 "--labels", str(kb), "-o", str(tmp_path / "b"), "--no-dense")  # fmt: skip
    assert res.code == 0, res.stderr
    systems = [
        {"name": f"live-{m}", "version": "1", "call": f"ragmeter.baselines:{cls}",
         "init": {"labels": str(kb)}}
        for m, cls in (("exact", "ExactLinker"), ("fuzzy", "FuzzyLinker"))
    ] + [
        {"name": f"file-{m}", "outputs": {"entities": f"b/entities-keyword-{m}.jsonl"}}
        for m in ("exact", "fuzzy")
    ]  # fmt: skip
    cfg = {"project": "links", "dataset": {"path": gold}, "systems": systems,
           "tasks": {"linking": {"k": [1, 5]}}}  # fmt: skip
    (tmp_path / "ragmeter.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = ragmeter.evaluate(tmp_path / "ragmeter.yaml", cache_dir=None, systems_cache=None)
    agg = {
        name: {k: round(v.value, 6) for k, v in out.results[name]["linking"].aggregates.items()}
        for name in ("live-exact", "live-fuzzy", "file-exact", "file-fuzzy")
    }
    assert agg["live-exact"] == agg["file-exact"]
    assert agg["live-fuzzy"] == agg["file-fuzzy"]
    # the label file holds the first 30 samples' institutions (27 linked, upper-cased): both
    # linkers find exactly those of the 52 linkable mentions; exact calls every other one NIL
    assert agg["live-exact"]["ranking.hits@1"] == pytest.approx(27 / 52, abs=1e-6)
    assert agg["live-fuzzy"]["ranking.hits@1"] == pytest.approx(27 / 52, abs=1e-6)
    assert agg["live-exact"]["nil.recall"] == 1.0
    assert agg["live-fuzzy"]["nil.recall"] == pytest.approx(7 / 8, abs=1e-6)
