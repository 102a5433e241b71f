"""graphrag-eval files for ``ragmeter judge --format graphrag`` (docs/judge.md).

Input: graphrag-eval per-question records (the output of ``run_evaluation`` or ``ragmeter
steps``: ``question_id``, ``template_id``, ``question_text``, ``reference_answer``,
``reference_steps``, ``actual_answer``, ``actual_steps``), as YAML, JSON or JSONL; or a
responses file plus ``--reference`` (graphrag-eval reference templates), joined by question id.
Every actual step named ``retrieval`` whose output is a JSON list of ``{id, text}`` documents
is a step sample ``<question_id>/<step id>``: ``retrieval_answer_*`` when the question has a
reference answer, ``retrieval_context_*`` when a reference ``retrieval`` step is matched to it
(its ``matches`` annotation). Output: the same records with graphrag-eval's keys written back,
and aggregates shaped like graphrag-eval's ``per_template`` / ``micro`` / ``macro``.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter import status as st
from ragmeter.errors import InputError
from ragmeter.judge.metrics._common import Sample

__all__ = [
    "DEFAULT_METRICS",
    "GraphragInput",
    "graphrag_output",
    "judge_groups",
    "read_graphrag",
    "stats",
]

QUESTION_PIPES = (
    "answer_correctness",
    "answer_relevance",
    "faithfulness",
    "context_precision",
    "context_utilization",
    "context_recall",
    "context_entity_recall",
)
STEP_FAMILIES = ("retrieval_answer", "retrieval_context")
INVALID_OUTPUT = "no_claims: invalid retrieval output"
# what graphrag-eval's judged evaluation computes when no metric is named
DEFAULT_METRICS = (
    "answer_correctness",
    "answer_relevance",
    "retrieval_answer_f1",
    "retrieval_context_f1",
)


@dataclass
class GraphragInput:
    records: list[dict[str, Any]]
    question_samples: list[Sample] = field(default_factory=list)
    step_samples: dict[str, list[Sample]] = field(default_factory=dict)  # family → samples
    step_where: dict[str, tuple[int, int]] = field(default_factory=dict)  # sample id → (rec, step)
    invalid: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # family → steps
    path: str = ""

    @property
    def samples(self) -> list[Sample]:
        out = list(self.question_samples)
        for fam in STEP_FAMILIES:
            out.extend(self.step_samples.get(fam, ()))
        return out


def _load(path: str) -> tuple[Any, dict[int, int]]:
    """The file's data, and the line of each top-level list item where the format tells it."""
    from ragmeter.io.files import open_text

    with open_text(path, allow_stdin=True) as fh:
        text = fh.read()
    lower = path.lower()
    if lower.endswith((".yaml", ".yml")):
        from ragmeter.io import yamlsafe
        from ragmeter.judge.config import yaml_key_lines

        data = yamlsafe.load(text, path)
        lines = yaml_key_lines(text) if isinstance(data, list) else {}
        return data, {int(k[0]): v for k, v in lines.items() if len(k) == 1 and k[0].isdigit()}
    if lower.endswith((".jsonl", ".jsonl.gz")):
        from ragmeter.io.jsonl import read_jsonl

        pairs = read_jsonl(path)
        return [obj for _, obj in pairs], {i: line for i, (line, _) in enumerate(pairs)}
    try:
        return json.loads(text), {}
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None


# what a graphrag-eval per-question record always has, and what only a plain sample has
_RECORD_KEYS = ("template_id", "question_id", "question_text")
_PLAIN_KEYS = ("question", "answer", "contexts", "reference")


def _check_record(rec: Mapping[str, Any], i: int, path: str, lines: Mapping[int, int]) -> None:
    """A record without graphrag-eval's keys is refused with its line, never judged as
    template ``None`` (plain samples belong to the default ``--format ragmeter``)."""
    missing = [k for k in _RECORD_KEYS if rec.get(k) is None]
    if not missing:
        return
    where = {"line": lines[i]} if i in lines else {"location": f"record {i + 1}"}
    expected = "expected graphrag-eval per-question records with " + ", ".join(_RECORD_KEYS)
    if any(k in rec for k in _PLAIN_KEYS):
        raise InputError(
            f"a plain judge sample, not a graphrag-eval record ({expected}; "
            "plain samples need --format ragmeter)",
            path=path,
            **where,
        )
    raise InputError(f"record has no {missing[0]} ({expected})", path=path, **where)


