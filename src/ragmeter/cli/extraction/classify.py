"""``ragmeter classify``: type-classification metrics.

Single-label, multi-label and hierarchical scores, as scikit-learn defines them.

Engines are imported inside the command so that ``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import os
from typing import Any

import typer

from ragmeter.cli.extraction.common import (
    _alts,
    _choice,
    _console,
    _emit_json,
    _fmt,
    _split,
    _status,
    _warn_lines,
    _write_output,
    _zero_division,
)
from ragmeter.errors import InputError, UsageError
from ragmeter.extraction.choices import EXTRA_POLICIES, INVALID_GOLD_POLICIES, MISSING_POLICIES


def register(app: typer.Typer) -> None:
    @app.command("classify")
    def classify(
        gold: str = typer.Argument(
            ..., help="Gold labels: TSV id<TAB>label, JSONL {id, label}, or the heritage TSV."
        ),
        pred: str = typer.Argument(..., help="Predicted labels, same forms."),
        profile: str = typer.Option(
            None, "--profile", help="Closed label set with hierarchy: heritage or a YAML/JSON file."
        ),
        labels: str = typer.Option(
            "present",
            "--labels",
            help="present | all (the profile's vocabulary) | A,B,... | a profile name "
            "(= --profile).",
        ),
        zero_division: str = typer.Option("0", "--zero-division", help="0 | 1 | nan | warn."),
        missing: str = typer.Option(
            "error", "--missing", help=f"Gold items without prediction: {_alts(MISSING_POLICIES)}."
        ),
        extra: str = typer.Option(
            "error", "--extra", help=f"Predictions for unknown items: {_alts(EXTRA_POLICIES)}."
        ),
        invalid_gold: str = typer.Option(
            "error", "--invalid-gold", help=f"{_alts(INVALID_GOLD_POLICIES)}."
        ),
        top_k: int = typer.Option(10, "--top-k", help="Number of top confusions."),
        level: int = typer.Option(1, "--level", help="Hierarchy level of category accuracy."),
        multilabel: bool = typer.Option(
            False, "--multilabel", help="Also score primary + secondary label sets."
        ),
        per_item: bool = typer.Option(
            False, "--per-item", help="Show (or include) per-item results."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
        output: str = typer.Option(
            None, "--output", "-o", help="Also write the full report as JSON."
        ),
    ) -> None:
        """Type classification: accuracy, per-class and averaged P/R/F1, confusions, hierarchy."""
        cmd = "classify"
        from ragmeter.extraction.profiles import _BUILTIN, get_profile

        if labels in _BUILTIN or (
            labels.endswith((".yaml", ".yml", ".json")) and os.path.exists(labels)
        ):
            if profile and profile != labels:
                raise UsageError(
                    f"--labels {labels} and --profile {profile} name different profiles",
                    command=cmd,
                )
            profile, labels = labels, "present"
        prof = get_profile(profile) if profile else None
        if labels == "present":
            label_set: Any = "present"
        elif labels == "all":
            if prof is None:
                raise UsageError("--labels all needs --profile", command=cmd)
            label_set = list(prof.vocabulary)
        else:
            label_set = _split(labels)
            if not label_set:
                raise UsageError("--labels is empty", command=cmd)
        for opt, val, allowed in (
            ("--missing", missing, MISSING_POLICIES),
            ("--extra", extra, EXTRA_POLICIES),
            ("--invalid-gold", invalid_gold, INVALID_GOLD_POLICIES),
        ):
            _choice(cmd, opt, val, allowed)
        if top_k < 0 or level < 1:
            raise UsageError("--top-k must be >= 0 and --level >= 1", command=cmd)
        zd = _zero_division(cmd, zero_division, allow_nan=True)
        from ragmeter.extraction.classification import evaluate, evaluate_multilabel
        from ragmeter.io.labels import read_labels

        with _status("scoring types"):
            g = read_labels(gold)
            p = read_labels(pred)
            _check_label_files(g, p, prof, missing=missing, extra=extra, invalid=invalid_gold)
            report = evaluate(
                g.labels,
                p.labels,
                profile=prof,
                labels=label_set,
                zero_division=zd,
                missing=missing,
                extra=extra,
                top_k=top_k,
                invalid_gold=invalid_gold,
                level=level,
            )
            ml = None
            if multilabel:
                ml = evaluate_multilabel(
                    g.label_sets,
                    p.label_sets,
                    profile=prof,
                    labels=label_set,
                    zero_division=zd,
                    missing=missing,
                    extra=extra,
                )
        _warn_lines(report.warnings)
        data = report.to_dict()
        if ml is not None:
            data["multilabel"] = ml.to_dict()
        if per_item:
            data["per_item"] = {
                i: {"gold": g.labels[i], "pred": p.labels.get(i), "correct": bool(c)}
                for i, c in zip(report.ids, report.item_correct.tolist(), strict=True)
            }
        data["settings"]["files"] = {"gold": gold, "pred": pred}
        _write_output(output, data)
        if as_json:
            _emit_json(data)
            return
        _classify_tables(report, ml, data if per_item else None)


def _check_label_files(
    g: Any, p: Any, prof: Any, *, missing: str, extra: str, invalid: str
) -> None:
    """The first problem the engine would refuse, as ``FILE:LINE``: an invalid gold label, a
    gold item without a prediction, a prediction for no gold item (in file order)."""

    if prof is not None and invalid == "error":
        vocab = set(prof.vocabulary)
        for item, labels in g.label_sets.items():
            bad = sorted(labels - vocab)
            if bad:
                raise InputError(
                    f"gold label '{bad[0]}' of item '{item}' is not in the {prof.name} vocabulary "
                    f"(expected one of {' '.join(prof.vocabulary)}, or --invalid-gold drop_items)",
                    path=g.path,
                    line=g.lines.get(item),
                )
    if missing == "error":
        for item in g.labels:
            if item not in p.labels:
                raise InputError(
                    f"item '{item}' has no prediction in {p.path} (expected a prediction for "
                    "every gold item, or --missing as_invalid)",
                    path=g.path,
                    line=g.lines.get(item),
                )
    if extra == "error":
        for item in p.labels:
            if item not in g.labels:
                raise InputError(
                    f"item '{item}' is not in the gold file {g.path} (expected predictions for "
                    "gold items only, or --extra ignore)",
                    path=p.path,
                    line=p.lines.get(item),
                )


def _classify_tables(report, ml, data) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title=f"type classification ({report.n_items} items)")
    for col in ("metric", "P", "R", "F1"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    t.add_row("accuracy", "", "", _fmt(report.accuracy))
    t.add_row("balanced accuracy", "", "", _fmt(report.balanced_accuracy))
    for avg in ("micro", "macro", "weighted"):
        b = getattr(report, avg)
        t.add_row(avg, _fmt(b["precision"]), _fmt(b["recall"]), _fmt(b["f1"]))
    t.caption = f"labels used: {' '.join(report.labels_used)}"
    console.print(t)
    pc = Table(title="per class")
    for col in ("label", "support", "predicted", "P", "R", "F1"):
        pc.add_column(col, justify="left" if col == "label" else "right")
    for lab, b in report.per_class.items():
        pc.add_row(
            lab,
            str(b["support"]),
            str(b["predicted"]),
            _fmt(b["precision"]),
            _fmt(b["recall"]),
            _fmt(b["f1"]),
        )
    console.print(pc)
    if report.top_confusions:
        c = Table(
            title=f"top confusions ({report.total_errors} errors, "
            f"{report.unique_confusion_pairs} pairs)"
        )
        for col in ("gold", "predicted", "count"):
            c.add_column(col)
        for g, p, n in report.top_confusions:
            c.add_row(g, p, str(n))
        console.print(c)
    if report.hierarchy:
        h = report.hierarchy
        ht = Table(title=f"hierarchy ({h['profile']}, level {h['level']})")
        for col in ("exact", "category", "gap", "hP", "hR", "hF"):
            ht.add_column(col, justify="right")
        hh = h["hierarchical"]
        ht.add_row(
            _fmt(h["exact_accuracy"]),
            _fmt(h["category_accuracy"]),
            _fmt(h["hierarchy_gap"]),
            _fmt(hh["hP"]),
            _fmt(hh["hR"]),
            _fmt(hh["hF"]),
        )
        console.print(ht)
    if report.invalid_labels["pred"]:
        console.print(
            "invalid predicted labels: "
            + ", ".join(f"{k} ({v})" for k, v in report.invalid_labels["pred"].items())
        )
    if ml is not None:
        mt = Table(title="multi-label (primary + secondary)")
        for col in ("average", "P", "R", "F1"):
            mt.add_column(col, justify="left" if col == "average" else "right")
        for avg in ("micro", "macro", "weighted", "samples"):
            b = getattr(ml, avg)
            mt.add_row(avg, _fmt(b["precision"]), _fmt(b["recall"]), _fmt(b["f1"]))
        mt.caption = f"subset accuracy {_fmt(ml.subset_accuracy)}"
        console.print(mt)
    if data is not None:
        it = Table(title="per item")
        for col in ("item", "gold", "predicted", "correct"):
            it.add_column(col)
        for i, row in sorted(data["per_item"].items()):
            it.add_row(i, row["gold"], str(row["pred"]), "yes" if row["correct"] else "no")
        console.print(it)
