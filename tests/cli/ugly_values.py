"""The ugly-input table, part 2: one hostile value per case, duplicate and non-Latin ids, and
unusable results stores."""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.cli.ugly_files import DEEP, _valid, case
from tests.cli.world import World, jsonl

# -- one command, one hostile value ------------------------------------------------------------

T = "Het Rijksmuseum Amsterdam opende in 1885."
MUS = {"text": "Rijksmuseum Amsterdam", "type": "MUS", "start": 4, "end": 25}


def elapsed_1e309(w: World) -> list[str]:
    data = _valid(w, "steps_resp")
    data = re.sub(rb'"elapsed_sec": [0-9.]+', b'"elapsed_sec": 1e309', data, count=1)
    return ["steps", "--reference", w["steps_ref"], "--responses", w.write("elapsed.jsonl", data)]


def brat(w: World, folder: str, text: bytes) -> str:
    """A BRAT folder with one document whose text is ``text`` (one MUS span at 4-9)."""
    w.write(f"{folder}/d1.txt", text)
    w.write(f"{folder}/d1.ann", "T1\tMUS 4 9\tRijks\n")
    return str(w.root / "ugly" / folder)


def cmp_file(name: str, text: str) -> Callable[[World], list[str]]:
    return lambda w: ["compare", "--per-sample", w["cmp_a"], w.write(name, text)]