def _as_list(data: Any, path: str, what: str) -> list[dict[str, Any]]:
    if isinstance(data, Mapping):  # a JSON object keyed by question id
        out = []
        for k, v in data.items():
            if not isinstance(v, Mapping):
                raise InputError(f"{what} {k!r} is not an object", path=path)
            out.append({"question_id": k, **v} if "question_id" not in v else dict(v))
        return out
    if not isinstance(data, list) or not all(isinstance(x, Mapping) for x in data):
        raise InputError(f"expected a list of {what} objects", path=path)
    return [dict(x) for x in data]


def _documents(output: Any) -> list[str] | None:
    """Texts of a retrieval step's output (a JSON list of objects with ``text``), else None."""
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except json.JSONDecodeError:
            return None
    if not isinstance(output, list):
        return None
    texts = []
    for doc in output:
        if not isinstance(doc, Mapping) or not isinstance(doc.get("text"), str):
            return None
        texts.append(doc["text"])
    return texts


def _join_reference(responses: list[dict[str, Any]], ref_path: str) -> list[dict[str, Any]]:
    templates, _ = _load(ref_path)
    if not isinstance(templates, list):
        raise InputError("expected a list of templates with questions", path=ref_path)
    by_id = {str(r.get("question_id")): r for r in responses}
    out = []
    for t in templates:
        if (
            not isinstance(t, Mapping)
            or t.get("template_id") is None
            or not isinstance(t.get("questions"), list)
        ):
            raise InputError("a template needs template_id and a list of questions", path=ref_path)
        for q in t["questions"]:
            if not isinstance(q, Mapping) or "id" not in q:
                raise InputError(
                    f"template {t.get('template_id')!r}: a question has no id", path=ref_path
                )
            qid = str(q["id"])
            if qid not in by_id:
                raise InputError(
                    f"question {qid!r} has no response (expected one per reference question)",
                    path=ref_path,
                )
            rec = {
                "template_id": t.get("template_id"),
                "question_id": qid,
                "question_text": q.get("question_text"),
            }
            for k in ("reference_answer", "reference_steps"):
                if k in q:
                    rec[k] = copy.deepcopy(q[k])
            resp = by_id[qid]
            for k, v in resp.items():
                if k not in ("question_id",):
                    rec[k] = copy.deepcopy(v)
            out.append(rec)
    return out


def read_graphrag(
    path: str | os.PathLike[str],
    *,
    reference: str | os.PathLike[str] | None = None,
    pipelines: Sequence[str] = (),
) -> GraphragInput:
    name = os.fspath(path)
    data, lines = _load(name)
    records = _as_list(data, name, "record")
    if reference is not None:
        records = _join_reference(records, os.fspath(reference))
    else:
        records = copy.deepcopy(records)
        for i, rec in enumerate(records):
            _check_record(rec, i, name, lines)
    gr = GraphragInput(records, path=name)
    seen: set[str] = set()
    for i, rec in enumerate(records):
        qid = rec.get("question_id", rec.get("id"))
        if qid is None:
            raise InputError(f"record {i + 1} has no question_id", path=name)
        qid = str(qid)
        if qid in seen:
            raise InputError(f"question id {qid!r} appears twice", path=name)
        seen.add(qid)
        rec.pop("matches", None)
        steps = rec.get("actual_steps") or []
        docs_all: list[str] = []
        ref_by_match: dict[str, list[str] | None] = {}
        for group in rec.get("reference_steps") or []:
            for rs in group if isinstance(group, list) else []:
                if (
                    isinstance(rs, Mapping)
                    and rs.get("name") == "retrieval"
                    and rs.get("matches") is not None
                ):
                    ref_by_match[str(rs["matches"])] = _documents(rs.get("output"))
        for j, step in enumerate(steps if isinstance(steps, list) else []):
            if not isinstance(step, Mapping) or step.get("name") != "retrieval":
                continue
            docs = _documents(step.get("output")) if "output" in step else None
            sid = f"{qid}/{step.get('id', j)}"
            if docs is not None:
                docs_all.extend(docs)
            for fam in STEP_FAMILIES:
                if fam not in pipelines:
                    continue
                if fam == "retrieval_answer":
                    applies = rec.get("reference_answer") is not None
                    ref_ctx = None
                else:
                    applies = str(step.get("id")) in ref_by_match
                    ref_ctx = ref_by_match.get(str(step.get("id")))
                if not applies:
                    continue
                if docs is None or (fam == "retrieval_context" and ref_ctx is None):
                    gr.invalid.setdefault(fam, []).append((i, j))
                    continue
                gr.step_samples.setdefault(fam, []).append(
                    Sample(
                        sid,
                        question=rec.get("question_text") or "",
                        reference=rec.get("reference_answer"),
                        contexts=tuple(docs),
                        reference_contexts=tuple(ref_ctx) if ref_ctx is not None else None,
                        template_id=None
                        if rec.get("template_id") is None
                        else str(rec["template_id"]),
                    )
                )
                gr.step_where[sid] = (i, j)
        gr.question_samples.append(
            Sample(
                qid,
                question=rec.get("question_text"),
                answer=rec.get("actual_answer"),
                reference=rec.get("reference_answer"),
                contexts=tuple(docs_all),
                template_id=None if rec.get("template_id") is None else str(rec["template_id"]),
            )
        )
    return gr


