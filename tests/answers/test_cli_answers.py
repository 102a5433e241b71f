"""``ragmeter answers`` (docs/answers.md) and its bad-input messages."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.helpers import invoke, run_cli

ROWS = [
    {
        "id": 0,
        "question": "when was the last time anyone was on the moon",
        "golden_answers": ["14 December 1972 UTC", "December 1972"],
        "pred_answer": "December 14, 1973",
    },
    {
        "id": 1,
        "question": "who wrote he ain't heavy he's my brother lyrics",
        "golden_answers": ["Bobby Scott", "Bob Russell"],
        "pred_answer": "The documents do not provide information.",
    },
]


def write(tmp_path, rows, name="in.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run_json(*args):
    res = invoke(*args)
    assert res.code == 0, res.stderr
    return json.loads(res.stdout), res


def test_ultrarag_shape_and_metadata(tmp_path):
    out, _ = run_json(
        "answers",
        write(tmp_path, ROWS),
        "-m",
        "em",
        "-m",
        "f1",
        "-m",
        "rouge-l",
        "--profile",
        "ultrarag",
    )
    assert list(out) == ["em", "f1", "rouge-l", "avg_em", "avg_f1", "avg_rouge-l", "ragmeter"]
    assert out["f1"] == [0.5714285714285715, 0.0]
    assert out["avg_f1"] == 0.28571428571428575
    meta = out["ragmeter"]
    assert list(meta) == [
        "version",
        "profile",
        "tokenizer",
        "stem",
        "agg",
        "empty_gold",
        "n_rows",
        "n_scored",
        "status_counts",
        "warnings",
    ]
    assert meta["agg"] == {"em": "any", "f1": "max", "rouge-l": "max"}
    assert (meta["profile"], meta["stem"], meta["empty_gold"]) == ("ultrarag", True, "keep")
    assert meta["status_counts"] == {"ok": 2} and meta["warnings"] == {}


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        ("squad", ["em", "f1"]),
        ("ultrarag", ["acc", "em", "stringem", "coverem", "f1", "rouge-1", "rouge-2", "rouge-l"]),
        ("flashrag", ["em", "f1", "acc", "precision", "recall"]),
    ],
)
def test_default_metrics_per_profile(tmp_path, profile, expected):
    out, _ = run_json("answers", write(tmp_path, ROWS), "--profile", profile)
    assert [k for k in out if not k.startswith("avg_") and k != "ragmeter"] == expected


def test_metric_spellings_and_comma_lists(tmp_path):
    out, _ = run_json("answers", write(tmp_path, ROWS), "-m", "EM,rougeL", "-m", "ROUGE_1")
    assert [k for k in out if not k.startswith("avg_") and k != "ragmeter"] == [
        "em",
        "rouge-l",
        "rouge-1",
    ]


def test_key_mapping_and_default_ids(tmp_path):
    rows = [
        {"q": "x", "answers": "Paris", "output": "paris"},
        {"q": "y", "answers": ["Rome"], "output": "Milan"},
    ]
    per = tmp_path / "per.jsonl"
    out, _ = run_json(
        "answers",
        write(tmp_path, rows),
        "--gold-key",
        "answers",
        "--pred-key",
        "output",
        "--per-sample",
        str(per),
        "-m",
        "em",
    )
    assert out["em"] == [1.0, 0.0]
    lines = [json.loads(x) for x in per.read_text().splitlines()]
    assert [x["id"] for x in lines] == [0, 1]
    rows = [{"qid": "a7", "golden_answers": ["x"], "pred_answer": "x"}]
    run_json("answers", write(tmp_path, rows), "--id-key", "qid", "--per-sample", str(per))
    assert json.loads(per.read_text())["id"] == "a7"


def test_per_sample_lines(tmp_path):
    per = tmp_path / "per.jsonl"
    run_json(
        "answers",
        write(tmp_path, ROWS),
        "-m",
        "em",
        "-m",
        "f1",
        "-m",
        "rouge-l",
        "--profile",
        "ultrarag",
        "--per-sample",
        str(per),
    )
    first = json.loads(per.read_text().splitlines()[0])
    assert list(first) == ["id", "status", "em", "f1", "precision", "recall", "rouge-l", "flags"]
    assert first == {
        "id": 0,
        "status": "ok",
        "em": 0.0,
        "f1": 0.5714285714285715,
        "precision": 0.6666666666666666,
        "recall": 0.5,
        "rouge-l": 0.4,
        "flags": [],
    }


def test_output_file_equals_stdout_and_summary_only(tmp_path):
    target = tmp_path / "sub" / "summary.json"
    out, _ = run_json("answers", write(tmp_path, ROWS), "--output", str(target), "--summary-only")
    assert json.loads(target.read_text()) == out
    assert "em" not in out and "avg_em" in out
    assert not list(target.parent.glob(".*tmp"))  # no temporary file left behind


def test_table_format(tmp_path):
    res = invoke("answers", write(tmp_path, ROWS), "-m", "f1", "--format", "table")
    assert res.code == 0
    assert "f1" in res.stdout and "0.2857" in res.stdout and "precision" in res.stdout
    res = invoke("answers", write(tmp_path, ROWS), "--json", "--format", "table")
    assert res.code == 2 and "contradict" in res.stderr


def test_json_flag_is_the_default_format(tmp_path):
    a = invoke("answers", write(tmp_path, ROWS))
    b = invoke("answers", write(tmp_path, ROWS), "--json")
    assert a.stdout == b.stdout and a.code == b.code == 0


EMPTY_GOLD_ROWS = [
    {"id": "a", "golden_answers": ["The"], "pred_answer": "anything"},
    {"id": "b", "golden_answers": [], "pred_answer": "anything"},
    {"id": "c", "golden_answers": ["The", "Paris"], "pred_answer": "paris"},
    {"id": "d", "golden_answers": ["?"], "pred_answer": "."},
]


def test_empty_gold_drop(tmp_path):
    out, res = run_json("answers", write(tmp_path, EMPTY_GOLD_ROWS), "-m", "em", "-m", "acc")
    # row b's empty list is an unanswerable question under squad (SQuAD 2.0): "anything" is wrong
    assert out["em"] == [None, 0.0, 1.0, None]
    assert out["avg_em"] == 0.5
    meta = out["ragmeter"]
    assert meta["status_counts"] == {"ok": 2, "no_gold": 2}
    assert meta["n_scored"] == 2 and meta["warnings"]["empty_golds_dropped"] == 3
    assert "3 gold answers normalise to ''" in res.stderr


def test_empty_gold_keep_reproduces_upstream(tmp_path):
    out, _ = run_json(
        "answers",
        write(tmp_path, EMPTY_GOLD_ROWS),
        "-m",
        "em",
        "-m",
        "acc",
        "-m",
        "coverem",
        "-m",
        "f1",
        "--profile",
        "ultrarag",
    )
    assert out["acc"] == [1.0, 0.0, 1.0, 0.0]  # "" is in every non-empty prediction
    assert out["coverem"] == [1.0, 0.0, 1.0, 1.0]
    assert out["em"] == [0.0, 0.0, 1.0, 1.0]  # "." and "?" both normalise to ""
    assert out["f1"] == [0.0, 0.0, 1.0, 0.0]
    assert out["ragmeter"]["status_counts"] == {"ok": 4}


def test_empty_gold_abstain(tmp_path):
    out, _ = run_json(
        "answers",
        write(tmp_path, EMPTY_GOLD_ROWS),
        "-m",
        "em",
        "-m",
        "f1",
        "-m",
        "rouge-l",
        "--empty-gold",
        "abstain",
    )
    # row b (an empty list) is unanswerable under squad whatever the policy: "anything" scores 0
    assert out["em"] == [0.0, 0.0, 1.0, 1.0]
    assert out["f1"] == [0.0, 0.0, 1.0, 1.0]
    assert out["rouge-l"] == [0.0, 0.0, 1.0, 1.0]


def test_empty_gold_error_names_lines(tmp_path):
    res = invoke("answers", write(tmp_path, EMPTY_GOLD_ROWS), "--empty-gold", "error")
    assert res.code == 2
    assert res.stderr.endswith(
        "in.jsonl:1: gold answer 'The' normalises to '' under the squad profile (expected "
        "non-empty gold answers with --empty-gold error; also on line 3, 4)\n"
    )


def test_rouge_nonascii_warning(tmp_path):
    rows = [
        {"golden_answers": ["Zürich"], "pred_answer": "Zärich"},
        {"golden_answers": ["Paris"], "pred_answer": "Paris"},
    ]
    out, res = run_json("answers", write(tmp_path, rows), "-m", "rouge-l")
    assert res.stderr == (
        "warning: 1 of 2 samples contain letters or digits outside a-z/0-9 that the rouge-score "
        "tokenizer drops (e.g. 'café' -> 'caf'; CJK scores 0). Use --tokenizer unicode.\n"
    )
    assert out["ragmeter"]["warnings"] == {"rouge_nonascii": 1}
    out, res = run_json("answers", write(tmp_path, rows), "-m", "rouge-l", "--tokenizer", "unicode")
    assert res.stderr == "" and out["rouge-l"] == [0.0, 1.0]
    assert out["ragmeter"]["unicode_version"]


def test_agg_options(tmp_path):
    out, _ = run_json(
        "answers", write(tmp_path, ROWS[:1]), "-m", "f1", "-m", "em", "--agg", "f1=mean"
    )
    assert out["f1"] == [0.48571428571428577]
    assert out["ragmeter"]["agg"] == {"f1": "mean", "em": "any"}
    out, _ = run_json("answers", write(tmp_path, ROWS[:1]), "-m", "rouge-l", "--agg", "mean")
    assert out["rouge-l"] == [0.34285714285714286]
    res = invoke("answers", write(tmp_path, ROWS), "-m", "stringem", "--agg", "stringem=max")
    assert res.code == 2 and "--agg stringem=max is not allowed (expected mean)" in res.stderr


def test_multiple_choice_rows(tmp_path):
    rows = [
        {"choices": ["red", "blue", "green"], "golden_answers": [1], "pred_answer": "Blue"},
        {"choices": [], "golden_answers": [1], "pred_answer": "1"},
    ]
    out, _ = run_json("answers", write(tmp_path, rows), "-m", "em")
    assert out["em"] == [1.0, 1.0]


def test_str_em_alce_from_groups_key(tmp_path):
    rows = [
        {
            "qa_pairs": [
                {"short_answers": ["Barack Obama", "Obama"]},
                {"short_answers": ["Joe Biden", "Biden"]},
            ],
            "pred_answer": "Obama spoke.",
        }
    ]
    per = tmp_path / "per.jsonl"
    out, _ = run_json(
        "answers",
        write(tmp_path, rows),
        "-m",
        "str-em-alce",
        "-m",
        "em",
        "--gold-groups-key",
        "qa_pairs",
        "--per-sample",
        str(per),
    )
    assert out["str-em-alce"] == [0.5]
    assert json.loads(per.read_text())["str_em_hit"] == 0.0


def test_gold_regex_flashrag(tmp_path):
    rows = [{"golden_answers": ["19[0-9]{2}"], "pred_answer": "In 1972."}]
    out, _ = run_json(
        "answers",
        write(tmp_path, rows),
        "-m",
        "em",
        "-m",
        "acc",
        "--profile",
        "flashrag",
        "--gold-regex",
    )
    assert out["em"] == [0.0] and out["acc"] == [1.0]
    res = invoke("answers", write(tmp_path, rows), "--gold-regex")
    assert res.code == 2 and "--gold-regex needs --profile flashrag" in res.stderr
    bad = [{"golden_answers": ["19[0-9"], "pred_answer": "x"}]
    res = invoke("answers", write(tmp_path, bad), "--profile", "flashrag", "--gold-regex")
    assert res.code == 2 and res.stderr.startswith(f"{tmp_path}/in.jsonl:1: gold regex '19[0-9'")


@pytest.mark.parametrize("profile", ["squad", "ultrarag", "flashrag"])
def test_verify_rouge(tmp_path, profile):
    rows = [
        *ROWS,
        {"golden_answers": ["cat\ndog cat"], "pred_answer": "cat dog cat"},
        {"golden_answers": ["x"], "pred_answer": ""},
    ]
    metrics = ["-m", "rouge-1", "-m", "rouge-2", "-m", "rouge-l"]
    if profile != "flashrag":
        metrics += ["-m", "rouge-lsum"]
    res = invoke(
        "answers",
        write(tmp_path, rows),
        *metrics,
        "--profile",
        profile,
        "--verify-rouge",
        "--summary-only",
    )
    assert res.code == 0, res.stderr
    assert "verify-rouge: 6 pairs" in res.stderr and "identical to" in res.stderr


def test_verify_rouge_reports_differences(tmp_path, monkeypatch):
    from ragmeter.answers import rouge_engine

    real = rouge_engine._scores_12l

    def off_by_one_ulp(ref, pred):
        s = real(ref, pred)
        return (s[0]._replace(fmeasure=s[0].fmeasure + 2**-52), *s[1:])

    monkeypatch.setattr(rouge_engine, "_scores_12l", off_by_one_ulp)
    res = invoke("answers", write(tmp_path, ROWS), "-m", "rouge-1", "--verify-rouge")
    assert res.code == 1
    assert "verify-rouge: sample 0, gold 0, rouge-1: ragmeter" in res.stderr
    assert "FAILED against rouge-score 0.1.2" in res.stderr


def test_stdin_and_gzip(tmp_path):
    text = "".join(json.dumps(r) + "\n" for r in ROWS)
    res = run_cli("answers", "-", "-m", "f1", stdin=text)
    assert res.code == 0 and json.loads(res.stdout)["f1"] == [0.5714285714285715, 0.0]
    gz = tmp_path / "in.jsonl.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    out, _ = run_json("answers", str(gz), "-m", "f1")
    assert out["avg_f1"] == 0.28571428571428575


def test_missing_prediction_is_empty_and_counted(tmp_path):
    rows = [
        {"golden_answers": ["x"]},
        {"golden_answers": ["x"], "pred_answer": None},
        {"golden_answers": ["x"], "pred_answer": "x"},
    ]
    per = tmp_path / "p.jsonl"
    out, res = run_json("answers", write(tmp_path, rows), "-m", "em", "--per-sample", str(per))
    assert out["em"] == [0.0, 0.0, 1.0]
    assert out["ragmeter"]["warnings"] == {"missing_predictions": 2}
    assert "2 of 3 samples have no prediction" in res.stderr
    assert json.loads(per.read_text().splitlines()[0])["flags"] == ["missing_prediction"]


def test_numbers_and_booleans_as_golds(tmp_path):
    rows = [
        {"golden_answers": [1972], "pred_answer": "1972"},
        {"golden_answers": True, "pred_answer": "yes"},
    ]
    out, _ = run_json("answers", write(tmp_path, rows), "-m", "em", "--profile", "ultrarag")
    assert out["em"] == [1.0, 1.0]  # True -> "True" -> "yes" under ultrarag


# -- bad input: one line, file and line, exit 2 ---------------------------------------------------
BAD = [
    (
        "not json",
        '{"golden_answers": ["x"], "pred_answer": "x"}\n{"golden_answers": [\n',
        ":2: not valid JSON: Expecting value at column 21 (expected one JSON object per line)",
    ),
    ("array line", '["x"]\n', ":1: a JSON list (expected one JSON object per line)"),
    (
        "gold object",
        '{"golden_answers": {"a": 1}, "pred_answer": "x"}\n',
        ":1: golden_answers is an object (expected a string, a number or a list of them)",
    ),
    (
        "gold null item",
        '{"golden_answers": ["a", null], "pred_answer": "x"}\n',
        ":1: golden_answers[1] is null (expected a string, a number or a list of them)",
    ),
    (
        "prediction list",
        '{"golden_answers": ["a"], "pred_answer": ["x"]}\n',
        ":1: prediction is a list (expected a string, a number or null)",
    ),
    (
        "NaN",
        '{"golden_answers": ["a"], "pred_answer": NaN}\n',
        ":1: NaN is not valid JSON (NaN and infinity have no JSON spelling; use null)",
    ),
    (
        "duplicate id",
        '{"id": 1, "golden_answers": ["a"], "pred_answer": "a"}\n'
        '{"id": 1, "golden_answers": ["a"], "pred_answer": "a"}\n',
        ":2: id 1 appears again (first on line 1; expected unique ids)",
    ),
    (
        "bad id",
        '{"id": [1], "golden_answers": ["a"], "pred_answer": "a"}\n',
        ":1: id is a list (expected a string or an integer)",
    ),
    (
        "choice index",
        '{"choices": ["a"], "golden_answers": [3], "pred_answer": "a"}\n',
        ":1: golden_answers[0] is choice index 3 but there are 1 choices (expected 0 … 0)",
    ),
]


@pytest.mark.parametrize(("label", "content", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line(tmp_path, label, content, message):
    path = tmp_path / "in.jsonl"
    path.write_text(content, encoding="utf-8")
    res = invoke("answers", str(path))
    assert res.code == 2
    assert res.stderr == f"{path}{message}\n"
    assert res.stdout == ""


def test_empty_file(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    res = invoke("answers", str(path))
    assert (res.code, res.stderr) == (
        2,
        f"{path}: no data lines (expected one JSON object per line)\n",
    )


def test_missing_file(tmp_path):
    res = invoke("answers", str(tmp_path / "nope.jsonl"))
    assert res.code == 2 and res.stderr.startswith(f"{tmp_path}/nope.jsonl: cannot read")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "bleu"], "ragmeter answers: unknown metric 'bleu' (expected one of em, acc,"),
        (
            ["-m", "rouge-lsum", "--profile", "flashrag"],
            "ragmeter answers: rouge-lsum is not available in the flashrag profile",
        ),
        (
            ["--stem", "--profile", "flashrag", "-m", "rouge-1"],
            "ragmeter answers: --stem has no effect in the flashrag profile",
        ),
        (["--agg", "f1=median"], "ragmeter answers: --agg value 'median' is not max, mean or any"),
        (["-m", "qa-similarity"], ":1: no 'question' (expected the question for qa-similarity)"),
    ],
)
def test_usage_errors(tmp_path, args, message, monkeypatch):
    if "qa-similarity" in args:  # checked while reading, before any model is loaded
        from ragmeter.answers import semantic

        monkeypatch.setattr(semantic, "load_minilm", lambda **kw: None)
    path = write(tmp_path, [{"golden_answers": ["a"], "pred_answer": "a"}])
    res = invoke("answers", path, *args)
    assert res.code == 2, res.stderr
    assert message in res.stderr and res.stderr.count("\n") == 1


def test_unknown_metric_suggests(tmp_path):
    res = invoke("answers", write(tmp_path, ROWS), "-m", "rouge_lsun")
    assert res.code == 2 and "did you mean 'rouge-lsum'" in res.stderr


def test_help_lists_both_commands():
    res = run_cli("--help")
    assert "answers" in res.stdout and "grounded" in res.stdout


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("bogus", "--device 'bogus' is not a torch device (expected cpu, cuda, cuda:N or mps)"),
        ("cuda", "--device 'cuda': this torch build has no cuda device (use cpu)"),
    ],
)
def test_a_device_torch_cannot_use_is_a_usage_error(tmp_path, device, message):
    # the Makefile installs the CPU build of torch, which has no cuda device
    path = write(tmp_path, ROWS)
    res = invoke("answers", path, "-m", "semantic-similarity", "--device", device)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr.startswith(f"ragmeter answers: {message}")
    assert len(res.stderr.splitlines()) == 1


def test_json_nested_too_deeply_is_one_line(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    for args in (("answers", str(path)), ("grounded", "--gold", str(path), "--trace", str(path))):
        res = invoke(*args)
        assert res.code == 2
        assert (
            res.stderr == f"{path}:1: JSON nested too deeply (expected one JSON object per line)\n"
        )


def test_misnamed_keys_name_the_files_keys(tmp_path):
    # issue: a file with gold/answer keys exited 0 with every value null
    rows = [
        {"id": 1, "gold": ["Paris"], "answer": "Paris"},
        {"id": 2, "gold": ["x"], "answer": "y"},
    ]
    path = write(tmp_path, rows)
    res = invoke("answers", path)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        f"{path}: no row has 'golden_answers' or 'pred_answer' (the rows have 'id', 'gold', "
        "'answer'; name the keys with --gold-key and --pred-key)\n"
    )
    out, _ = run_json("answers", path, "--gold-key", "gold", "--pred-key", "answer")
    assert out["em"] == [1.0, 0.0]
    only_pred = write(tmp_path, [{"id": 1, "golden_answers": ["Paris"], "answer": "Paris"}])
    res = invoke("answers", only_pred)
    assert res.code == 2
    assert res.stderr == (
        f"{only_pred}: no row has 'pred_answer' (the rows have 'id', 'golden_answers', "
        "'answer'; name the key with --pred-key)\n"
    )


def test_no_usable_gold_at_all_exits_2(tmp_path):
    rows = [
        {"id": 1, "golden_answers": ["The"], "pred_answer": "Paris"},
        {"id": 2, "pred_answer": "y"},
    ]
    path = write(tmp_path, rows)
    res = invoke("answers", path)
    assert res.code == 2 and res.stdout == ""
    assert res.stderr == (
        f"{path}: no row has a usable gold answer (every 'golden_answers' is missing, empty or "
        "normalises to ''; expected at least one gold answer to score)\n"
    )


def test_rows_without_the_gold_key_are_named_in_a_warning(tmp_path):
    rows = [
        {"id": 1, "golden_answers": ["Paris"], "pred_answer": "Paris"},
        {"id": 2, "pred_answer": "y"},
        {"id": 3, "golden_answers": ["Rome"]},
    ]
    path = write(tmp_path, rows)
    out, res = run_json("answers", path, "-m", "em")
    assert out["em"] == [1.0, None, 0.0]
    assert out["ragmeter"]["status_counts"] == {"ok": 2, "no_gold": 1}
    assert (
        f"ragmeter answers: warning: 1 row of {path} has no 'golden_answers' (gold answers; "
        "first on line 2), not scored (no_gold)"
    ) in res.stderr.splitlines()
    assert (
        f"ragmeter answers: warning: 1 row of {path} has no 'pred_answer' (prediction; first on "
        "line 3), scored as ''"
    ) in res.stderr.splitlines()