SPECIFIC: list[tuple[str, Callable[[World], list[str]], str, int]] = [
    # (id, args, the text the message names, exit code)
    (
        "compare-boolean-score",
        cmp_file("bool.jsonl", '{"id": "q0", "f1": true}\n'),
        "bool.jsonl:1",
        2,
    ),
    (
        "compare-1e309-score",
        cmp_file("big.jsonl", '{"id": "q0", "f1": 1e309}\n'),
        "big.jsonl:1",
        2,
    ),
    (
        "compare-nan-score",
        cmp_file("nan.jsonl", '{"id": "q0", "f1": NaN}\n'),
        "nan.jsonl:1",
        2,
    ),
    (
        "compare-deep-detail",
        cmp_file("deep.jsonl", '{"id": "q0", "f1": 0.5, "detail": ' + DEEP + "}\n"),
        "deep.jsonl:1",
        2,
    ),
    (
        "compare-duplicate-id",
        cmp_file("dup.jsonl", '{"id": "q0", "f1": 0.5}\n{"id": "q0", "f1": 0.6}\n'),
        "dup.jsonl:2",
        2,
    ),
    ("steps-elapsed-1e309", elapsed_1e309, "elapsed.jsonl:1", 2),
    (
        "agreement-rating-1e309",
        lambda w: [
            "agreement",
            w["agr_ja"],
            w.write("r309.jsonl", '{"id": "i0", "label": 1e309}\n'),
        ],
        "r309.jsonl:1",
        2,
    ),
    (
        "agreement-interval-inf-tsv",
        lambda w: [
            "agreement",
            w.write("ri.tsv", "id\tlabel\ni0\t1e309\ni1\t2\n"),
            w.write("rj.tsv", "id\tlabel\ni0\t1\ni1\t2\n"),
            "--level",
            "interval",
        ],
        "ri.tsv:2",
        2,
    ),
    (
        "agreement-ordinal-nan-tsv",
        lambda w: [
            "agreement",
            w.write("rn.tsv", "id\tlabel\ni0\tnan\ni1\t2\n"),
            w.write("rk.tsv", "id\tlabel\ni0\t1\ni1\t2\n"),
            "--level",
            "ordinal",
        ],
        "rn.tsv:2",
        2,
    ),
    (
        "agreement-non-utf8-tsv",
        lambda w: ["agreement", w.write("rl.tsv", b"id\tlabel\ni1\tx\ni2\tcaf\xe9\n"), w["agr_a"]],
        "rl.tsv:3: not valid UTF-8",
        2,
    ),
    (
        "ner-non-utf8-conll",
        lambda w: ["ner", w["conll_gold"], w.write("l1.conll", b"Het O\nRijks\xe9 B-MUS\n")],
        "l1.conll:2: not valid UTF-8",
        2,
    ),
    (
        "ner-non-utf8-brat-text",
        lambda w: ["ner", brat(w, "bg", b"Het Rijks"), brat(w, "bp", b"Het Rijk\xe9")],
        "bp/d1.txt:1: not valid UTF-8",
        2,
    ),
    (
        "steps-non-utf8-reference-yaml",
        lambda w: [
            "steps",
            "--reference",
            w.write("lref.yaml", _valid(w, "steps_ref").replace(b"\n", b" caf\xe9\n", 1)),
            "--responses",
            w["steps_resp"],
        ],
        "lref.yaml:1: not valid UTF-8",
        2,
    ),
    (
        "classify-non-utf8-gold-tsv",
        lambda w: [
            "classify",
            w.write("gl.tsv", b"id\tlabel\ni1\tA\ni2\tcaf\xe9\n"),
            w["cls_pred"],
        ],
        "gl.tsv:3: not valid UTF-8",
        2,
    ),
    (
        "classify-prediction-1e309",
        lambda w: [
            "classify",
            w["cls_gold"],
            w.write("p309.jsonl", '{"id": "i1", "label": 1e309}\n'),
        ],
        "p309.jsonl:1",
        2,
    ),
    (
        "classify-wrong-columns",
        lambda w: ["classify", w.write("cols.tsv", "item\tclass\ni1\tA\n"), w["cls_pred"]],
        "cols.tsv",
        2,
    ),
    (
        "answers-prediction-1e309",
        lambda w: [
            "answers",
            w.write(
                "a309.jsonl", '{"id": "q1", "golden_answers": ["inf"], "pred_answer": 1e309}\n'
            ),
        ],
        "a309.jsonl:1",
        2,
    ),
    (
        "split-stratum-1e309",
        lambda w: [
            "split",
            w.write("s309.jsonl", jsonl(GOLD_UGLY[:3]).replace('"NL"', "1e309", 1)),
            "--by",
            "country",
        ],
        "s309.jsonl:2",
        2,
    ),
    (
        "dataset-unknown-key",
        lambda w: ["dataset", "stats", w.write("unk.jsonl", '{"id": "s1", "txet": "typo"}\n')],
        "unk.jsonl:1",
        2,
    ),
    (
        "grounded-trace-without-answer-json",
        lambda w: [
            "grounded",
            "--gold",
            w["g_gold"],
            "--trace",
            w.write("noaj.jsonl", '{"qid": "q1", "retrieved_ids": ["d1"]}\n'),
        ],
        "noaj.jsonl:1: no answer_json",
        2,
    ),
    (
        "ner-gold-without-ner-annotations",
        lambda w: ["ner", w.write("nokey.jsonl", jsonl([{"id": "d1", "text": T}])), w["ner_pred"]],
        "nokey.jsonl: no record has ner_annotations",
        2,
    ),
    (
        "trec-json-and-format-csv",
        lambda w: ["trec", "--json", "--format", "csv", w["qrels"], w["run"]],
        "--json and --format csv",
        2,
    ),
    (
        "runs-export-json-and-format-parquet",
        lambda w: [
            "runs",
            "export",
            w.run_id,
            "--store",
            w["store"],
            "--json",
            "--format",
            "parquet",
            "-o",
            w.out("x.parquet"),
        ],
        "--json and --format parquet",
        2,
    ),
    (
        "answer-correctness-missing-column",
        lambda w: [
            "answer-correctness",
            "-i",
            w.write("acc.tsv", "Question\tAnswer\nQ\tA\n"),
            "-o",
            w.out("ac2.tsv"),
        ],
        "acc.tsv:1",
        2,
    ),
    (
        "answer-correctness-header-only",
        lambda w: [
            "answer-correctness",
            "-i",
            w.write("ach.tsv", "Question\tReference answer\tActual answer\n"),
            "-o",
            w.out("ac3.tsv"),
        ],
        "ach.tsv:2: no samples",
        2,
    ),
    (
        "serve-host-that-does-not-resolve",
        lambda w: ["serve", "--store", w["store"], "--host", "999.1.1.1"],
        "--host '999.1.1.1' is not a valid address",
        2,
    ),
    ("metrics-unknown-task", lambda w: ["metrics", "nosuchtask"], "'nosuchtask'", 2),
    *(
        (
            f"{'-'.join(cmd)}-unknown-run",
            lambda w, cmd=cmd: [*cmd, "nosuchrun", "--store", w["store"]],
            "no run 'nosuchrun'",
            2,
        )
        for cmd in (("gate",), ("runs", "show"), ("runs", "export"), ("report",), ("compare",))
    ),
    (
        "gate-unknown-metric",
        lambda w: ["gate", w.run_id, "--store", w["store"], "--rule", "answers.nosuch>=0.5"],
        "unknown answers metric 'nosuch'",
        2,
    ),
    (
        "runs-list-no-store",
        lambda w: ["runs", "list", "--store", f"sqlite:///{w.root / 'ugly' / 'none.db'}"],
        "no results store",
        2,
    ),
    *(
        (
            f"gate-threshold-{x}",
            lambda w, x=x: ["gate", w.run_id, "--store", w["store"], "--rule", f"answers.em>={x}"],
            "",  # the wording is the gate owner's: exit 2 and one line are what is asserted
            2,
        )
        for x in ("nan", "inf", "1e309")
    ),
    (
        "answers-usage-error",
        lambda w: ["answers"],
        "INPUT.jsonl",
        2,
    ),
    (
        "trec-qrels-huge-grade",
        lambda w: ["trec", w.write("huge.qrels", "q1 0 d1 99999999999999999999999\n"), w["run"]],
        "huge.qrels:1",
        2,
    ),
    (
        "trec-qrels-huge-negative-grade",
        lambda w: [
            "trec",
            w.write("hugeneg.qrels", "q1 0 d1 -99999999999999999999999\n"),
            w["run"],
        ],
        "hugeneg.qrels:1",
        2,
    ),
    (
        "steps-reference-alias-bomb",
        lambda w: [
            "steps",
            "--reference",
            w.write("bomb.yaml", ALIAS_BOMB),
            "--responses",
            w["steps_resp"],
        ],
        "bomb.yaml",
        2,
    ),
    (
        "run-config-alias-bomb",
        lambda w: ["run", w.write("bomb-run.yaml", ALIAS_BOMB), "--no-store", "--quiet"],
        "bomb-run.yaml",
        2,
    ),
]