def stats(series: Sequence[float]) -> dict[str, Any]:
    """``{sum, mean, median, min, max}`` with Python semantics (docs/steps.md); zeros if empty.

    >>> stats([1, 2])
    {'sum': 3, 'mean': 1.5, 'median': 1.5, 'min': 1, 'max': 2}
    >>> stats([])
    {'sum': 0, 'mean': 0, 'median': 0, 'min': 0, 'max': 0}
    """
    if not series:
        return {"sum": 0, "mean": 0, "median": 0, "min": 0, "max": 0}
    total: float = 0
    for v in series:
        total += v
    return {
        "sum": total,
        "mean": statistics.mean(series),
        "median": statistics.median(series),
        "min": min(series),
        "max": max(series),
    }


def _err(status: str, detail: str | None) -> str:
    return f"{status}: {detail}"


def graphrag_output(
    gr: GraphragInput, results: Iterable[Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Write judged keys back onto the records; aggregate them graphrag-eval style."""
    records = gr.records
    by_id = {str(r.get("question_id", r.get("id"))): i for i, r in enumerate(records)}
    scalar_keys: list[str] = []
    judge_meta: dict[str, Any] | None = None
    cost: dict[str, Any] = {
        "calls_sent": 0,
        "cache_hits": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "usd": 0.0,
        "usd_unknown_calls": 0,
    }
    for res in results:
        judge_meta = judge_meta or res.metadata.get("judge")
        for k, v in (res.metadata.get("cost") or {}).items():
            if k in cost and isinstance(v, (int, float)) and isinstance(cost[k], (int, float)):
                cost[k] += v
        for rec in res.records:
            sid, metric = rec["id"], rec["metric"]
            if sid in gr.step_where:
                i, j = gr.step_where[sid]
                _write_step(records[i]["actual_steps"][j], rec)
            elif sid in by_id:
                target = records[by_id[sid]]
                for key in _write_question(target, rec):
                    if key not in scalar_keys:
                        scalar_keys.append(key)
                _ = metric
    for fam, where in gr.invalid.items():
        for i, j in where:
            step = records[i]["actual_steps"][j]
            for part in ("recall", "precision"):
                step[f"{fam}_{part}_error"] = INVALID_OUTPUT
    summary = _aggregates(records, scalar_keys)
    summary["judge"] = judge_meta
    summary["cost"] = cost
    return summary, records


def _write_question(target: dict[str, Any], rec: Mapping[str, Any]) -> list[str]:
    metric = rec["metric"]
    ok = rec["status"] == st.OK
    if metric == "answer_correctness":
        if target.get("reference_answer") is None or target.get("actual_answer") is None:
            return []
        if ok:
            target["answer_reference_claims_count"] = rec["answer_reference_claims_count"]
            target["answer_actual_claims_count"] = rec["answer_actual_claims_count"]
            target["answer_matching_claims_count"] = rec["answer_matching_claims_count"]
            target["answer_correctness_reason"] = rec["answer_correctness_reason"]
            target["answer_recall"] = rec["answer_recall"]
            target["answer_precision"] = rec["answer_precision"]
            target["answer_f1"] = rec["value"]
            return ["answer_recall", "answer_precision", "answer_f1"]
        target["answer_correctness_error"] = _err(rec["status"], rec["detail"])
        return []
    if metric == "answer_relevance" and target.get("actual_answer") is None:
        return []
    if ok:
        target[metric] = rec["value"]
        keys = [metric]
        if metric == "faithfulness":
            target["faithfulness_contradiction_rate"] = rec["faithfulness_contradiction_rate"]
            keys.append("faithfulness_contradiction_rate")
        return keys
    target[f"{metric}_error"] = _err(rec["status"], rec["detail"])
    return []


def _write_step(step: dict[str, Any], rec: Mapping[str, Any]) -> None:
    fam = rec["metric"].rsplit("_", 1)[0]  # retrieval_answer_f1 → retrieval_answer
    parts = {
        "recall": (rec.get(f"{fam}_recall_status", st.OK), rec.get(f"{fam}_recall")),
        "precision": (rec.get(f"{fam}_precision_status", st.OK), rec.get(f"{fam}_precision")),
    }
    expl_detail = rec.get("detail")
    for part, (status, value) in parts.items():
        if status == st.OK and value is not None:
            step[f"{fam}_{part}"] = value
        else:
            detail = (
                rec.get(f"{fam}_{part}_detail")
                if status != rec["status"] or part == "recall"
                else None
            )
            step[f"{fam}_{part}_error"] = _err(
                status, detail or rec.get(f"{fam}_{part}_detail") or expl_detail
            )
        cost = rec.get(f"{fam}_{part}_cost")
        if cost is not None:
            step[f"{fam}_{part}_cost"] = cost
    if rec["status"] == st.OK:
        step[f"{fam}_f1"] = rec["value"]
        if rec.get(f"{fam}_f1_cost") is not None:
            step[f"{fam}_f1_cost"] = rec[f"{fam}_f1_cost"]


def _aggregates(records: list[dict[str, Any]], scalar_keys: list[str]) -> dict[str, Any]:
    step_keys = [f"{fam}_{p}" for fam in STEP_FAMILIES for p in ("recall", "precision", "f1")]
    order: list[str] = []
    per: dict[str, dict[str, Any]] = {}
    series: dict[str, dict[str, list[float]]] = {}
    step_series: dict[str, dict[str, list[float]]] = {}
    for rec in records:
        tid = str(rec.get("template_id"))
        if tid not in per:
            order.append(tid)
            per[tid] = {"number_of_error_samples": 0, "number_of_success_samples": 0}
            series[tid] = {}
            step_series[tid] = {}
        per[tid]["number_of_error_samples" if "error" in rec else "number_of_success_samples"] += 1
        for k in scalar_keys:
            v = rec.get(k)
            if isinstance(v, (int, float)):
                series[tid].setdefault(k, []).append(v)
        for step in rec.get("actual_steps") or []:
            if isinstance(step, Mapping) and step.get("name") == "retrieval":
                for k in step_keys:
                    v = step.get(k)
                    if isinstance(v, (int, float)):
                        step_series[tid].setdefault(k, []).append(v)
    micro: dict[str, Any] = {
        "number_of_error_samples": sum(per[t]["number_of_error_samples"] for t in order),
        "number_of_success_samples": sum(per[t]["number_of_success_samples"] for t in order),
    }
    macro: dict[str, Any] = {}
    for t in order:
        for k in scalar_keys:
            if series[t].get(k):
                per[t][k] = stats(series[t][k])
        steps = {k: stats(step_series[t][k]) for k in step_keys if step_series[t].get(k)}
        if steps:
            per[t]["steps"] = steps
    for k in scalar_keys:
        pooled = [v for t in order for v in series[t].get(k, [])]
        if pooled:
            micro[k] = stats(pooled)
            macro[k] = {"mean": statistics.mean([per[t][k]["mean"] for t in order if k in per[t]])}
    for k in step_keys:
        pooled = [v for t in order for v in step_series[t].get(k, [])]
        if pooled:
            micro[k] = stats(pooled)
            macro[k] = {
                "mean": statistics.mean(
                    [per[t]["steps"][k]["mean"] for t in order if k in per[t].get("steps", {})]
                )
            }
    return {"per_template": {t: per[t] for t in order}, "micro": micro, "macro": macro}


def judge_groups(
    gr: GraphragInput, pipelines: Sequence[str]
) -> list[tuple[list[Sample], list[str]]]:
    """``(samples, metrics)`` groups to judge: the questions with the question metrics, then each
    step family with its own ``<family>_f1`` (a step sample is judged only by its family)."""
    groups: list[tuple[list[Sample], list[str]]] = []
    q_metrics = [p for p in pipelines if p not in STEP_FAMILIES]
    if q_metrics and gr.question_samples:
        groups.append((gr.question_samples, q_metrics))
    for fam in STEP_FAMILIES:
        if fam in pipelines and gr.step_samples.get(fam):
            groups.append((gr.step_samples[fam], [fam + "_f1"]))
    return groups
