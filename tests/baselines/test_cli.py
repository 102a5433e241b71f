"""``ragmeter baseline``: bad input, byte identity, the example's bm25 run, runner integration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.baselines.conftest import EXAMPLE, write_jsonl
from tests.helpers import invoke

CORPUS = str(EXAMPLE / "data" / "corpus.jsonl")
GOLD = str(EXAMPLE / "data" / "gold.jsonl")
GOLD_ROWS = [json.loads(x) for x in Path(GOLD).read_text(encoding="utf-8").splitlines()]
# A label file of the first 30 samples' linked institutions, names upper-cased
KB_ROWS = [
    (link["wikidata_id"], link["mention"].upper(), "")
    for row in GOLD_ROWS[:30]
    for link in row["entity_linking"]
    if link["wikidata_id"]
]


def _kb(tmp_path: Path) -> str:
    path = tmp_path / "kb.tsv"
    path.write_text("kb_id\tlabel\taliases\n" + "".join("\t".join(r) + "\n" for r in KB_ROWS))
    return str(path)


def test_example_bm25_baseline_is_the_command_output(tmp_path) -> None:
    out = tmp_path / "baseline-bm25.trec"
    res = invoke("baseline", "bm25", "--corpus", CORPUS, "--queries", GOLD, "-o", str(out))
    assert res.code == 0, res.stderr
    assert out.read_bytes() == (EXAMPLE / "outputs" / "baseline-bm25.trec").read_bytes()
    meta = json.loads((tmp_path / "baseline-bm25.trec.meta.json").read_text())
    assert meta["options"]["k1"] == 0.9 and meta["options"]["b"] == 0.4
    assert [i["count"] for i in meta["inputs"]] == [68, 60]


def test_outputs_are_byte_identical_on_rerun(tmp_path) -> None:
    kb = _kb(tmp_path)
    runs = []
    for n in (1, 2):
        d = tmp_path / f"r{n}"
        d.mkdir()
        assert (
            invoke(
                "baseline",
                "bm25",
                "--corpus",
                CORPUS,
                "--queries",
                GOLD,
                "-o",
                str(d / "bm25.trec"),
            ).code
            == 0
        )
        assert (
            invoke(
                "baseline",
                "bm25",
                "--corpus",
                CORPUS,
                "--queries",
                GOLD,
                "--preset",
                "ultrarag",
                "-o",
                str(d / "u.jsonl"),
            ).code
            == 0
        )
        assert (
            invoke(
                "baseline",
                "rrf",
                str(d / "bm25.trec"),
                str(d / "u.jsonl"),
                "-o",
                str(d / "h.jsonl"),
            ).code
            == 0
        )
        assert invoke("baseline", "classify", "--input", GOLD, "-o", str(d / "t.jsonl")).code == 0
        for m in ("exact", "fuzzy"):
            assert (
                invoke(
                    "baseline",
                    "link",
                    m,
                    "--labels",
                    kb,
                    "--mentions",
                    GOLD,
                    "-o",
                    str(d / f"{m}.jsonl"),
                ).code
                == 0
            )
        runs.append({p.name: p.read_bytes() for p in d.iterdir() if not p.name.endswith(".json")})
    assert runs[0] == runs[1] and len(runs[0]) == 6
    h = [json.loads(x) for x in runs[0]["h.jsonl"].decode().splitlines()]
    sources = [s for rec in h for s in rec["sources"]]
    assert set(sources) == {"bm25", "bm25+u"} and sources.count("bm25+u") > 100


def test_types_and_links_evaluate_with_classify_and_link(tmp_path) -> None:
    kb = _kb(tmp_path)
    assert (
        invoke("baseline", "classify", "--input", GOLD, "-o", str(tmp_path / "t.jsonl")).code == 0
    )
    res = invoke("classify", GOLD, str(tmp_path / "t.jsonl"), "--json")
    assert res.code == 0, res.stderr
    acc = json.loads(res.stdout)["accuracy"]
    types = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    gold = [json.loads(x) for x in Path(GOLD).read_text().splitlines()]
    hits = sum(
        t["label"] == g["type_classification"]["primary_type"]
        for t, g in zip(types, gold, strict=True)
    )
    assert acc == pytest.approx(hits / len(gold)) and hits > 30
    assert (
        invoke(
            "baseline",
            "link",
            "fuzzy",
            "--labels",
            kb,
            "--mentions",
            GOLD,
            "-o",
            str(tmp_path / "l.jsonl"),
        ).code
        == 0
    )
    res = invoke("link", GOLD, str(tmp_path / "l.jsonl"), "--json")
    assert res.code == 0, res.stderr
    in_kb = [x for r in GOLD_ROWS for x in r["entity_linking"] if x["wikidata_id"]]
    assert len(KB_ROWS) == 27 and len(in_kb) == 52
    # every institution of the label file is found first (names differ only in case)
    assert json.loads(res.stdout)["ranking"]["hits@1"] == pytest.approx(27 / 52)


def test_gold_ids_do_not_change_the_links(tmp_path) -> None:
    kb = _kb(tmp_path)
    scrubbed = tmp_path / "gold.jsonl"
    rows = [json.loads(x) for x in Path(GOLD).read_text().splitlines()]
    for r in rows:
        for link in r["entity_linking"]:
            link["wikidata_id"] = None
            link.pop("isil_code", None)
    write_jsonl(scrubbed, rows)
    for src, out in ((GOLD, "a.jsonl"), (str(scrubbed), "b.jsonl")):
        assert (
            invoke(
                "baseline",
                "link",
                "fuzzy",
                "--labels",
                kb,
                "--mentions",
                src,
                "-o",
                str(tmp_path / out),
            ).code
            == 0
        )
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_all_writes_every_baseline_and_prints_the_systems_block(tmp_path) -> None:
    kb = _kb(tmp_path)
    res = invoke(
        "baseline",
        "all",
        "--gold",
        GOLD,
        "--corpus",
        CORPUS,
        "--labels",
        kb,
        "-o",
        str(tmp_path / "b"),
        "--no-dense",
    )
    assert res.code == 0, res.stderr
    names = sorted(p.name for p in (tmp_path / "b").iterdir() if not p.name.endswith(".json"))
    assert names == [
        "bm25.trec",
        "entities-keyword-exact.jsonl",
        "entities-keyword-fuzzy.jsonl",
        "links-exact.jsonl",
        "links-fuzzy.jsonl",
        "types.jsonl",
    ]
    b = tmp_path / "b"
    assert res.stdout == (
        "systems:\n  - name: baseline-bm25\n"
        f'    version: "ragmeter {__import__("ragmeter").__version__} bm25 default"\n'
        f"    outputs: {{run: {b}/bm25.trec, entities: {b}/entities-keyword-exact.jsonl}}\n"
    )
    ent = [json.loads(x) for x in (b / "entities-keyword-exact.jsonl").read_text().splitlines()]
    assert ent[0] == {
        "id": "s001",
        "type_classification": {"primary_type": "A", "secondary_types": []},
        "entity_linking": [
            {
                "mention_id": "s001-m1",
                "candidates": [{"kb_id": "Q9400391", "score": 1.0}],
                "nil": False,
            }
        ],
    }


def test_json_prints_the_sidecar(tmp_path) -> None:
    res = invoke("baseline", "classify", "--input", GOLD, "-o", str(tmp_path / "t.jsonl"), "--json")
    assert res.code == 0
    meta = json.loads(res.stdout)
    assert meta["baseline"] == "classify" and meta["inputs"][0]["count"] == 60
    assert meta == json.loads((tmp_path / "t.jsonl.meta.json").read_text())


BAD = [
    ('{"id": "d1", "text": "a"}\n{"id": "d1", "text": "b"}\n',
     ":2: document id 'd1' appears twice (first at line 1)"),
    ('{"id": "doc 5", "text": "a"}\n',
     ":1: id 'doc 5' contains whitespace (TREC run files separate fields by whitespace)"),
    ('{"id": "d1", "title": "x"}\n',
     ":1: document 'd1' has no text (expected a key text or contents)"),
    ('{"text": "a"}\n', ":1: no document id (expected a key id, _id or docid)"),
    ('{"id": "d1", "text": "a"\n', ":1: not valid JSON"),
    ("", ": the corpus is empty (expected one JSON document per line)"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "message"), BAD)
def test_bad_corpus_is_one_line_exit_2_nothing_written(tmp_path, body, message) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(body)
    out = tmp_path / "r.trec"
    res = invoke("baseline", "bm25", "--corpus", str(corpus), "--queries", GOLD, "-o", str(out))
    assert res.code == 2
    assert res.stderr.startswith(f"{corpus}{message}") and res.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [corpus]


@pytest.mark.parametrize(("body", "message"), [
    ('{"id": "q1", "text": "a"}\n{"id": "q1", "text": "b"}\n',
     ":2: query id 'q1' appears twice (first at line 1)"),
    ('{"id": "q1"}\n', ":1: query 'q1' has no text"),
    ("q1 no tab\n", ":1: no tab (expected qid<TAB>query text)"),
    ("\n", ": no queries (expected at least one query)"),
])  # fmt: skip
def test_bad_queries(tmp_path, body, message) -> None:
    q = tmp_path / "q.txt"
    q.write_text(body)
    res = invoke(
        "baseline", "bm25", "--corpus", CORPUS, "--queries", str(q), "-o", str(tmp_path / "r.trec")
    )
    assert res.code == 2 and res.stderr.startswith(f"{q}{message}"), res.stderr
    assert not (tmp_path / "r.trec").exists()


def test_bad_label_file_and_usage(tmp_path) -> None:
    kb = tmp_path / "kb.tsv"
    kb.write_text("kb_id\tlabel\tprior\nQ1\tA\t1\nQ2\tB\thigh\n")
    res = invoke(
        "baseline",
        "link",
        "fuzzy",
        "--labels",
        str(kb),
        "--mentions",
        GOLD,
        "-o",
        str(tmp_path / "l.jsonl"),
    )
    assert res.code == 2
    assert res.stderr == f"{kb}:3: prior 'high' is not a number (expected a number)\n"
    res = invoke(
        "baseline",
        "bm25",
        "--corpus",
        CORPUS,
        "--queries",
        GOLD,
        "-o",
        str(tmp_path / "r"),
        "--preset",
        "fast",
    )
    assert res.code == 2 and res.stderr == "--preset 'fast' (expected default or ultrarag)\n"
    assert not (tmp_path / "r").exists()


def test_bm25_system_through_ragmeter_run(tmp_path, monkeypatch) -> None:
    """call: ragmeter.baselines:BM25System gives the numbers of the written run file."""
    import yaml

    import ragmeter

    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLE / "data", tmp_path / "data")
    assert (
        invoke(
            "baseline",
            "bm25",
            "--corpus",
            "data/corpus.jsonl",
            "--queries",
            "data/gold.jsonl",
            "-o",
            "bm25.trec",
        ).code
        == 0
    )
    tasks = {
        "retrieval": {"measures": ["nDCG@10", "RR", "R@100"]},
        "classification": {"profile": "heritage"},
    }
    cfg = {
        "project": "baselines",
        "dataset": {"path": "data/gold.jsonl", "corpus": "data/corpus.jsonl"},
        "systems": [
            {
                "name": "live",
                "version": "1",
                "call": "ragmeter.baselines:BM25System",
                "init": {"corpus": str(tmp_path / "data" / "corpus.jsonl")},
            },
            {"name": "types", "version": "1", "call": "ragmeter.baselines:KeywordClassifier"},
            {"name": "file", "outputs": {"run": "bm25.trec"}},
        ],
        "tasks": tasks,
    }
    (tmp_path / "ragmeter.yaml").write_text(yaml.safe_dump(cfg))
    res = ragmeter.evaluate(tmp_path / "ragmeter.yaml", cache_dir=None, systems_cache=None)
    live = res.results["live"]["retrieval"].aggregates
    assert live == res.results["file"]["retrieval"].aggregates
    assert live["nDCG@10"].value == pytest.approx(0.9702, abs=1e-4)
    assert res.results["types"]["classification"].aggregates["accuracy"].value > 0.5


def test_all_on_the_dev_split_uses_only_its_samples(tmp_path) -> None:
    from ragmeter.io.split_manifest import write_manifest
    from ragmeter.stats.datasets.manifest import build_manifest

    ids = [r["id"] for r in GOLD_ROWS]
    manifest = build_manifest(
        method="manual", seed=0, settings={}, splits={"dev": ids[:12], "test": ids[12:]}
    )
    write_manifest(tmp_path / "m.json", manifest)
    res = invoke(
        "baseline",
        "all",
        "--gold",
        GOLD,
        "--corpus",
        CORPUS,
        "--no-dense",
        "--split",
        "dev",
        "--manifest",
        str(tmp_path / "m.json"),
        "-o",
        str(tmp_path / "b"),
    )
    assert res.code == 0, res.stderr
    qids = {ln.split()[0] for ln in (tmp_path / "b" / "bm25.trec").read_text().splitlines()}
    assert qids == {f"{i}-q1" for i in ids[:12]}
    types = (tmp_path / "b" / "types.jsonl").read_text().splitlines()
    assert [json.loads(t)["id"] for t in types] == ids[:12]
    meta = json.loads((tmp_path / "b" / "bm25.trec.meta.json").read_text())
    assert meta["split"] == "dev" and meta["inputs"][0]["path"] == GOLD
    res = invoke(
        "baseline",
        "all",
        "--gold",
        GOLD,
        "--corpus",
        CORPUS,
        "--no-dense",
        "--split",
        "train",
        "--manifest",
        str(tmp_path / "m.json"),
        "-o",
        str(tmp_path / "c"),
    )
    assert res.code == 2
    assert res.stderr == (
        f"ragmeter baseline all: --split 'train' is not in {tmp_path}/m.json (it has dev, test)\n"
    )
    assert not (tmp_path / "c").exists()


def test_warnings_sidecar_index_reuse_and_jsonl_runs(tmp_path) -> None:
    corpus = write_jsonl(tmp_path / "c.jsonl", [
        {"id": "d1", "text": "the town museum"}, {"id": "d2", "title": "", "text": " "},
        {"id": "d3", "text": "museum of the county archive"},
    ])  # fmt: skip
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tcounty museum\nq2\tthe of and\nq3\tzebra\n")
    args = ("baseline", "bm25", "--corpus", str(corpus), "--queries", str(queries),
            "--index", str(tmp_path / "idx"))  # fmt: skip
    res = invoke(*args, "-o", str(tmp_path / "r.trec"))
    assert res.code == 0
    assert res.stderr.splitlines() == [
        "ragmeter baseline bm25: warning: 1 documents have an empty text and can never be "
        "retrieved",
        "ragmeter baseline bm25: warning: 2 queries have no results (first: q2); evaluate with "
        "ragmeter trec -c so that they count as 0",
    ]
    meta = json.loads((tmp_path / "r.trec.meta.json").read_text())
    assert meta["queries_without_results"] == ["q2", "q3"]
    assert meta["index"] == {"path": str(tmp_path / "idx"), "reused": False}
    res = invoke(*args, "-o", str(tmp_path / "r.jsonl"))
    assert json.loads((tmp_path / "r.jsonl.meta.json").read_text())["index"]["reused"] is True
    res = invoke(*args, "--k1", "1.2", "-o", str(tmp_path / "r2.trec"))
    assert f"warning: index {tmp_path / 'idx'} rebuilt (changed: parameters)" in res.stderr
    assert (tmp_path / "r.jsonl").read_text().splitlines() == [
        json.dumps({"qid": "q1", "retrieved_ids": ["d3", "d1"],
                    "scores": [float(ln.split()[4]) for ln in
                               (tmp_path / "r.trec").read_text().splitlines()]})
    ]  # fmt: skip
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d3 1\n")
    trec = invoke("trec", "-c", "-m", "map", str(qrels), str(tmp_path / "r.trec"))
    jsonl = invoke(
        "trec", "-c", "-m", "map", "--run-format", "jsonl", str(qrels), str(tmp_path / "r.jsonl")
    )
    assert trec.stdout.split()[-1] == jsonl.stdout.split()[-1] == f"{0.5 / 3:.4f}"


def test_help_and_import_do_not_import_bm25s_or_rapidfuzz() -> None:
    import subprocess
    import sys

    from tests.helpers import REPO

    code = (
        "import sys, ragmeter, ragmeter.baselines\n"
        "from ragmeter.cli.entry import main\n"
        "try:\n    main(['baseline', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('bm25s', 'rapidfuzz', 'Stemmer') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
                          timeout=120)  # fmt: skip
    assert proc.stdout.splitlines()[-1] == "[]", proc.stderr
    assert "hybrid" in proc.stdout and "classify" in proc.stdout