# a small YAML alias bomb (8**5 leaves once expanded): big enough to show a loader that expands
# aliases, small enough to finish quickly even without an alias budget
ALIAS_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 8)}]\n" for i in range(1, 5)
)
GOLD_UGLY = [
    {"id": f"s{i}", "strata": {"country": "NL" if i % 2 else "BE"}, "qa_pairs": []}
    for i in range(4)
]

for cid, build_args, named, code in SPECIFIC:
    case(cid, build_args, named, code)

# -- duplicate ids (refused with both lines) and ids in any script (accepted) -------------------

U = "ид-é-🎉\u200b"  # Cyrillic, an accent, an emoji and a zero-width space in one id
DUPLICATES = {
    "answers": lambda w, t: ["answers", w.write("dup-answers.jsonl", t)],
    "grounded": lambda w, t: [
        "grounded",
        "--gold",
        w.write("dup-grounded.jsonl", t),
        "--trace",
        w["g_trace"],
    ],
    "agreement": lambda w, t: ["agreement", w.write("dup-agreement.tsv", t), w["agr_b"]],
    "classify": lambda w, t: ["classify", w["cls_gold"], w.write("dup-classify.jsonl", t)],
    "link": lambda w, t: ["link", w.write("dup-link.jsonl", t), w["link_pred"]],
    "split": lambda w, t: ["split", w.write("dup-split.jsonl", t), "--by", "country"],
    "ner": lambda w, t: ["ner", w.write("dup-ner.jsonl", t), w["ner_pred"]],
}
DUPLICATE_TEXT = {
    "answers": jsonl([{"id": U, "golden_answers": ["a"], "pred_answer": "a"}] * 2),
    "grounded": jsonl(
        [{"qid": U, "answerable": True, "gold_claim_substr": [], "gold_citations": []}] * 2
    ),
    "agreement": f"id\tlabel\n{U}\tx\n{U}\ty\n",
    "classify": jsonl([{"id": "i1", "label": "A"}, {"id": "i1", "label": "B"}]),
    "link": jsonl([{"mention_id": U, "kb_id": "Q1"}, {"mention_id": U, "kb_id": "Q2"}]),
    "split": jsonl([{"id": U, "strata": {"country": "NL"}, "qa_pairs": []}] * 2),
    "ner": jsonl([{"id": U, "text": T, "ner_annotations": []}] * 2),
}
for cmd, build_args in DUPLICATES.items():
    case(
        f"{cmd}-duplicate-id",
        lambda w, b=build_args, t=DUPLICATE_TEXT[cmd]: b(w, t),
        lambda w, c=cmd: f"dup-{c}.",
    )

