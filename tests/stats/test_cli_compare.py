"""``ragmeter compare`` on per-sample files: outputs, layouts and bad input."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.helpers import invoke, run_cli
from tests.stats.conftest import close, load

SIG15 = load("compare_systems.json")["TV-SIG-15"]


@pytest.fixture
def systems(tmp_path):
    inp = SIG15["input"]
    paths = {}
    for s, vals in inp["scores"].items():
        p = tmp_path / f"{s}.jsonl"
        with p.open("w") as fh:
            for q, x in zip(inp["query_ids"], vals, strict=True):
                fh.write(json.dumps({"id": q, "status": "ok", "ndcg@10": x, "flags": []}) + "\n")
        paths[s] = str(p)
    return paths


def test_json_output_is_the_report_dict(systems):
    res = invoke(
        "compare", "--per-sample", systems["bm25"], systems["hybrid"], systems["dense"], "--json"
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["model_names"] == ["bm25", "hybrid", "dense"]
    assert data["settings"]["test"] == "randomization" and data["settings"]["correction"] == "holm"
    assert data["inputs"]["layouts"] == dict.fromkeys(["bm25", "hybrid", "dense"], "jsonl-wide")
    pairs = {(p["system_a"], p["system_b"]): p for p in data["pairs"]}
    for want in SIG15["expected"]["pairs"]:
        got = pairs[(want["A"], want["B"])]
        assert close(got["p_value"], want["p_value"])
        assert close(got["p_adjusted"], want["p_adjusted_holm"])
        assert got["result"]["seed"] == 42 and got["result"]["method"] == "exact"


def test_table_output(systems):
    res = run_cli("compare", "--per-sample", systems["bm25"], systems["hybrid"], systems["dense"])
    assert res.code == 0, res.stderr
    assert "0.593ᵃᶜ" in res.stdout
    assert "randomization test (exact), Holm per metric, alpha 0.05, 12 queries, seed 42" in (
        res.stdout
    )
    assert "0/0/12" in res.stdout  # the pairs table


def test_ultrarag_latex_markdown_and_output_file(systems, tmp_path):
    res = invoke(
        "compare", "--per-sample", systems["hybrid"], systems["bm25"], "--format", "ultrarag"
    )
    assert res.code == 0
    want = load("compare_systems.json")["TV-SIG-16"]["expected"]["json"]
    got = json.loads(res.stdout)
    assert got["ndcg@10"]["significant"] is True
    assert close(got["ndcg@10"]["diff"], want["ndcg@10"]["diff"])
    out = tmp_path / "table.tex"
    res = invoke(
        "compare", "--per-sample", systems["bm25"], systems["hybrid"], "--latex", "-o", str(out)
    )
    assert res.code == 0 and "\\begin{tabular}" in res.stdout
    assert out.read_text() == res.stdout
    res = invoke(
        "compare",
        "--per-sample",
        systems["bm25"],
        systems["hybrid"],
        "--format",
        "markdown",
        "--test",
        "t",
        "--correction",
        "none",
    )
    assert res.code == 0 and res.stdout.startswith("| # | System | ndcg@10 |")
    assert "paired Student's t-test, no correction" in res.stdout


def test_ranx_preset_and_names(systems):
    res = invoke(
        "compare",
        "--per-sample",
        systems["bm25"],
        systems["hybrid"],
        "--ranx",
        "--name",
        "A",
        "--name",
        "B",
        "--json",
    )
    data = json.loads(res.stdout)
    assert data["stat_test"] == "student" and data["settings"]["alpha"] == 0.01
    assert data["model_names"] == ["A", "B"]


def test_layouts_long_result_ultrarag_trec_eval_and_gzip(tmp_path):
    ids = [f"q{i}" for i in range(8)]
    a = [0.1, 0.4, 0.5, 0.9, 0.3, 0.6, 0.2, 0.8]
    b = [0.0, 0.3, 0.5, 0.7, 0.2, 0.6, 0.1, 0.5]
    long = tmp_path / "long.jsonl"
    long.write_text(
        "".join(
            json.dumps({"id": q, "metric": "faithfulness", "value": x, "status": "ok"}) + "\n"
            for q, x in zip(ids, a, strict=True)
        )
    )
    from ragmeter.result import Result

    result = tmp_path / "result.json"
    result.write_text(Result.from_columns("judge", ids, {"faithfulness": b}).to_json())
    ultra = tmp_path / "ultra.json"
    ultra.write_text(json.dumps({"faithfulness": a, "avg_faithfulness": sum(a) / 8}))
    trec = tmp_path / "q.txt"
    trec.write_text(
        "".join(f"faithfulness\t{q}\t{x}\n" for q, x in zip(ids, b, strict=True))
        + "faithfulness\tall\t0.3625\n"
    )
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(long.read_bytes()))
    res = invoke(
        "compare",
        "--per-sample",
        str(long),
        str(result),
        str(trec),
        str(gz),
        "-m",
        "faithfulness",
        "--json",
    )
    assert res.code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["inputs"]["layouts"] == {
        "long": "jsonl-long",
        "result": "result",
        "q": "trec_eval",
        "a": "jsonl-long",
    }
    # UltraRAG lists are aligned by position: ids "0".."7", not q0..q7
    res = invoke("compare", "--per-sample", str(ultra), str(long), "--json")
    assert res.code == 2 and "queries are not the same for every system" in res.stderr


def test_unscored_samples_are_missing(tmp_path):
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text('{"id": "1", "f1": 0.5}\n{"id": "2", "f1": 0.7}\n{"id": "3", "f1": 0.2}\n')
    b.write_text(
        '{"id": "1", "f1": 0.4}\n{"id": "2", "status": "no_gold", "f1": null}\n'
        '{"id": "3", "f1": 0.1}\n'
    )
    res = invoke("compare", "--per-sample", str(a), str(b))
    assert res.code == 2
    assert "metric 'f1': queries are not the same for every system: system 'b' lacks 1 ('2')" in (
        res.stderr
    )
    res = invoke("compare", "--per-sample", str(a), str(b), "--missing", "intersect", "--json")
    data = json.loads(res.stdout)
    assert data["pairs"][0]["result"]["n"] == 2
    assert data["inputs"]["unscored"] == {"b": {"f1": {"no_gold": 1}}}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"id": "1", "f1": 0.5}\n{"id": "2", "f1": "high"}\n',
            'a.jsonl:2: f1 is "high" (expected a number or null)',
        ),
        (
            '{"id": "1", "f1": "high"}\n{"id": "2", "f1": 0.5}\n',
            "a.jsonl:2: f1 is a number here but text at line 1 (expected one type per key)",
        ),
        (
            '{"id": "1", "f1": 0.5}\n{"id": "1", "f1": 0.6}\n',
            "a.jsonl:2: sample '1' has two values for metric 'f1' (first at line 1)",
        ),
        ('{"f1": 0.5, "id": null}\n', "a.jsonl:1: no 'id' (expected one id per sample)"),
        ('{"id": "1", "f1": NaN}\n', "a.jsonl:1: NaN is not valid JSON"),
        ("", "a.jsonl: no data (expected per-sample values)"),
        ('{"id": "1", "status": "great", "f1": 1}\n', "a.jsonl:1: status 'great' is not a"),
        ("ndcg q1\n", "a.jsonl:1: 2 fields (expected 'measure qid value'"),
        (
            '{"id": "1", "f1": 0.5}\n{"id": "2", "metric": "f1", "value": 1}\n',
            "a.jsonl:2: a long row in a wide file",
        ),
    ],
)
def test_bad_per_sample_files(tmp_path, content, message):
    a = tmp_path / "a.jsonl"
    a.write_text(content)
    b = tmp_path / "b.jsonl"
    b.write_text('{"id": "1", "f1": 0.4}\n')
    res = invoke("compare", "--per-sample", str(a), str(b))
    assert res.code == 2
    assert res.stderr.startswith(f"{a.parent}/{message}") or res.stderr.startswith(message)
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--test", "mcnemar"], "ragmeter compare: --test 'mcnemar' is not one of randomization"),
        (["--json", "--latex"], "ragmeter compare: choose one output format, not json and latex"),
        (["-m", "f2"], "a.jsonl: no metric 'f2' (the file has: f1)\n"),
        (["-m", "F1"], None),
        (["--alpha", "2"], "ragmeter compare: alpha=2.0 (expected a number between 0 and 1"),
        (["--name", "x"], "ragmeter compare: 1 --name values for 2 systems"),
        (["--ranx", "--ultrarag"], "ragmeter compare: --ranx and --ultrarag are different presets"),
    ],
)
def test_usage_errors(tmp_path, args, message):
    a = tmp_path / "a.jsonl"
    a.write_text('{"id": "1", "f1": 0.5}\n{"id": "2", "f1": 0.6}\n')
    b = tmp_path / "b.jsonl"
    b.write_text('{"id": "1", "f1": 0.4}\n{"id": "2", "f1": 0.6}\n')
    res = invoke("compare", "--per-sample", str(a), str(b), *args)
    if message is None:  # case-insensitive match of a metric name
        assert res.code == 0, res.stderr
        return
    assert res.code == 2 and message in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1


def test_metric_suggestions(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text('{"id": "1", "rouge-l": 0.5}\n{"id": "2", "rouge-l": 0.6}\n')
    res = invoke(
        "compare", "--per-sample", str(a), str(a), "--name", "x", "--name", "y", "-m", "rouge_l"
    )
    assert res.code == 2 and res.stderr.endswith("did you mean 'rouge-l'?\n")


def test_trec_mode_without_the_engine_or_with_too_few_runs(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    res = invoke("compare", str(qrels), "run.txt")
    assert res.code == 2 and "expected QRELS and at least 2 runs" in res.stderr
    # a QRELS file that does not exist is not taken for a stored run
    res = invoke("compare", "qrels.txt", "a.run", "b.run")
    assert res.stderr == "qrels.txt: no such file, results folder or stored run\n"
    res = invoke("compare", "--per-sample", "only.jsonl")
    assert res.code == 2 and "needs at least 2 files" in res.stderr


def test_per_sample_output_of_ragmeter_answers(tmp_path):
    """The files `ragmeter answers` writes (--per-sample JSONL and its UltraRAG-shaped stdout)
    are read as they are."""
    golds = ["Paris", "Shakespeare", "Jupiter", "100 degrees", "George Orwell"] * 3
    outs = {}
    for name, wrong in (("v1", {0, 2, 4, 6, 8, 10}), ("v2", {1})):
        src = tmp_path / f"{name}.jsonl"
        with src.open("w") as fh:
            for i, g in enumerate(golds):
                pred = "no idea" if i in wrong else g
                fh.write(
                    json.dumps({"id": f"q{i}", "golden_answers": [g], "pred_answer": pred}) + "\n"
                )
        ps = tmp_path / f"{name}.ps.jsonl"
        res = invoke("answers", str(src), "-m", "em", "-m", "f1", "--per-sample", str(ps))
        assert res.code == 0, res.stderr
        stdout = tmp_path / f"{name}.out.json"
        stdout.write_text(res.stdout)
        outs[name] = (ps, stdout)
    for pick in (0, 1):
        res = invoke(
            "compare",
            "--per-sample",
            str(outs["v1"][pick]),
            str(outs["v2"][pick]),
            "--name",
            "v1",
            "--name",
            "v2",
            "-m",
            "em",
            "--json",
        )
        assert res.code == 0, res.stderr
        data = json.loads(res.stdout)
        assert data["v1"]["scores"]["em"] == 9 / 15 and data["v2"]["scores"]["em"] == 14 / 15
        assert data["v2"]["win_tie_loss"]["v1"]["em"] == {"W": 6, "T": 8, "L": 1}


def test_option_choices_are_the_engines(systems):
    """The command offers and checks exactly the engine's tuples, and each one runs."""
    from ragmeter.stats import dispatch
    from ragmeter.stats_choices import ALTERNATIVES, CI_METHODS, CORRECTIONS, TESTS

    assert (dispatch.TESTS, dispatch.CORRECTIONS) == (TESTS, CORRECTIONS)
    import typer

    from ragmeter.cli.app import build_app

    command = typer.main.get_command(build_app()).commands["compare"]
    helps = {p.opts[-1]: p.help for p in command.params if getattr(p, "help", None)}
    assert helps["--test"] == "randomization | t | wilcoxon | bootstrap."
    assert helps["--alternative"] == " | ".join(ALTERNATIVES) + "."
    assert helps["--ci"] == "Bootstrap CI of each difference: " + " | ".join(CI_METHODS) + "."
    assert helps["--correction"] == "holm (default) | bonferroni | bh | by | none."
    bad = invoke(
        "compare", "--per-sample", systems["bm25"], systems["dense"], "--ci", "studentized"
    )
    assert bad.code == 2
    assert bad.stderr.startswith(
        "ragmeter compare: --ci 'studentized' is not one of bca, percentile"
    )
    pair = ["--per-sample", systems["bm25"], systems["dense"], "--json", "--n-resamples", "99"]
    for option, choices in (("--test", TESTS), ("--correction", CORRECTIONS)):
        for choice in choices:
            res = invoke("compare", *pair, option, choice)
            assert res.code == 0, (option, choice, res.stderr)
            settings = json.loads(res.stdout)["settings"]
            assert settings[option[2:]] == choice


def test_ultrarag_preset_uses_the_retrieval_grammars_cutoffs():
    from ragmeter.cli.compare_scores import ultrarag_metrics
    from ragmeter.retrieval.names import ULTRARAG_KS

    pairs = ultrarag_metrics()
    assert ULTRARAG_KS == (1, 5, 10, 20, 50, 100)
    assert pairs[:5] == [
        ("map", "map"),
        ("mrr", "recip_rank"),
        ("ndcg@1", "ndcg_cut.1"),
        ("P@1", "P.1"),
        ("recall@1", "recall.1"),
    ]
    assert len(pairs) == 2 + 3 * len(ULTRARAG_KS) and pairs[-1] == ("recall@100", "recall.100")
