"""--stream equals in-memory evaluation; JSONL and TSV inputs; source breakdown; CLI options."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.retrieval import evaluate, evaluate_stream, source_breakdown
from tests.helpers import CONFORMANCE, invoke, run_cli

DATA = CONFORMANCE / "trec_eval"


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batch=st.sampled_from([1, 2, 3, 7, 50, 499, 500, 501, 1499, 10_000]),
    judged_only=st.booleans(),
    complete=st.booleans(),
)
def test_stream_equals_in_memory(batch, judged_only, complete):
    kw = {"judged_only": judged_only, "complete": complete, "max_docs": 200}
    a = evaluate(DATA / "qrels.test", DATA / "results.test", ["all_trec"], **kw)
    b = evaluate_stream(
        DATA / "qrels.test", DATA / "results.test", ["all_trec"], batch_rows=batch, **kw
    )
    assert a.to_trec(queries=True) == b.to_trec(queries=True)
    assert a.warnings == b.warnings


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "10", "x"]),
            st.sampled_from(["a", "b", "c", "dd", "e"]),
            st.sampled_from([0.0, 1.0, 2.5, -1.0]),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    ),
    batch=st.integers(1, 12),
)
def test_stream_equals_in_memory_random(tmp_path_factory, rows, batch):
    rows = sorted(rows, key=lambda r: r[0])  # grouped by query
    d = tmp_path_factory.mktemp("s")
    run = d / "run.txt"
    run.write_text("".join(f"{q} Q0 {doc} {i} {s} t\n" for i, (q, doc, s) in enumerate(rows)))
    qrels = {"1": {"a": 1, "b": 0, "e": 2}, "2": {"dd": 1, "c": -1}, "10": {"a": 0}}
    try:
        a = evaluate(qrels, run, ["all_trec", "Judged@3", "RR@2"])
    except Exception as exc:  # no overlap: both modes must say so
        with pytest.raises(type(exc)):
            evaluate_stream(qrels, run, ["all_trec"], batch_rows=batch)
        return
    b = evaluate_stream(qrels, run, ["all_trec", "Judged@3", "RR@2"], batch_rows=batch)
    assert a.to_trec(queries=True) == b.to_trec(queries=True)


def test_stream_rejects_an_ungrouped_run():
    res = invoke(
        "trec",
        "--stream",
        "--batch-rows",
        "100",
        str(DATA / "qrels.test"),
        str(DATA / "results.trunc"),
    )
    assert res.code == 2
    assert res.stderr == (
        f"{DATA / 'results.trunc'}:3: query '301' appears again after other queries; "
        "--stream needs the run grouped by query (LC_ALL=C sort -s -k1,1 run > run.sorted), "
        "or add --spill DIR to evaluate an unsorted run in bounded memory, or drop --stream\n"
    )


@pytest.mark.parametrize("batch", range(1, 10))
@pytest.mark.parametrize(
    ("order", "line"),
    [("aaabbba", 7), ("aaabbbcccb", 10), ("abbbbbbba", 9), ("aaaaaaaaaba", 11)],
)
def test_stream_finds_a_regrouped_query_at_any_chunk_boundary(write, batch, order, line):
    """Wherever the chunks fall, a query that comes back is reported at its first line back."""
    run = write("run.txt", "".join(f"{q} Q0 d{i} 1 {100 - i} r\n" for i, q in enumerate(order)))
    with pytest.raises(InputError, match=f"^{run}:{line}: query '{order[line - 1]}' appears"):
        evaluate_stream(write("q.txt", "a 0 d0 1\n"), run, ["P.5"], batch_rows=batch)


def test_stream_from_gzip_stdin():
    data = gzip.compress((DATA / "results.test").read_bytes())
    res = run_cli(
        "trec",
        "--stream",
        "--batch-rows",
        "97",
        "-m",
        "all_trec",
        str(DATA / "qrels.test"),
        "-",
        stdin=data,
    )
    assert res.code == 0, res.stderr
    assert res.stdout == (DATA / "out.test.a").read_text()


def test_stream_errors_name_the_physical_line(write):
    body = "".join(f"q1 Q0 d{i} {i} {100 - i} r\n" for i in range(50)) + "q1 Q0 d99 51 nan r\n"
    rp = write("run.txt", "# c\n\n" + body)
    res = invoke("trec", "--stream", "--batch-rows", "8", write("q.txt", "q1 0 d1 1\n"), rp)
    assert res.code == 2
    assert res.stderr.startswith(f"{rp}:53: score 'nan' is not finite")


@pytest.mark.parametrize("how", ["file", "gzip file", "stdin"])
def test_stream_reads_mapped_and_read_inputs_alike(write, how):
    """A plain file is memory-mapped; gzip and stdin are read: the output is the same."""
    raw = (DATA / "results.test").read_bytes()
    if how == "gzip file":
        run, stdin = write("run.gz", gzip.compress(raw)), None
    elif how == "stdin":
        run, stdin = "-", raw
    else:
        run, stdin = str(DATA / "results.test"), None
    args = ["--stream", "--batch-rows", "61", "-m", "all_trec", str(DATA / "qrels.test"), run]
    res = run_cli("trec", *args, stdin=stdin)
    assert res.code == 0, res.stderr
    assert res.stdout == (DATA / "out.test.a").read_text()


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_stream_lines_longer_than_a_chunk(write, how):
    """A chunk is ~40 bytes per batch row; a longer line is read whole, on either path."""
    docs = [f"doc{i}-" + "x" * (37 * i) for i in range(12)]
    text = "".join(f"q{i % 3} Q0 {d} {i} {50 - i} r\n" for i, d in enumerate(docs))
    text = "".join(sorted(text.splitlines(keepends=True), key=lambda ln: ln[:2]))
    run = write("run.txt", text.rstrip("\n"))  # and no newline at the end
    q = write("q.txt", "".join(f"q{i % 3} 0 {d} {i % 2}\n" for i, d in enumerate(docs)))
    expected = invoke("trec", "-q", "-m", "all_trec", q, run)
    assert expected.code == 0, expected.stderr
    args = ["-q", "-m", "all_trec", "--stream", "--batch-rows", "1", q]
    if how == "file":
        res = run_cli("trec", *args, run)
    else:
        res = run_cli("trec", *args, "-", stdin=(text.rstrip("\n")).encode())
    assert res.code == 0, res.stderr
    assert res.stdout == expected.stdout


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_stream_messages_count_lines_across_chunks(write, how):
    """Line numbers in later chunks: counted lazily on a map, as read from stdin."""
    lines = ["# c\n", "\n"]
    lines += [f"q{q} Q0 d{i} {i} {100 - i} r\n" for q in range(1, 30) for i in range(20)]
    good = "".join(lines)
    q = write("q.txt", "q1 0 d1 1\n")

    def check(text: str, expected: str) -> None:
        path = write("run.txt", text)
        run, stdin = (path, None) if how == "file" else ("-", text.encode())
        res = run_cli("trec", "--stream", "--batch-rows", "8", q, run, stdin=stdin)
        assert res.code == 2
        assert res.stderr.startswith(f"{path if how == 'file' else '<stdin>'}:{expected}")

    bad = lines.copy()
    bad[401] = "q20 Q0 d99 1 abc r\n"
    check("".join(bad), "402: score 'abc' is not a number")
    check(good + "q3 Q0 d5 1 1 r\n", "583: query 'q3' appears again after other queries")


def test_jsonl_run_and_qrels(write):
    run = write(
        "trace.jsonl",
        "\n".join(
            json.dumps(o)
            for o in [
                {"qid": "q1", "retrieved_ids": ["d3", "d1", "d2"]},
                {"qid": "q2", "retrieved_ids": ["d9", "d4"], "scores": [0.2, 0.9]},
            ]
        ),
    )
    qrels = write(
        "gold.jsonl",
        '{"qid": "q1", "gold_citations": ["d1", "d2"]}\n'
        '{"qid": "q2", "gold_citations": {"d4": 2}}\n'
        '{"qid": "q3", "gold_citations": []}\n',
    )
    res = invoke(
        "trec",
        "--run-format",
        "jsonl",
        "--qrels-format",
        "jsonl",
        "-q",
        "-m",
        "RR",
        "-m",
        "Success(all=true)@3",
        qrels,
        run,
    )
    assert res.code == 0, res.stderr
    assert res.stdout.splitlines() == [
        "RR                    \tq1\t0.5000",
        "Success(all=true)@3   \tq1\t1.0000",
        "RR                    \tq2\t1.0000",
        "Success(all=true)@3   \tq2\t1.0000",
        "RR                    \tall\t0.7500",
        "Success(all=true)@3   \tall\t1.0000",
    ]
    custom = write("t2.jsonl", '{"id": "q1", "docs": ["d1"]}\n')
    ok = invoke(
        "trec",
        "--run-format",
        "jsonl",
        "--qid-field",
        "id",
        "--ids-field",
        "docs",
        "-m",
        "RR",
        write("q.txt", "q1 0 d1 1\n"),
        custom,
    )
    assert ok.stdout == "RR                    \tall\t1.0000\n"
    bad = write("bad.jsonl", '{"qid": "q1", "retrieved_ids": "d1"}\n')
    err = invoke("trec", "--run-format", "jsonl", write("q2.txt", "q1 0 d1 1\n"), bad)
    assert err.code == 2 and err.stderr.startswith(f"{bad}:1: 'retrieved_ids' is not a list")


def test_tsv_qrels_with_header(write):
    qrels = write("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    run = write("run.txt", "q1 Q0 d2 1 2 r\nq1 Q0 d1 2 1 r\n")
    res = invoke("trec", "--qrels-format", "tsv", "-m", "RR", qrels, run)
    assert res.stdout == "RR                    \tall\t0.5000\n"
    bad = write("bad.tsv", "q1\td1\n")
    err = invoke("trec", "--qrels-format", "tsv", bad, run)
    assert (
        err.code == 2
        and err.stderr
        == f"{bad}:1: 2 tab-separated fields, expected 3 (query-id corpus-id score)\n"
    )


def test_source_breakdown_api_and_cli(write):
    import pyarrow as pa

    run = pa.table(
        {
            "qid": ["q1", "q1", "q1", "q2", "q2"],
            "docno": ["a", "b", "c", "d", "e"],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0],
            "source": ["bm25", "dense", "bm25", "dense", "graph"],
        }
    )
    qrels = {"q1": {"b": 1, "c": 1}, "q2": {"e": 1}}
    table = source_breakdown(run, qrels, ks=(1, 3))
    rows = {r["source"]: r for r in table.to_pylist()}
    assert (
        rows["bm25"]["top1"] == 0.5
        and rows["dense"]["top1"] == 0.5
        and rows["graph"]["top1"] == 0.0
    )
    assert rows["bm25"]["share@3"] == pytest.approx(2 / 5) and rows["graph"][
        "share@3"
    ] == pytest.approx(1 / 5)
    assert rows["bm25"]["rel_share@3"] == pytest.approx(1 / 3) and rows["graph"][
        "rel_share@3"
    ] == pytest.approx(1 / 3)
    assert rows["bm25"]["share@1"] == 0.5 and rows["bm25"]["rel_share@1"] is None
    rp = write(
        "run.txt",
        "q1 Q0 a 1 3 bm25\nq1 Q0 b 2 2 dense\nq1 Q0 c 3 1 bm25\n"
        "q2 Q0 d 1 2 dense\nq2 Q0 e 2 1 graph\n",
    )
    qp = write("qrels.txt", "q1 0 b 1\nq1 0 c 1\nq2 0 e 1\n")
    res = invoke("trec", "--json", "--by-source", "--ks", "1,3", "-m", "P.1", qp, rp)
    doc = json.loads(res.stdout)
    assert doc["by_source"]["graph"]["rel_share@3"] == pytest.approx(1 / 3)
    # a TREC file path: the tag column is the source, as on the command line
    assert source_breakdown(rp, qp, ks=(1, 3)).to_pylist() == table.to_pylist()
    with pytest.raises(InputError, match="the run has no source"):
        source_breakdown({"q1": {"a": 1.0}})


def test_cli_output_options(write, tmp_path):
    args = ["-m", "map", "-m", "P.5", str(DATA / "qrels.test"), str(DATA / "results.test")]
    assert invoke("trec", "-n", *args).stdout == ""
    assert (
        invoke("trec", "--digits", "6", *args).stdout.splitlines()[0]
        == "map                   \tall\t0.178545"
    )
    assert invoke("trec", "--names", "ir", *args).stdout.splitlines()[0].startswith("AP ")
    out = tmp_path / "sub" / "out.txt"
    res = invoke("trec", "-o", str(out), *args)
    assert res.code == 0 and res.stdout == "" and out.read_text().startswith("map ")
    bad = tmp_path / "never.txt"
    res = invoke(
        "trec", "-o", str(bad), "-m", "nope", str(DATA / "qrels.test"), str(DATA / "results.test")
    )
    assert res.code == 2 and not bad.exists() and not list(tmp_path.glob(".never.txt.*"))
    assert (
        invoke("trec", "--format", "csv", *args).stdout.splitlines()[0] == "runid,qid,measure,value"
    )
    assert json.loads(invoke("trec", "--json", *args).stdout)["summary"]["P_5"] == pytest.approx(
        0.2667, abs=1e-4
    )
    assert (
        invoke(
            "trec",
            "-m",
            "ultrarag",
            "--format",
            "ultrarag",
            "--ks",
            "1,5",
            str(DATA / "qrels.test"),
            str(DATA / "results.test"),
        ).stdout.count("@")
        == 6
    )
    assert invoke("trec", "-v").stdout.endswith("(trec_eval 10.0 compatible)\n")
    assert "usage: ragmeter trec [options] QRELS RUN" in invoke("trec", "-h").stdout
    # options may come after the files and attach their values
    late = invoke(
        "trec", str(DATA / "qrels.test"), str(DATA / "results.test"), "-mmap", "-l1", "--names=trec"
    )
    assert late.stdout == "map                   \tall\t0.1785\n"
    assert (
        invoke(
            "trec", "--quiet", "-m", "map", str(DATA / "qrels.test"), str(DATA / "results.trunc")
        ).stderr
        == ""
    )


def test_cli_is_listed_in_ragmeter_help():
    res = invoke("--help")
    assert res.code == 0 and "trec" in res.stdout


def test_demo_example_evaluates():
    """The synthetic example behind `make demo`: both systems evaluate; hybrid beats bm25."""
    from tests.helpers import REPO

    ex = REPO / "examples" / "retrieval"
    results = {
        s: evaluate(ex / "qrels.txt", ex / f"{s}.run", ["map", "nDCG@10", "RR@10", "R@50", "P.10"])
        for s in ("bm25", "hybrid")
    }
    assert results["bm25"].summary.keys() == results["hybrid"].summary.keys()
    assert len(results["bm25"].qids) == 30 and results["bm25"].warnings == []
    assert results["hybrid"].summary["nDCG@10"] > results["bm25"].summary["nDCG@10"]
