"""A small task registered only in tests, to exercise the pipeline's own machinery (caching,
strata, saving, gates) independently of any engine. Real engines are tested end to end in
test_engines_*.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter import registry
from ragmeter.registry import MetricDef, TaskDef
from ragmeter.result import Aggregate, Result
from ragmeter.runner import tasks as task_mod
from ragmeter.runner.outputs import OutputFile
from ragmeter.runner.tasks.base import TaskAdapter, TaskContext, TaskOptions
from ragmeter.store.records import SampleRecord

TOY_TASK = TaskDef(
    "toy",
    "tests.runner.toy",
    "exact match of the answer, and a pooled character ratio",
    (
        MetricDef("toy", "match", "1 if the answer equals a gold answer", "ragmeter", default=True),
        MetricDef(
            "toy",
            "pooled",
            "matched characters over all characters",
            "ragmeter",
            level="corpus",
            default=True,
        ),
        MetricDef(
            "toy",
            "length",
            "answer length",
            "ragmeter",
            aliases=("len",),
            range=(0, None),
            direction="lower",
        ),
    ),
)


class ToyOptions(TaskOptions):
    lowercase: bool = True


class ToyAdapter(TaskAdapter):
    name = "toy"
    options = ToyOptions
    outputs = ("answers",)
    calls = 0

    def units(self, gold):  # type: ignore[no-untyped-def]
        from ragmeter.datasets.views import Unit

        return [Unit(qa.qid, s, qa) for s in gold for qa in s.qa_pairs if qa.golds]

    def evaluate(self, ctx: TaskContext, outputs: Mapping[str, OutputFile]) -> Result:
        type(self).calls += 1
        answers = outputs["answers"].records
        ids, match, length, statuses = [], [], [], []
        hit_chars = all_chars = 0
        for u in ctx.units:
            out = answers.get(u.id)
            ids.append(u.id)
            if out is None or out.answer is None:
                match.append(None)
                length.append(None)
                statuses.append("no_gold")
                continue
            a = out.answer.lower() if ctx.options.lowercase else out.answer
            golds = [g.lower() if ctx.options.lowercase else g for g in u.qa.golds]
            ok = a in golds
            match.append(1.0 if ok else 0.0)
            length.append(float(len(a)))
            statuses.append("ok")
            all_chars += len(a)
            hit_chars += len(a) if ok else 0
            ctx.progress(1)
        values: dict[str, Any] = {"match": match, "length": length}
        wanted = set(ctx.metric_names)
        values = {k: v for k, v in values.items() if k in wanted}
        aggs = {}
        if "pooled" in wanted:
            aggs["pooled"] = (
                Aggregate(hit_chars / all_chars, len(ids), {"ok": len(ids)})
                if all_chars
                else Aggregate(None, 0, {}, reason="no characters")
            )
        return Result.from_columns("toy", ids, values, statuses=statuses, aggregates=aggs)

    def records(self, ctx, outputs):  # type: ignore[no-untyped-def]
        answers = outputs["answers"].records
        return [
            SampleRecord(
                u.id,
                u.sample.id,
                dict(u.sample.strata),
                {
                    "input": {"question": u.qa.question},
                    "gold": {"answers": u.qa.golds},
                    "output": {"answer": answers[u.id].answer if u.id in answers else None},
                },
            )
            for u in ctx.units
        ]


def install() -> ToyAdapter:
    registry.register(TOY_TASK)
    adapter = ToyAdapter()
    ToyAdapter.calls = 0
    task_mod.register_adapter(adapter)
    return adapter


def uninstall() -> None:
    registry._tasks.pop("toy", None)
    task_mod.unregister_adapter("toy")


GOLD = [
    {
        "id": f"s{i}",
        "strata": {"country": "NL" if i % 2 else "BE", "tier": i % 3},
        "qa_pairs": [
            {"qid": f"s{i}-q1", "question": f"What is {i}?", "golden_answers": [f"answer {i}"]}
        ],
    }
    for i in range(12)
]


def write_project(root: Path, *, gates: dict | None = None, extra: str = "") -> Path:
    """gold.jsonl, two systems' answers and a ragmeter.yaml under ``root``."""
    (root / "outputs").mkdir(parents=True, exist_ok=True)
    (root / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLD))
    base = [{"id": f"s{i}-q1", "answer": f"answer {i}" if i % 3 else "wrong"} for i in range(12)]
    good = [{"id": f"s{i}-q1", "answer": f"ANSWER {i}" if i != 5 else "nope"} for i in range(12)]
    (root / "outputs" / "base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in base))
    (root / "outputs" / "good.jsonl").write_text("".join(json.dumps(r) + "\n" for r in good))
    gates_yaml = ""
    if gates is not None:
        import yaml

        gates_yaml = yaml.safe_dump({"gates": gates}, sort_keys=False)
    config = f"""\
project: toy-project
dataset:
  path: gold.jsonl
systems:
  - name: base
    version: "1.0"
    outputs: {{answers: outputs/base.jsonl}}
  - name: good
    outputs:
      answers: outputs/good.jsonl
    tags: [candidate]
tasks:
  toy: {{metrics: [match, pooled, len]}}
stratify_by: [country]
{gates_yaml}{extra}"""
    path = root / "ragmeter.yaml"
    path.write_text(config)
    return path
