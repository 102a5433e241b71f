"""A small, valid input for every command, written once per session for the ugly-input table.

Each ugly case swaps one of these files (or one option) for something hostile, so a case fails
for exactly the reason its name gives.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import CONFORMANCE

STEPS_DATA = CONFORMANCE / "graphrag_eval" / "tests" / "test_data"
TEXT = "Het Rijksmuseum Amsterdam opende in 1885."


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


GOLD = [
    {
        "id": f"s{i}",
        "text": "…",
        "strata": {"country": "NL" if i % 2 else "BE"},
        "qa_pairs": [
            {"qid": f"s{i}-q1", "question": f"What is {i}?", "golden_answers": [f"answer {i}"]}
        ],
    }
    for i in range(8)
]

RUN_CONFIG = """\
project: ugly
dataset:
  path: {root}/gold.jsonl
systems:
  - name: base
    outputs: {{answers: {root}/outputs/base.jsonl}}
  - name: good
    outputs: {{answers: {root}/outputs/good.jsonl}}
tasks:
  answers: {{metrics: [em, f1]}}
stratify_by: [country]
"""


@dataclass
class World:
    """Paths of the valid inputs (``str``), keyed by a short name, plus a scratch folder."""

    root: Path
    files: dict[str, str] = field(default_factory=dict)
    run_id: str = ""  # a run in the store ``files["store"]``

    def __getitem__(self, key: str) -> str:
        return self.files[key]

    def write(self, name: str, content: str | bytes) -> str:
        """A new file under the world's ``ugly/`` folder (bytes are written as they are)."""
        path = self.root / "ugly" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
        return str(path)

    def folder(self, name: str) -> str:
        """A (new, empty) folder under ``ugly/``: given where a file is expected."""
        path = self.root / "ugly" / name
        path.mkdir(parents=True, exist_ok=True)
        return str(path)

    def out(self, name: str) -> str:
        """A path under ``out/`` for a command's output (the folder exists, the file not)."""
        path = self.root / "out" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return str(path)

    def copy(self, key: str, name: str) -> str:
        """A private copy of a valid input (for cases that might damage what they touch)."""
        path = self.root / "ugly" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.files[key], path)
        return str(path)


def build(root: Path) -> World:
    w = World(root)
    f = w.files

    def put(key: str, name: str, text: str) -> None:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        f[key] = str(path)

    put("qrels", "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    put("run", "a.run", "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.5 r\n")
    put("run_b", "b.run", "q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.5 r\n")
    put(
        "answers",
        "answers.jsonl",
        jsonl(
            [
                {"id": f"q{i}", "question": "?", "golden_answers": [f"a{i}"], "pred_answer": "a1"}
                for i in range(3)
            ]
        ),
    )
    put(
        "g_gold",
        "grounded_gold.jsonl",
        jsonl(
            [
                {
                    "qid": "q1",
                    "answerable": True,
                    "gold_claim_substr": ["the answer is"],
                    "gold_citations": ["d1"],
                }
            ]
        ),
    )
    put(
        "g_trace",
        "grounded_trace.jsonl",
        jsonl(
            [
                {
                    "qid": "q1",
                    "retrieved_ids": ["d1"],
                    "answer_json": {"claim": "The answer is 42.", "citations": ["d1"]},
                }
            ]
        ),
    )
    put(
        "judge",
        "judge.jsonl",
        jsonl(
            [
                {
                    "id": "q1",
                    "question": "Q?",
                    "answer": "A.",
                    "reference": "A.",
                    "contexts": ["A is here"],
                }
            ]
        ),
    )
    for key, name in (
        ("steps_ref", "reference_1.yaml"),
        ("steps_resp", "actual_responses_1.jsonl"),
    ):
        f[key] = str(shutil.copy(STEPS_DATA / name, root / name))
    put("ac_in", "ac.tsv", "Question\tReference answer\tActual answer\nQ?\tA.\tA.\n")
    put("conll_gold", "gold.conll", "Het O\nRijksmuseum B-MUS\nAmsterdam I-MUS\n. O\n")
    put("conll_pred", "pred.conll", "Het O\nRijksmuseum B-MUS\nAmsterdam B-LOC\n. O\n")
    ner = {
        "id": "d1",
        "text": TEXT,
        "ner_annotations": [
            {"text": "Rijksmuseum Amsterdam", "type": "MUS", "start": 4, "end": 25}
        ],
    }
    put("ner_gold", "ner_gold.jsonl", jsonl([ner]))
    put("ner_pred", "ner_pred.jsonl", jsonl([ner]))
    put("cls_gold", "cls_gold.tsv", "id\tlabel\ni1\tA\ni2\tB\n")
    put(
        "cls_pred",
        "cls_pred.jsonl",
        jsonl([{"id": "i1", "label": "A"}, {"id": "i2", "label": "A"}]),
    )
    put("link_gold", "link_gold.jsonl", jsonl([{"mention_id": "m1", "kb_id": "Q1"}]))
    put("link_pred", "link_pred.jsonl", jsonl([{"mention_id": "m1", "candidates": ["Q1"]}]))
    put("agr_a", "rater_a.tsv", "id\tlabel\ni1\tx\ni2\ty\ni3\tx\n")
    put("agr_b", "rater_b.tsv", "id\tlabel\ni1\tx\ni2\tx\ni3\tx\n")
    put("agr_ja", "rater_a.jsonl", jsonl([{"id": f"i{k}", "label": k % 3} for k in range(4)]))
    put("agr_jb", "rater_b.jsonl", jsonl([{"id": f"i{k}", "label": k % 2} for k in range(4)]))
    put("cmp_a", "sys_a.jsonl", jsonl([{"id": f"q{i}", "f1": i / 10} for i in range(5)]))
    put("cmp_b", "sys_b.jsonl", jsonl([{"id": f"q{i}", "f1": i / 9} for i in range(5)]))
    put("gold", "gold.jsonl", jsonl(GOLD))
    base = [{"id": f"s{i}-q1", "answer": f"answer {i}" if i % 3 else "wrong"} for i in range(8)]
    good = [{"id": f"s{i}-q1", "answer": f"answer {i}"} for i in range(8)]
    put("out_base", "outputs/base.jsonl", jsonl(base))
    put("out_good", "outputs/good.jsonl", jsonl(good))
    put("config", "ragmeter.yaml", RUN_CONFIG.format(root=root))
    f["store"] = f"sqlite:///{root / 'runs.db'}"
    f["store_file"] = str(root / "runs.db")
    from tests.helpers import invoke

    done = invoke(
        "run", f["config"], "--store", f["store"], "--quiet", "--results-dir", str(root / "results")
    )
    assert done.code == 0, done.stderr
    listed = invoke("runs", "list", "--json", "--store", f["store"])
    w.run_id = json.loads(listed.stdout)[0]["id"]
    from ragmeter.judge.cache import JudgeCache

    f["cache"] = str(root / "judge-cache.sqlite")
    JudgeCache(f["cache"]).close()
    return w
