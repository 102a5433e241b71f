"""NER scoring: SemEval-2013 outcome counts per schema, P/R/F1 blocks and label averages.

The counts follow nervaluate (COR, INC, PAR, MIS, SPU per schema); the entity block is
seqeval's exact-match score. Called by :func:`~ragmeter.extraction.ner.evaluate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragmeter.extraction.matching import candidate_pairs, match
from ragmeter.extraction.ner_prepare import SCHEMAS, _Sides
from ragmeter.extraction.ner_report import NerReport
from ragmeter.extraction.prf import mean, prf, prf_arrays, weighted_mean
from ragmeter.extraction.profiles import INVALID


def _credit2(schema: str, same_bounds: np.ndarray, same_label: np.ndarray) -> np.ndarray:
    """Twice the credit of each candidate pair under ``schema`` (COR 2, PAR 1, INC 0)."""
    if schema == "strict":
        return np.where(same_bounds & same_label, 2, 0)
    if schema == "exact":
        return np.where(same_bounds, 2, 0)
    if schema == "partial":
        return np.where(same_bounds, 2, 1)
    return np.where(same_label, 2, 0)


def _outcome_counts(
    credit2: np.ndarray, matched: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """(n_groups, 3) counts of COR, INC and PAR among matched pairs, by group."""
    out = np.zeros((n_groups, 3), dtype=np.int64)
    for col, c in ((0, 2), (1, 0), (2, 1)):
        sel = matched & (credit2 == c)
        out[:, col] = np.bincount(group[sel], minlength=n_groups)
    return out


def _block(cor, inc, par, mis, spu, zd) -> dict[str, Any]:
    pos = cor + inc + par + mis
    act = cor + inc + par + spu
    p, r, f = prf(cor + 0.5 * par, act, pos, zd)
    return {
        "COR": int(cor),
        "INC": int(inc),
        "PAR": int(par),
        "MIS": int(mis),
        "SPU": int(spu),
        "POS": int(pos),
        "ACT": int(act),
        "precision": p,
        "recall": r,
        "f1": f,
    }


def _note_undefined(undefined: dict[str, str], path: str, act: int, pos: int) -> None:
    if act == 0 and pos == 0:
        undefined[f"{path}.precision"] = "no gold and no predictions"
        undefined[f"{path}.recall"] = "no gold and no predictions"
    elif act == 0:
        undefined[f"{path}.precision"] = "no predictions"
    elif pos == 0:
        undefined[f"{path}.recall"] = "no gold spans"


def _averages(
    rows: list[tuple[float, float, float, int, int]], zd: float
) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Macro and weighted P/R/F1 over per-label rows ``(p, r, f, support, act)`` (seqeval's
    rules: weighted by gold support; with zero total support P and F1 are ``zd`` when nothing
    was predicted, else 0, and R is ``zd``)."""
    notes: list[str] = []
    if not rows:
        notes.append("no labels in gold or predictions")
        blank = {"precision": zd, "recall": zd, "f1": zd}
        return dict(blank), dict(blank), notes
    macro = {
        "precision": mean([r[0] for r in rows]),
        "recall": mean([r[1] for r in rows]),
        "f1": mean([r[2] for r in rows]),
    }
    support = [r[3] for r in rows]
    if sum(support) == 0:
        notes.append("no gold spans (weighted average has no weights)")
        nothing_predicted = sum(r[4] for r in rows) == 0
        weighted = {
            "precision": zd if nothing_predicted else 0.0,
            "recall": zd,
            "f1": zd if nothing_predicted else 0.0,
        }
    else:
        weighted = {
            "precision": weighted_mean([r[0] for r in rows], support),
            "recall": weighted_mean([r[1] for r in rows], support),
            "f1": weighted_mean([r[2] for r in rows], support),
        }
    return macro, weighted, notes