UNICODE = {
    "answers": lambda w: [
        "answers",
        w.write(
            "u-ans.jsonl", jsonl([{"id": U, "golden_answers": ["Ñandú"], "pred_answer": "ñandú"}])
        ),
    ],
    "compare": lambda w: [
        "compare",
        "--per-sample",
        w.write("u-a.jsonl", jsonl([{"id": U + str(i), "f1": i / 4} for i in range(4)])),
        w.write("u-b.jsonl", jsonl([{"id": U + str(i), "f1": i / 5} for i in range(4)])),
    ],
    "classify": lambda w: [
        "classify",
        w.write("u-g.tsv", f"id\tlabel\n{U}\tÄ\n"),
        w.write("u-p.jsonl", jsonl([{"id": U, "label": "Ä"}])),
    ],
    "link": lambda w: [
        "link",
        w.write("u-lg.jsonl", jsonl([{"mention_id": U, "kb_id": "Q1"}])),
        w.write("u-lp.jsonl", jsonl([{"mention_id": U, "candidates": ["Q1"]}])),
    ],
    "split": lambda w: [
        "split",
        w.write(
            "u-split.jsonl",
            jsonl(
                [{"id": f"{U}{i}", "strata": {"land": "Ελλάδα"}, "qa_pairs": []} for i in range(6)]
            ),
        ),
        "--by",
        "land",
    ],
}
for cmd, build_args in UNICODE.items():
    case(f"{cmd}-unicode-ids", build_args, code=0)


# -- an unusable results store: a folder, a text file, random bytes ------------------------------

STORE_COMMANDS = {
    "runs-list": lambda w, s: ["runs", "list", "--store", s],
    "runs-show": lambda w, s: ["runs", "show", "latest", "--store", s],
    "runs-export": lambda w, s: ["runs", "export", "latest", "--store", s],
    "report": lambda w, s: ["report", "latest", "--store", s, "-o", w.out("r.html")],
    "gate": lambda w, s: ["gate", "latest", "--store", s],
    "compare": lambda w, s: ["compare", "latest", "latest", "--store", s],
    # an address no one can listen on: the command can never start a server here
    "serve": lambda w, s: ["serve", "--store", s, "--host", "999.1.1.1"],
    "run": lambda w, s: ["run", w["config"], "--store", s, "--quiet", "--results-dir", w.out("rs")],
}
STORES = {
    "folder": lambda w: w.folder("store-folder"),
    "text": lambda w: w.write("store-text.db", "hello\n"),
    "garbage": lambda w: w.write("store-garbage.db", bytes(range(256)) * 40),
}
for cmd, build_args in STORE_COMMANDS.items():
    for kind, make in STORES.items():
        case(
            f"{cmd}-store-{kind}",
            lambda w, b=build_args, m=make: b(w, f"sqlite:///{m(w)}"),
            f"store-{kind}",
        )
