"""Grounded-QA scorer with CI gates (docs/answers.md), ``ragmeter grounded``.

A reimplementation of the stdlib reference scorer ``score_eval.py`` of the WFGY ProblemMap
(onestardao/WFGY): the same output keys, key order and values on well-formed data, plus
validation (one-line errors with file and line), a warning for every upstream quirk, per-item
explanations and gates evaluated on unrounded values.

Definitions, with S shipped answers, R refusals, A answerable and U unanswerable gold items:
C = some gold substring of ≥ 5 characters occurs in the claim (case-insensitive; vacuously true
when the gold lists none); H = the citations are a list, all of them were retrieved, and at
least one is a gold citation (when the gold has none: the list is empty).

* precision = |{x ∈ S ∩ A : C ∧ H}| / |S| (1.0 if S is empty)
* chr = |{x ∈ S ∩ A : H}| / |S| (1.0 if S is empty)
* under_refusal = |S ∩ U| / |U|, over_refusal = |R ∩ A| / |A| (0.0 if empty)
* recall@k = |{x ∈ A : gold_citations ⊆ top-k(retrieved_ids)}| / |A| (0.0 if A is empty)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ragmeter.answers.grounded_report import (
    _OUTPUT_KEYS,
    Gate,  # noqa: F401  (still importable from here)
    GroundedReport,
    GroundedWarning,
    parse_gates,
)
from ragmeter.errors import InputError, UsageError

__all__ = [
    "DEFAULT_GATES",
    "GroundedReport",
    "GroundedWarning",
    "parse_gates",
    "score",
]

# the default thresholds, declared once: `ragmeter grounded` and the runner's "grounded" gate
# profile (ragmeter.runner.gates) both read them
DEFAULT_GATES = "precision=0.80,chr=0.75,under=0.05,over=0.10"
REFUSAL_TOKEN = "not in context"
MISSING_TRACE = ("answered", "refused", "error")
MIN_SUBSTR = 5


def _rows(rows: Iterable[Any]) -> Iterable[tuple[int, Any]]:
    for i, row in enumerate(rows, start=1):
        if isinstance(row, tuple) and len(row) == 2 and isinstance(row[0], int):
            yield row
        else:
            yield i, row


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _hashable_list(value: Any, what: str, where: dict[str, Any]) -> list[Any]:
    for item in value:
        if isinstance(item, (list, dict)):
            raise InputError(
                f"{what} contains {_show(item)} (expected ids: strings or numbers)", **where
            )
    return value


def _qids(qids: Iterable[str], limit: int = 8) -> str:
    qids = list(qids)
    shown = ", ".join(qids[:limit])
    return shown + (f", … ({len(qids)} in all)" if len(qids) > limit else "")


_PUNCT = re.compile(r"[^\w\s]")


def score(
    gold_rows: Iterable[Any],
    trace_rows: Iterable[Any],
    *,
    k: int = 5,
    gates: str | Mapping[str, Any] | None = DEFAULT_GATES,
    refusal_token: str = REFUSAL_TOKEN,
    missing_trace: str = "answered",
    gold_path: str | None = None,
    trace_path: str | None = None,
) -> GroundedReport:
    """Score grounded answers against a gold set, as the WFGY reference scorer does.

    Parameters
    ----------
    gold_rows, trace_rows : iterable
        JSON objects (dicts), or ``(line_number, dict)`` pairs so errors can name the line.
    k : int, default 5
        Cut-off of recall@k.
    gates : str or mapping, default ``"precision=0.80,chr=0.75,under=0.05,over=0.10"``
        Thresholds: precision ≥, chr ≥, under ≤, over ≤, and optionally recall ≥.
    refusal_token : str, default ``"not in context"``
        A claim is a refusal iff ``claim.strip().lower()`` equals it.
    missing_trace : {"answered", "refused", "error"}, default "answered"
        A gold item without trace line: a shipped empty claim (the reference's behaviour), a
        refusal, or an error.
    gold_path, trace_path : str, optional
        File names for error messages.

    Returns
    -------
    GroundedReport

    Examples
    --------
    >>> gold = [{"qid": "A1", "answerable": True, "gold_claim_substr": ["rejects null keys"],
    ...          "gold_citations": ["p1#2"]},
    ...         {"qid": "A2", "answerable": False, "gold_claim_substr": [], "gold_citations": []}]
    >>> trace = [{"qid": "A1", "retrieved_ids": ["p1#2"],
    ...           "answer_json": {"claim": "X rejects null keys.", "citations": ["p1#2"]}},
    ...          {"qid": "A2", "retrieved_ids": [],
    ...           "answer_json": {"claim": "not in context", "citations": []}}]
    >>> r = score(gold, trace)
    >>> r.passed, r.output["precision"], r.output["under_refusal"]
    (True, 1.0, 0.0)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"--k must be a positive integer, not {k!r}")
    if missing_trace not in MISSING_TRACE:
        raise UsageError(
            f"--missing-trace must be answered, refused or error, not {missing_trace!r}"
        )
    token = refusal_token.strip().lower()
    if not token:
        raise UsageError("--refusal-token is empty (expected e.g. 'not in context')")
    gate_list = parse_gates(gates)
    gpath = gold_path or "gold"
    tpath = trace_path or "trace"

    gold: dict[str, dict[str, Any]] = {}
    gold_lines: dict[str, int] = {}
    missing_substr: list[str] = []
    missing_cites: list[str] = []
    for line, row in _rows(gold_rows):
        where = {"path": gpath, "line": line}
        if not isinstance(row, Mapping):
            raise InputError("not a JSON object (expected one gold item per line)", **where)
        qid = row.get("qid")
        if not isinstance(qid, str) or not qid:
            raise InputError(
                f"qid is {_show(qid) if 'qid' in row else 'missing'} (expected a non-empty string)",
                **where,
            )
        if qid in gold:
            raise InputError(
                f"duplicate qid {qid!r} (first on line {gold_lines[qid]}; expected one line per "
                "qid)",
                **where,
            )
        answerable = row.get("answerable")
        if not isinstance(answerable, bool):
            shown = _show(answerable) if "answerable" in row else "missing"
            raise InputError(f"answerable is {shown} (expected a JSON boolean)", **where)
        subs = row.get("gold_claim_substr")
        if subs is None:
            missing_substr.append(qid)
            subs = []
        elif not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
            raise InputError(
                f"gold_claim_substr is {_show(subs)} (expected a list of strings)", **where
            )
        cites = row.get("gold_citations")
        if cites is None:
            missing_cites.append(qid)
            cites = []
        elif not isinstance(cites, list):
            raise InputError(f"gold_citations is {_show(cites)} (expected a list of ids)", **where)
        _hashable_list(cites, "gold_citations", where)
        gold[qid] = {"answerable": answerable, "subs": subs, "cites": cites}
        gold_lines[qid] = line
    if not gold:
        raise InputError("no gold items (expected one JSON object per line)", path=gpath)

    traces: dict[str, dict[str, Any]] = {}
    duplicate: list[str] = []
    unknown: list[str] = []
    no_qid_lines: list[int] = []
    n_trace = 0
    for line, row in _rows(trace_rows):
        n_trace += 1
        where = {"path": tpath, "line": line}
        if not isinstance(row, Mapping):
            raise InputError("not a JSON object (expected one trace per line)", **where)
        qid = row.get("qid") or row.get("q_id")
        if not qid:
            no_qid_lines.append(line)
            continue
        if not isinstance(qid, str):
            raise InputError(f"qid is {_show(qid)} (expected a string)", **where)
        aj = row.get("answer_json")
        if aj is None:
            # a trace line without its answer is bad input, not a shipped empty claim that
            # would fail the gates (exit 1) while the real fault went unnamed (issue 17)
            raise InputError(
                "no answer_json (expected an object with claim and citations)", **where
            )
        if not isinstance(aj, Mapping):
            raise InputError(f"answer_json is {_show(aj)} (expected an object)", **where)
        claim = aj.get("claim")
        if claim is None:
            claim = ""
        if not isinstance(claim, str):
            raise InputError(f"answer_json.claim is {_show(claim)} (expected a string)", **where)
        cits = aj.get("citations") or []
        if isinstance(cits, list):
            _hashable_list(cits, "answer_json.citations", where)
        retrieved = row.get("retrieved_ids") or []
        if not isinstance(retrieved, list):
            raise InputError(
                f"retrieved_ids is {_show(retrieved)} (expected a ranked list of ids)", **where
            )
        _hashable_list(retrieved, "retrieved_ids", where)
        if qid in traces and qid not in duplicate:
            duplicate.append(qid)
        if qid not in gold and qid not in unknown:
            unknown.append(qid)
        traces[qid] = {"claim": claim, "cits": cits, "ret": retrieved}  # the last one wins
    if n_trace == 0:
        raise InputError("no trace lines (expected one JSON object per line)", path=tpath)

    missing = [q for q in gold if q not in traces]
    if missing and missing_trace == "error":
        raise InputError(
            f"no trace line for gold qid {_qids(missing)} (expected one per gold item, or "
            "--missing-trace answered|refused)",
            path=tpath,
        )

    n_s = n_r = n_a = n_u = 0
    tp = chr_hit = under = over = rec = 0
    items: list[dict[str, Any]] = []
    near_miss: list[str] = []
    vacuous: list[str] = []
    unsatisfiable: list[str] = []
    empty_cites: list[str] = []
    not_list: list[str] = []
    for qid, g in gold.items():
        answerable = g["answerable"]
        subs, gcites = g["subs"], g["cites"]
        notes: list[str] = []
        t = traces.get(qid)
        if t is None:
            claim_raw, cits, ret = "", [], []
            if missing_trace == "refused":
                notes.append("no trace line: counted as a refusal (--missing-trace refused)")
            else:
                notes.append(
                    "no trace line: treated as a shipped empty claim with no citations and no "
                    "retrieved ids"
                )
        else:
            claim_raw, cits, ret = t["claim"], t["cits"], t["ret"]
        claim = claim_raw.strip()
        refused = claim.lower() == token or (t is None and missing_trace == "refused")
        if answerable:
            n_a += 1
            if not gcites:
                empty_cites.append(qid)
            if subs == []:
                vacuous.append(qid)
            elif all(len(s) < MIN_SUBSTR for s in subs):
                unsatisfiable.append(qid)
        else:
            n_u += 1
        item: dict[str, Any] = {
            "qid": qid,
            "answerable": answerable,
            "answered": not refused,
            "containment": None,
            "citation_hit": None,
            "recall_hit": None,
            "counted_as": [],
            "notes": notes,
        }
        if refused:
            n_r += 1
            if t is not None:
                notes.append(f"claim {claim_raw!r} equals the refusal token after strip+lower")
            if answerable:
                over += 1
                item["counted_as"].append("over_refusal")
            else:
                item["counted_as"].append("correct_refusal")
        else:
            n_s += 1
            if t is not None and claim and _PUNCT.sub("", claim.lower()).split() == token.split():
                near_miss.append(qid)
                notes.append(
                    f"{claim!r} is not the refusal token {token!r} (compared after strip+lower)"
                )
            c = _containment(claim, subs, notes)
            h = _citation_hit(cits, gcites, ret, notes, qid, not_list)
            item["containment"], item["citation_hit"] = c, h
            if not answerable:
                under += 1
                item["counted_as"].append("under_refusal")
                notes.append("unanswerable but answered: an under-refusal")
            else:
                if c and h:
                    tp += 1
                    item["counted_as"].append("precision_tp")
                if h:
                    chr_hit += 1
                    item["counted_as"].append("chr_hit")
        if answerable:
            top = set(ret[:k])
            missing_ids = [c for c in gcites if c not in top]
            hit = not missing_ids
            item["recall_hit"] = hit
            if hit:
                rec += 1
            else:
                for cid in missing_ids:
                    if cid in ret:
                        notes.append(
                            f"{cid} is at rank {ret.index(cid) + 1}; recall@k needs every gold "
                            "citation in the top k"
                        )
                    else:
                        notes.append(f"gold citation {cid} was not retrieved")
        items.append(item)

    exact = {
        "precision": (tp / n_s) if n_s else 1.0,
        "chr": (chr_hit / n_s) if n_s else 1.0,
        "under_refusal": (under / n_u) if n_u else 0.0,
        "over_refusal": (over / n_a) if n_a else 0.0,
        "recall@k": (rec / n_a) if n_a else 0.0,
    }
    passed = all(g.check(exact[g.key]) for g in gate_list)
    output = {
        "answered": n_s,
        "refused": n_r,
        "answerable": n_a,
        "unanswerable": n_u,
        **{key: round(exact[key], 4) for key in _OUTPUT_KEYS},
        "k": k,
        "gates": {g.name: g.text for g in gate_list},
        "pass": passed,
    }

    warnings: list[GroundedWarning] = []

    def add(kind: str, qids: list[str], message: str) -> None:
        warnings.append(GroundedWarning(kind, tuple(qids), message))

    if missing:
        how = (
            "counted as refusals"
            if missing_trace == "refused"
            else "scored as shipped empty claims with no citations"
        )
        add(
            "missing_trace",
            missing,
            f"{len(missing)} gold item(s) have no trace line ({_qids(missing)}); {how}",
        )
    if missing_substr:
        add(
            "missing_gold_claim_substr",
            missing_substr,
            f"gold_claim_substr is missing for {_qids(missing_substr)}; treated as [] "
            "(the reference scorer would make containment never true)",
        )
    if vacuous:
        add(
            "empty_gold_claim_substr",
            vacuous,
            f"answerable item(s) {_qids(vacuous)} have an empty gold_claim_substr: containment "
            "is vacuously true, any correctly cited claim counts as precise",
        )
    if unsatisfiable:
        add(
            "unsatisfiable_gold_claim_substr",
            unsatisfiable,
            f"every gold_claim_substr of {_qids(unsatisfiable)} is shorter than {MIN_SUBSTR} "
            "characters: containment can never be true",
        )
    if near_miss:
        add(
            "refusal_near_miss",
            near_miss,
            f"claim(s) of {_qids(near_miss)} are the refusal token with punctuation: counted as "
            f"shipped answers, not refusals (token {token!r})",
        )
    if empty_cites:
        add(
            "empty_gold_citations",
            empty_cites,
            f"answerable item(s) {_qids(empty_cites)} have no gold_citations: the recall@k hit "
            "is vacuous and only an empty citation list counts as a citation hit",
        )
    if missing_cites:
        add(
            "missing_gold_citations",
            missing_cites,
            f"gold_citations is missing for {_qids(missing_cites)}; treated as []",
        )
    if not_list:
        add(
            "citations_not_a_list",
            not_list,
            f"answer_json.citations is not a list for {_qids(not_list)}: no citation hit",
        )
    if duplicate:
        add(
            "duplicate_trace",
            duplicate,
            f"{len(duplicate)} qid(s) have several trace lines ({_qids(duplicate)}); the last "
            "one is used",
        )
    if unknown:
        add(
            "unknown_trace_qid",
            unknown,
            f"{len(unknown)} trace qid(s) are not in the gold file ({_qids(unknown)}); ignored",
        )
    if no_qid_lines:
        shown = ", ".join(str(x) for x in no_qid_lines[:8])
        add(
            "trace_without_qid",
            [],
            f"{len(no_qid_lines)} trace line(s) have no qid (lines {shown}); ignored",
        )
    if n_s == 0:
        add("no_answers_shipped", [], "no answers shipped: precision/chr are vacuous (1.0)")

    return GroundedReport(
        output=output,
        exact=exact,
        passed=passed,
        items=items,
        warnings=warnings,
        gates=gate_list,
        k=k,
        refusal_token=token,
        counts={"answered": n_s, "refused": n_r, "answerable": n_a, "unanswerable": n_u},
    )


def _containment(claim: str, subs: list[str], notes: list[str]) -> bool:
    c = claim.lower()
    if subs == []:
        notes.append("empty gold_claim_substr: vacuous containment")
        return True
    usable = [s for s in subs if len(s) >= MIN_SUBSTR]
    if any(s.lower() in c for s in usable):
        return True
    if not usable:
        notes.append(f"every gold_claim_substr is shorter than {MIN_SUBSTR} characters")
    else:
        notes.append("no gold_claim_substr occurs in the claim (case-insensitive)")
    return False


def _citation_hit(
    cits: Any,
    gold: list[Any],
    retrieved: list[Any],
    notes: list[str],
    qid: str,
    not_list: list[str],
) -> bool:
    if not isinstance(cits, list):
        notes.append("citations are not a list")
        not_list.append(qid)
        return False
    ret = set(retrieved)
    outside = [c for c in cits if c not in ret]
    if outside:
        notes.append("cited id " + ", ".join(str(c) for c in outside) + " is not in retrieved_ids")
        return False
    if gold:
        if set(cits) & set(gold):
            return True
        notes.append("no cited id is among gold_citations")
        return False
    if cits == []:
        return True
    notes.append("gold_citations is empty: only an empty citation list is a hit")
    return False
