"""``ragmeter compare RUN RUN ...`` on stored runs and saved results folders (docs/stats.md).

The heritage example is run once per module into a SQLite store in a temporary folder; every
number the command prints is checked against :func:`ragmeter.stats.compare` called directly on
:meth:`Store.sample_values`, against ``scipy.stats.ttest_rel`` for the t-test, and against the
runner's own comparison rows and aggregates.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import scipy.stats
import yaml

from ragmeter.stats import compare
from ragmeter.store import open_store
from tests.helpers import REPO, invoke

EXAMPLE = REPO / "examples" / "heritage"
BM25, HYBRID = "bm25-v3", "hybrid-v1"


class Heritage:
    def __init__(self, root: Path, url: str | None = None) -> None:
        self.root = root
        self.url = url or f"sqlite:///{root / 'runs.db'}"
        res = invoke(*self._run_args(EXAMPLE / "ragmeter.yaml"))
        assert res.code == 0, res.stderr
        with open_store(self.url) as store:
            self.ids = store.resolve("latest")
        self.evaluation = self.ids[0].rsplit("-" + BM25, 1)[0]
        self.folder = root / "results" / self.evaluation

    def _run_args(self, config: Path) -> list[str]:
        return [
            "run",
            str(config),
            "--store",
            self.url,
            "--results-dir",
            str(self.root / "results"),
            "--no-cache",
            "--quiet",
            "--json",
        ]

    def run_variant(self, name: str, edit: Any) -> str:
        """Run a retrieval-only copy of the example (absolute paths); return its first run id."""
        cfg = yaml.safe_load((EXAMPLE / "ragmeter.yaml").read_text(encoding="utf-8"))
        cfg["dataset"]["path"] = str(EXAMPLE / cfg["dataset"]["path"])
        for s in cfg["systems"]:
            s["outputs"] = {"run": str(EXAMPLE / s["outputs"]["run"])}
        cfg["tasks"] = {"retrieval": {"measures": ["nDCG@10", "AP"]}}
        cfg.pop("gates")
        cfg.pop("stratify_by")
        edit(cfg)
        path = self.root / f"{name}.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        res = invoke(*self._run_args(path))
        assert res.code == 0, res.stderr
        with open_store(self.url) as store:
            return store.resolve("latest")[0]

    def values(self, run_id: str, task: str, metric: str) -> dict[str, float]:
        with open_store(self.url) as store:
            return store.sample_values(run_id, task, metric)

    def scores(self, *labels: str) -> dict[str, dict[str, dict[str, float]]]:
        out: dict[str, dict[str, dict[str, float]]] = {}
        for run_id, system in zip(self.ids, (BM25, HYBRID), strict=True):
            out[system] = {}
            for label in labels:
                task, metric = label.split(".", 1)
                out[system][label] = self.values(run_id, task, metric)
        return out


@pytest.fixture(scope="module")
def heritage(tmp_path_factory: pytest.TempPathFactory) -> Heritage:
    return Heritage(tmp_path_factory.mktemp("heritage"))


def cli_json(*args: str) -> dict[str, Any]:
    res = invoke("compare", *args, "--json")
    assert res.code == 0, res.stderr
    return json.loads(res.stdout)


def pairs_of(data: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(p["system_a"], p["system_b"], p["metric"]): p for p in data["pairs"]}


def assert_same_report(got: dict[str, Any], report: Any) -> None:
    want = report.to_dict()
    assert got["model_names"] == want["model_names"]
    assert got["metrics"] == want["metrics"]
    for system in want["model_names"]:
        assert got[system]["scores"] == want[system]["scores"]
        assert got[system]["comparisons"] == want[system]["comparisons"]
        assert got[system]["comparisons_adjusted"] == want[system]["comparisons_adjusted"]
        assert got[system]["win_tie_loss"] == want[system]["win_tie_loss"]


LABELS = ("retrieval.nDCG@10", "retrieval.RR", "answers.f1")


def test_store_runs_equal_compare_on_sample_values(heritage):
    data = cli_json("latest", "--store", heritage.url, *(f"-m{m}" for m in LABELS))
    scores = heritage.scores(*LABELS)
    assert_same_report(data, compare(scores, metrics=list(LABELS)))
    assert data["inputs"]["mode"] == "stored"
    assert data["inputs"]["runs"][BM25]["run_id"] == heritage.ids[0]
    # the means are the stored aggregates, and the raw p-values the runner's own (same test,
    # seed and resamples on the same 53 retrieval samples)
    with open_store(heritage.url) as store:
        aggs = {(r["task"], r["metric"]): r["value"] for r in store.metrics(heritage.ids[1])}
        runner = {(c["task"], c["metric"]): c for c in store.comparisons(heritage.ids[1])}
    for label in LABELS:
        task, metric = label.split(".", 1)
        assert math.isclose(data[HYBRID]["scores"][label], aggs[(task, metric)], rel_tol=1e-12)
        assert data[BM25]["comparisons"][HYBRID][label] == runner[(task, metric)]["p_value"]
    pair = pairs_of(data)[(BM25, HYBRID, "retrieval.nDCG@10")]
    assert pair["p_value"] == 0.0017 and pair["significant"] is True
    assert math.isclose(
        pair["result"]["mean_diff"], 0.6872739183844563 - 0.9018071798869203, abs_tol=1e-12
    )
    assert pair["win_tie_loss"] == {"W": 6, "T": 25, "L": 22}


def test_a_postgresql_store_gives_the_sqlite_numbers(heritage, pg_url, tmp_path):
    on_pg = Heritage(tmp_path, pg_url)
    args = ("latest", *(f"-m{m}" for m in LABELS))
    got = cli_json(*args, "--store", on_pg.url)
    want = cli_json(*args, "--store", heritage.url)
    assert got.pop("inputs")["runs"][HYBRID]["run_id"] == on_pg.ids[1]
    want.pop("inputs")
    assert got == want


def test_t_test_equals_scipy_ttest_rel(heritage):
    data = cli_json(*heritage.ids, "--store", heritage.url, "--test", "t", "-m", "answers.f1")
    a, b = (heritage.values(i, "answers", "f1") for i in heritage.ids)
    assert sorted(a) == sorted(b) and len(a) == 53
    ids = sorted(a)
    want = scipy.stats.ttest_rel([a[i] for i in ids], [b[i] for i in ids])
    pair = pairs_of(data)[(BM25, HYBRID, "answers.f1")]
    assert math.isclose(pair["p_value"], float(want.pvalue), rel_tol=1e-9)
    assert math.isclose(pair["result"]["statistic"], float(want.statistic), rel_tol=1e-9)
    assert pair["result"]["test"] == "t" and pair["result"]["n"] == 53


def test_results_folder_gives_the_store_numbers(heritage):
    args = ("-m", "retrieval.nDCG@10", "-m", "answers.f1", "--test", "wilcoxon")
    from_store = cli_json("latest", "--store", heritage.url, *args)
    from_folder = cli_json(str(heritage.folder), *args)
    from_store.pop("inputs")
    inputs = from_folder.pop("inputs")
    assert from_folder == from_store
    assert inputs["runs"][HYBRID]["source"] == str(heritage.folder)
    # one system of a folder, by name or run id, in the order given
    swapped = cli_json(str(heritage.folder / HYBRID), str(heritage.folder / heritage.ids[0]), *args)
    assert swapped["model_names"] == [HYBRID, BM25]
    assert swapped[HYBRID]["comparisons"][BM25] == from_store[BM25]["comparisons"][HYBRID]


def test_missing_policies(heritage):
    label = "grounded.precision"
    scores = heritage.scores(label)
    a, b = scores[BM25][label], scores[HYBRID][label]
    assert set(b) - set(a) == {"s005-q1", "s060-q1"}
    common = set(a) & set(b)
    base = ("latest", "--store", heritage.url, "-m", label)
    res = invoke("compare", *base)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        "ragmeter compare: metric 'grounded.precision': queries are not the same for every "
        "system: system 'bm25-v3' lacks 2 ('s005-q1', 's060-q1'); system 'hybrid-v1' lacks 4 "
        "('s016-q1', 's032-q1', 's048-q1', ... 1 more) (use --missing fill or --missing "
        "intersect)\n"
    )
    inter = cli_json(*base, "--missing", "intersect")
    assert_same_report(inter, compare(scores, missing="intersect"))
    assert pairs_of(inter)[(BM25, HYBRID, label)]["result"]["n"] == len(common) == 51
    want = sum(a[i] for i in common) / len(common)
    assert math.isclose(inter[BM25]["scores"][label], want, rel_tol=1e-12)
    filled = cli_json(*base, "--missing", "fill")
    assert_same_report(filled, compare(scores, missing="fill", fill_value=0.0))
    union = set(a) | set(b)
    assert math.isclose(filled[BM25]["scores"][label], sum(a.values()) / len(union), rel_tol=1e-12)
    half = cli_json(*base, "--missing", "fill", "--fill-value", "0.5")
    assert math.isclose(
        half[BM25]["scores"][label], (sum(a.values()) + 0.5 * 2) / len(union), rel_tol=1e-12
    )


def test_default_metrics_and_output_formats(heritage):
    data = cli_json("latest", "--store", heritage.url, "--missing", "intersect")
    assert "retrieval.nDCG@10" in data["metrics"] and "answers.f1" in data["metrics"]
    assert not any(m.startswith(("judge.", "ner.")) for m in data["metrics"])
    assert data["inputs"]["skipped"]["judge.faithfulness"] == (
        f"run {heritage.ids[0]} has no scored samples of judge.faithfulness (needs_llm 60)"
    )
    base = ("latest", "--store", heritage.url, "-m", "retrieval.nDCG@10")
    table = invoke("compare", *base)
    assert table.code == 0, table.stderr
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table.stdout.splitlines()]
    assert ["a", "bm25-v3", "0.687"] in rows and ["b", "hybrid-v1", "0.902ᵃ"] in rows
    md = invoke("compare", *base, "--format", "markdown")
    assert md.code == 0 and "| b | hybrid-v1 | 0.902ᵃ |" in md.stdout
    ultra = invoke("compare", *base, "--format", "ultrarag")
    assert ultra.code == 0, ultra.stderr
    assert json.loads(ultra.stdout)  # parses
    # lower-is-better metrics keep their direction in the markers
    refusal = cli_json(*base[:3], "-m", "grounded.under_refusal", "--missing", "intersect")
    assert refusal["settings"]["directions"] == {"grounded.under_refusal": "lower"}


def test_metric_names_resolve_like_the_registry(heritage):
    base = ("latest", "--store", heritage.url)
    for spelling in ("retrieval.ndcg@10", "nDCG@10", "retrieval.ndcg_cut.10"):
        assert cli_json(*base, "-m", spelling)["metrics"] == ["retrieval.nDCG@10"]
    corpus = invoke("compare", *base, "-m", "ner.overall.strict.f1", "--json")
    assert corpus.code == 0
    assert "note: ner.overall.strict.f1 is corpus-level" in corpus.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("nosuch", "latest"),
            "ragmeter compare: no run 'nosuch' in the store {url} (see ragmeter runs list)",
        ),
        (
            ("latest", "-m", "retrieval.nDGC@10"),
            "ragmeter compare: no metric 'retrieval.nDGC@10' in the runs (name it task.metric, "
            "e.g. answers.em); did you mean 'retrieval.nDCG@10', 'retrieval.R@10', "
            "'retrieval.P@5'?",
        ),
        (
            ("latest", "-m", "ndgc10"),
            "ragmeter compare: no metric 'ndgc10' in the runs (name it task.metric, e.g. "
            "answers.em); did you mean 'retrieval.nDCG@10'?",
        ),
        (
            ("latest", "-m", "precision"),
            "ragmeter compare: metric 'precision' is ambiguous: name answers.precision or "
            "grounded.precision",
        ),
        (
            ("latest", "-m", "judge.faithfulness"),
            "ragmeter compare: run {bm25} has no scored samples of judge.faithfulness "
            "(needs_llm 60)",
        ),
        (
            ("{bm25}",),
            "ragmeter compare: {bm25} names 1 run; compare needs at least 2",
        ),
        (
            ("latest", "--ultrarag"),
            "ragmeter compare: --ultrarag scores TREC runs; for stored runs use --format ultrarag",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(heritage, args, message):
    fill = {"url": heritage.url, "bm25": heritage.ids[0]}
    res = invoke("compare", *(a.format(**fill) for a in args), "--store", heritage.url)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == message.format(**fill) + "\n"


def test_bad_paths_and_missing_store(heritage, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = invoke("compare", "nope/run", "latest")
    assert (res.code, res.stderr) == (2, "nope/run: no such file, results folder or stored run\n")
    res = invoke("compare", "latest")
    assert res.code == 2
    assert res.stderr == (
        "ragmeter compare: no results store at .ragmeter/ragmeter.db (ragmeter run writes one; "
        "or pass --store URL)\n"
    )
    assert not (tmp_path / ".ragmeter").exists()  # reading never creates a store
    (tmp_path / "empty").mkdir()
    res = invoke("compare", "empty", str(heritage.folder))
    assert res.stderr == (
        "empty: not a results folder (no summary.json; ragmeter run writes "
        "results/<evaluation-id>/)\n"
    )
    res = invoke("compare", str(heritage.folder / "nope"), str(heritage.folder))
    assert res.stderr == (
        f"{heritage.folder}: no system or run 'nope' in this results folder "
        "(it has bm25-v3, hybrid-v1)\n"
    )


def test_metric_in_one_run_only_and_same_system_names(heritage):
    def bump(cfg: dict[str, Any]) -> None:
        cfg["systems"][0]["version"] = "3.2.0"

    new_bm25 = heritage.run_variant("variant", bump)
    assert new_bm25 != heritage.ids[0] and new_bm25.endswith(BM25)
    res = invoke(
        "compare", heritage.ids[0], new_bm25, "--store", heritage.url, "-m", "retrieval.AP"
    )
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == (
        f"ragmeter compare: metric retrieval.AP is in run {new_bm25} but not in run "
        f"{heritage.ids[0]} (compare needs it in every run)\n"
    )
    data = cli_json(heritage.ids[0], new_bm25, "--store", heritage.url, "-m", "nDCG@10")
    assert data["model_names"] == ["bm25-v3@3.1.0", "bm25-v3@3.2.0"]
    # the same outputs scored twice: identical values, every pair a tie
    wtl = data["bm25-v3@3.1.0"]["win_tie_loss"]["bm25-v3@3.2.0"]["retrieval.nDCG@10"]
    assert wtl == {"W": 0, "T": 53, "L": 0}
    named = cli_json(
        heritage.ids[0],
        new_bm25,
        "--store",
        heritage.url,
        "-m",
        "nDCG@10",
        "--name",
        "old",
        "--name",
        "new",
    )
    assert named["model_names"] == ["old", "new"]


def test_trec_mode_still_chosen_for_a_qrels_file(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    runs = []
    for name, docs in (("a", ("d1", "d2")), ("b", ("d2", "d1"))):
        p = tmp_path / f"{name}.run"
        p.write_text(
            "".join(
                f"q{i} Q0 {d} {r} {9 - r} {name}\n" for i in (1, 2) for r, d in enumerate(docs)
            ),
            encoding="utf-8",
        )
        runs.append(str(p))
    data = cli_json(str(qrels), *runs, "-m", "RR")
    assert data["inputs"]["mode"] == "trec"
    assert data["a"]["scores"]["RR"] == 0.75 and data["b"]["scores"]["RR"] == 0.75
