"""The ugly-input table, part 1: the case model, and hostile files (absent, folders, empty,
garbage, 20,000-deep JSON, 10 MB lines, stray bytes, BOM and CRLF) and output paths."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.cli.world import World

BIG = "x" * (10 * 1024 * 1024)  # one 10 MB line
DEEP = "[" * 20000 + "]" * 20000  # JSON nested 20,000 deep


@dataclass(frozen=True)
class Case:
    """One hostile input: ``args`` builds the command line, ``names`` what the line must name."""

    id: str
    args: Callable[[World], list[str]]
    names: Callable[[World], str] | str
    code: int = 2
    lines: int = 1  # stderr lines: `dataset validate` lists every problem, then a count


def bad(name: str) -> Callable[[World], str]:
    return lambda w: name


CASES: list[Case] = []


def case(id: str, args, names="", code: int = 2, lines: int = 1) -> None:
    CASES.append(Case(id, args, names if callable(names) else bad(names), code, lines))


# -- files that are not there, are folders, or are empty -------------------------------------------

INPUTS = {
    "trec": lambda w, x: ["trec", w["qrels"], x],
    "answers": lambda w, x: ["answers", x],
    "grounded": lambda w, x: ["grounded", "--gold", w["g_gold"], "--trace", x],
    "judge": lambda w, x: ["judge", x, "-m", "faithfulness", "--no-cache"],
    "steps": lambda w, x: ["steps", "--reference", w["steps_ref"], "--responses", x],
    "answer-correctness": lambda w, x: ["answer-correctness", "-i", x, "-o", w.out("ac.tsv")],
    "ner": lambda w, x: ["ner", w["ner_gold"], x],
    "classify": lambda w, x: ["classify", w["cls_gold"], x],
    "link": lambda w, x: ["link", w["link_gold"], x],
    "agreement": lambda w, x: ["agreement", w["agr_a"], x],
    "compare": lambda w, x: ["compare", "--per-sample", w["cmp_a"], x],
    "split": lambda w, x: ["split", x, "--by", "country"],
    "dataset": lambda w, x: ["dataset", "stats", x],
    "dataset-validate": lambda w, x: ["dataset", "validate", x],
    "run": lambda w, x: ["run", x, "--no-store", "--quiet", "--results-dir", w.out("res")],
    "cache": lambda w, x: ["cache", "stats", "--cache", x],
}
# what each command reads as the swapped file: a JSONL reader, a TSV reader, ...
SUFFIX = {
    "trec": ".run",
    "agreement": ".tsv",
    "classify": ".jsonl",
    "run": ".yaml",
    "cache": ".sqlite",
    "answer-correctness": ".tsv",
}

for cmd, build_args in INPUTS.items():
    ext = SUFFIX.get(cmd, ".jsonl")
    case(
        f"{cmd}-missing",
        lambda w, b=build_args, e=ext: b(w, str(w.root / f"nope{e}")),
        f"nope{ext}",
        lines=2 if cmd == "dataset-validate" else 1,
    )
    case(
        f"{cmd}-directory",
        lambda w, b=build_args, e=ext: b(w, w.folder(f"folder{e}")),
        f"folder{ext}",
        lines=2 if cmd == "dataset-validate" else 1,
    )
    if cmd != "cache":
        case(
            f"{cmd}-empty",
            lambda w, b=build_args, e=ext: b(w, w.write(f"empty{e}", "")),
            "empty",
            lines=2 if cmd == "dataset-validate" else 1,
        )
    case(
        f"{cmd}-non-utf8",
        lambda w, b=build_args, e=ext: b(w, w.write(f"latin1{e}", b'{"id": "caf\xe9"}\n')),
        "latin1",
        lines=2 if cmd == "dataset-validate" else 1,
    )
    case(
        f"{cmd}-binary",
        lambda w, b=build_args, e=ext: b(w, w.write(f"binary{e}", bytes(range(256)) * 4)),
        "binary",
        lines=2 if cmd == "dataset-validate" else 1,
    )


# -- contents: garbage, 20,000-deep JSON, a 10 MB line, a stray byte, BOM and CRLF ---------------

# the valid file each command's swapped input replaces (the ugly variants are built from it)
VALID = {
    "trec": "run",
    "answers": "answers",
    "grounded": "g_trace",
    "judge": "judge",
    "steps": "steps_resp",
    "answer-correctness": "ac_in",
    "ner": "ner_pred",
    "classify": "cls_pred",
    "link": "link_pred",
    "agreement": "agr_b",
    "compare": "cmp_b",
    "split": "gold",
    "dataset": "gold",
    "dataset-validate": "gold",
    "run": "config",
}
# commands that would call the (unreachable) LLM on valid input: no success cases for them
NEEDS_LLM = {"judge", "answer-correctness"}


def _valid(w: World, key: str) -> bytes:
    return Path(w[key]).read_bytes()


def _stray_byte(data: bytes) -> bytes:
    """The valid file with a Latin-1 é in its last line (valid up to there)."""
    head, _, last = data.rstrip(b"\n").rpartition(b"\n")
    return (head + b"\n" if head else b"") + last[:-2] + b"\xe9" + last[-2:] + b"\n"


CONTENTS: dict[str, tuple[Callable[[bytes], bytes], int]] = {
    "garbage": (lambda d: b"this is not what was expected\n", 2),
    "deep-json": (lambda d: DEEP.encode() + b"\n", 2),
    "10mb-line": (lambda d: d + BIG.encode() + b"\n", 2),
    "stray-byte": (_stray_byte, 2),
    "bom-crlf": (lambda d: b"\xef\xbb\xbf" + d.replace(b"\n", b"\r\n"), 0),
}

for cmd, key in VALID.items():
    ext = SUFFIX.get(cmd, ".jsonl")
    for kind, (make, code) in CONTENTS.items():
        if (code == 0 and cmd in NEEDS_LLM) or (cmd, kind) == ("run", "10mb-line"):
            continue  # (PyYAML takes 13 s over a 10 MB line; the config owner bounds that)
        case(
            f"{cmd}-{kind}",
            lambda w, b=INPUTS[cmd], k=key, m=make, n=f"{kind}-{cmd}{ext}": b(
                w, w.write(n, m(_valid(w, k)))
            ),
            f"{kind}-{cmd}{ext}",
            code,
            lines=2 if cmd == "dataset-validate" else 1,
        )


# -- output paths: a folder, under a file, or one of the inputs ------------------------------------

# command line with the output option last; ``inp`` is the input the same-file case overwrites
OUTPUTS = {
    "trec-o": (lambda w, o: ["trec", "-o", o, w["qrels"], w["run"]], "run"),
    "answers-output": (lambda w, o: ["answers", w["answers"], "--output", o], "answers"),
    "answers-per-sample": (lambda w, o: ["answers", w["answers"], "--per-sample", o], "answers"),
    "grounded-output": (
        lambda w, o: ["grounded", "--gold", w["g_gold"], "--trace", w["g_trace"], "--output", o],
        "g_trace",
    ),
    "grounded-details": (
        lambda w, o: ["grounded", "--gold", w["g_gold"], "--trace", w["g_trace"], "--details", o],
        "g_gold",
    ),
    "judge-output": (
        lambda w, o: ["judge", w["judge"], "-m", "faithfulness", "--no-cache", "--output", o],
        "judge",
    ),
    "judge-per-sample": (
        lambda w, o: ["judge", w["judge"], "-m", "faithfulness", "--no-cache", "--per-sample", o],
        "judge",
    ),
    "judge-ledger": (
        lambda w, o: ["judge", w["judge"], "-m", "faithfulness", "--no-cache", "--ledger", o],
        "judge",
    ),
    "steps-o": (
        lambda w, o: [
            "steps",
            "--reference",
            w["steps_ref"],
            "--responses",
            w["steps_resp"],
            "-o",
            o,
        ],
        "steps_resp",
    ),
    "steps-aggregates": (
        lambda w, o: [
            "steps",
            "--reference",
            w["steps_ref"],
            "--responses",
            w["steps_resp"],
            "--aggregates",
            o,
        ],
        "steps_ref",
    ),
    "answer-correctness-o": (
        lambda w, o: ["answer-correctness", "-i", w["ac_in"], "-o", o],
        "ac_in",
    ),
    "ner-o": (lambda w, o: ["ner", w["conll_gold"], w["conll_pred"], "-o", o], "conll_gold"),
    "classify-o": (lambda w, o: ["classify", w["cls_gold"], w["cls_pred"], "-o", o], "cls_pred"),
    "link-o": (lambda w, o: ["link", w["link_gold"], w["link_pred"], "-o", o], "link_gold"),
    "compare-o": (
        lambda w, o: ["compare", "--per-sample", w["cmp_a"], w["cmp_b"], "-o", o],
        "cmp_b",
    ),
    "split-o": (lambda w, o: ["split", w["gold"], "--by", "country", "-o", o], "gold"),
    "run-results-dir": (
        lambda w, o: ["run", w["config"], "--no-store", "--quiet", "--results-dir", o],
        None,
    ),
    "report-o": (lambda w, o: ["report", "latest", "--store", w["store"], "-o", o], "store_file"),
    "runs-export-o": (
        lambda w, o: ["runs", "export", w.run_id, "--store", w["store"], "-o", o],
        "store_file",
    ),
    "judge-cache": (
        lambda w, o: ["judge", w["judge"], "-m", "faithfulness", "--cache", o],
        "judge",
    ),
    "run-cache-dir": (
        lambda w, o: [
            "run",
            w["config"],
            "--no-store",
            "--quiet",
            "--results-dir",
            w.out("rc"),
            "--cache-dir",
            o,
        ],
        None,
    ),
    "cache-export": (lambda w, o: ["cache", "export", o, "--cache", w["cache"]], "cache"),
    "gate-o": (
        lambda w, o: ["gate", w.run_id, "--store", w["store"], "--rule", "qa.f1>=0", "-o", o],
        "store_file",
    ),
    "dataset-stats-o": (lambda w, o: ["dataset", "stats", w["gold"], "-o", o], "gold"),
}

for name, (build_out, inp) in OUTPUTS.items():
    directory = name not in ("run-results-dir", "run-cache-dir")  # folders may be folders
    if directory:
        case(
            f"{name}-is-a-directory",
            lambda w, b=build_out, n=name: b(w, w.folder(f"outdir-{n}")),
            lambda w, n=name: f"outdir-{n}",
        )
    case(
        f"{name}-under-a-file",
        lambda w, b=build_out, n=name: b(w, os.path.join(w.write(f"plain-{n}", "x"), "out")),
        lambda w, n=name: f"plain-{n}",
    )
    if inp is not None:
        case(
            f"{name}-is-an-input",
            lambda w, b=build_out, i=inp: b(w, w[i]),
            lambda w, i=inp: os.path.basename(w[i]),
        )