def _score(
    sides: _Sides,
    schema_list: tuple[str, ...],
    zd: float,
    min_overlap: float,
    empty_documents: str,
    reports: dict[str, Any],
    settings: dict[str, Any],
    vocab: set[str] | None,
    extra_metrics: dict[str, Any] | None = None,
) -> NerReport:
    from ragmeter.extraction.results import hash_labels, library_versions

    s = sides
    n_docs, n_labels = len(s.doc_ids), len(s.labels)
    pg, pp, inter = candidate_pairs(s.gd, s.gs, s.ge, s.pd, s.ps, s.pe, min_overlap=min_overlap)
    same_bounds = (s.gs[pg] == s.ps[pp]) & (s.ge[pg] == s.pe[pp])
    same_label = s.gl[pg] == s.pl[pp]
    union = (s.ge[pg] - s.gs[pg]) + (s.pe[pp] - s.ps[pp]) - inter
    iou = inter / np.maximum(union, 1)
    n_g, n_p = len(s.gs), len(s.ps)

    doc_pos = np.bincount(s.gd, minlength=n_docs)
    doc_act = np.bincount(s.pd, minlength=n_docs) + s.dup_doc
    lab_pos = np.bincount(s.gl, minlength=n_labels)
    lab_act = np.bincount(s.pl, minlength=n_labels) + s.dup_label
    pair_doc = s.gd[pg]

    undefined: dict[str, str] = {}
    overall: dict[str, Any] = {}
    doc_counts: dict[str, np.ndarray] = {}
    doc_values: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
    macro_docs: dict[str, Any] = {}
    confusions: list[list[Any]] = []
    for schema in schema_list:
        c2 = _credit2(schema, same_bounds, same_label)
        matched = match(n_g, n_p, pg, pp, c2, iou)
        cip = _outcome_counts(c2, matched, pair_doc, n_docs)
        n_matched = cip.sum(axis=1)
        counts = np.column_stack([cip, doc_pos - n_matched, doc_act - n_matched])
        doc_counts[schema] = counts
        tot = counts.sum(axis=0)
        overall[schema] = _block(*tot.tolist(), zd)
        _note_undefined(
            undefined, f"overall.{schema}", overall[schema]["ACT"], overall[schema]["POS"]
        )
        num = counts[:, 0] + 0.5 * counts[:, 2]
        p, r, f = prf_arrays(num, doc_act, doc_pos, zd)
        empty = (doc_pos == 0) & (doc_act == 0)
        included = np.ones(n_docs, dtype=bool)
        if empty_documents == "perfect":
            p, r, f = (np.where(empty, 1.0, x) for x in (p, r, f))
        else:
            included = ~empty
        doc_values[schema] = (p, r, f, included)
        n_in = int(included.sum())
        if n_in:
            macro_docs[schema] = {
                "precision": mean(p[included]),
                "recall": mean(r[included]),
                "f1": mean(f[included]),
                "n_documents": n_in,
            }
        else:
            macro_docs[schema] = {"precision": None, "recall": None, "f1": None, "n_documents": 0}
            undefined[f"macro_over_documents.{schema}"] = "no documents to average"
        if schema == "exact":
            conf = matched & same_bounds & ~same_label
            if conf.any():
                key = s.gl[pg[conf]] * n_labels + s.pl[pp[conf]]
                uk, cnt = np.unique(key, return_counts=True)
                confusions = [
                    [s.labels[int(k // n_labels)], s.labels[int(k % n_labels)], int(c)]
                    for k, c in zip(uk.tolist(), cnt.tolist(), strict=True)
                ]
                confusions.sort(key=lambda row: (-row[2], row[0], row[1]))

    # per label: both sides restricted to the label, matched again (nervaluate-compatible)
    sub = np.flatnonzero(same_label)
    spg, spp, ssb, siou = pg[sub], pp[sub], same_bounds[sub], iou[sub]
    pair_label = s.gl[spg]
    label_schemas = set(schema_list) | {"strict"}
    label_counts: dict[str, np.ndarray] = {}
    cache: dict[str, np.ndarray] = {}
    for schema in SCHEMAS:
        if schema not in label_schemas:
            continue
        # within one label, strict and exact coincide
        key = "strict" if schema in ("strict", "exact") else schema
        if key not in cache:
            c2 = _credit2(key, ssb, np.ones(len(sub), dtype=bool))
            matched = match(n_g, n_p, spg, spp, c2, siou)
            cip = _outcome_counts(c2, matched, pair_label, n_labels)
            n_matched = cip.sum(axis=1)
            cache[key] = np.column_stack([cip, lab_pos - n_matched, lab_act - n_matched])
        label_counts[schema] = cache[key]

    reportable = [i for i, lab in enumerate(s.labels) if lab != INVALID]
    per_label: dict[str, dict[str, Any]] = {}
    for i, lab in enumerate(s.labels):
        per_label[lab] = {}
        for schema in schema_list:
            per_label[lab][schema] = _block(*label_counts[schema][i].tolist(), zd)
            if lab != INVALID:
                blk = per_label[lab][schema]
                _note_undefined(undefined, f"per_label.{lab}.{schema}", blk["ACT"], blk["POS"])
        if lab == INVALID:
            per_label[lab]["invalid"] = True
    macro_labels: dict[str, Any] = {}
    weighted_labels: dict[str, Any] = {}
    for schema in schema_list:
        rows = [
            (
                per_label[s.labels[i]][schema]["precision"],
                per_label[s.labels[i]][schema]["recall"],
                per_label[s.labels[i]][schema]["f1"],
                per_label[s.labels[i]][schema]["POS"],
                per_label[s.labels[i]][schema]["ACT"],
            )
            for i in reportable
        ]
        macro, weighted, notes = _averages(rows, zd)
        macro_labels[schema] = {**macro, "n_labels": len(rows)}
        weighted_labels[schema] = weighted
        for note in notes:
            undefined[
                f"macro_over_labels.{schema}"
                if "labels" in note
                else f"weighted_over_labels.{schema}"
            ] = note

    # entity-level exact match (docs/extraction.md#ner): TP = per-label strict COR, |P| = ACT, |G| =
    # POS
    strict_lab = label_counts["strict"]
    ent_rows = []
    ent_per_label: dict[str, Any] = {}
    for i in reportable:
        tp, act, pos = (
            int(strict_lab[i, 0]),
            int(strict_lab[i, :3].sum() + strict_lab[i, 4]),
            int(strict_lab[i, :4].sum()),
        )
        p, r, f = prf(tp, act, pos, zd)
        ent_per_label[s.labels[i]] = {"precision": p, "recall": r, "f1": f, "support": pos}
        ent_rows.append((p, r, f, pos, act))
    tp_all = int(strict_lab[reportable, 0].sum()) if reportable else 0
    act_all = int(lab_act.sum())
    pos_all = int(lab_pos.sum())
    ep, er, ef = prf(tp_all, act_all, pos_all, zd)
    emacro, eweighted, enotes = _averages(ent_rows, zd)
    _note_undefined(undefined, "entity.micro", act_all, pos_all)
    for note in enotes:
        undefined["entity.macro" if "labels" in note else "entity.weighted"] = note
    entity = {
        "micro": {"precision": ep, "recall": er, "f1": ef, "support": pos_all},
        "macro": {**emacro, "support": pos_all},
        "weighted": {**eweighted, "support": pos_all},
        "per_label": ent_per_label,
    }

    metrics: dict[str, Any] = {
        "overall": overall,
        "per_label": per_label,
        "macro_over_labels": macro_labels,
        "weighted_over_labels": weighted_labels,
        "macro_over_documents": macro_docs,
        "entity": entity,
        "confusions": confusions,
    }
    if extra_metrics:
        metrics.update(extra_metrics)
    settings = {
        **settings,
        "zero_division": zd,
        "vocabulary_hash": hash_labels(sorted(vocab)) if vocab is not None else None,
        "labels": list(s.labels),
        "n_documents": n_docs,
        "versions": library_versions(),
    }
    reports.setdefault("invalid_labels", {"gold": {}, "pred": {}})
    warnings = list(reports.pop("_warnings", []))
    if reports.get("n_duplicates_removed"):
        warnings.append(
            f"{reports['n_duplicates_removed']} duplicate prediction(s) removed "
            "(duplicates='dedupe')"
        )
    if reports["invalid_labels"]["pred"]:
        listed = ", ".join(f"{k} ({v})" for k, v in reports["invalid_labels"]["pred"].items())
        warnings.append(f"predicted labels outside the vocabulary scored as {INVALID}: {listed}")
    return NerReport(
        schemas=schema_list,
        doc_ids=s.doc_ids,
        labels=list(s.labels),
        doc_counts=doc_counts,
        doc_pos=doc_pos,
        doc_act=doc_act,
        metrics=metrics,
        undefined=dict(sorted(undefined.items())),
        reports=reports,
        settings=settings,
        doc_values=doc_values,
        warnings=warnings,
    )
