"""``ragmeter ner``, ``classify``, ``link`` and ``agreement`` (extraction.md §9).

Thin layers over :mod:`ragmeter.extraction`: read the files (``ragmeter.io``), call the engine,
print rich tables (or ``--json``). Engines are imported inside the commands so that
``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from ragmeter.errors import InputError, UsageError
from ragmeter.io.unannotated import drop_unannotated

_FORMATS = ("brat", "conll", "heritage")


def _console():
    from ragmeter.terminal import make_console

    return make_console()  # labels, ids and documents are data: printed as text


def _status(message: str):
    """A transient spinner on stderr (shown only on a terminal)."""
    import contextlib

    if not sys.stderr.isatty():
        return contextlib.nullcontext()
    from ragmeter.terminal import make_console

    return make_console(stderr=True).status(message)


def _fmt(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.4f}"
    return str(x)


def _emit_json(data: Any) -> None:
    from ragmeter.io.jsonutil import dumps

    typer.echo(dumps(data, indent=2))


def _write_output(path: str | None, data: Any) -> None:
    if not path:
        return
    from ragmeter.io.files import atomic_write
    from ragmeter.io.jsonutil import dumps

    with atomic_write(path) as fh:
        fh.write(dumps(data, indent=2) + "\n")


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _choice(command: str, option: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UsageError(f"{option} '{value}' is not one of {', '.join(allowed)}", command=command)
    return value


def _zero_division(command: str, value: str, *, allow_nan: bool = False) -> Any:
    allowed = ("0", "1", "warn", *(("nan",) if allow_nan else ()))
    _choice(command, "--zero-division", value, allowed)
    return value if value in ("warn", "nan") else float(value)


def _detect_format(path: str) -> str:
    p = Path(path)
    if p.is_dir() or p.suffix == ".ann":
        return "brat"
    if p.suffix.lower() in (".json", ".jsonl") or path.endswith((".json.gz", ".jsonl.gz")):
        return "heritage"
    return "conll"


def _warn_lines(warnings: list[str]) -> None:
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)


# -- ner ---------------------------------------------------------------------------------------
def _load_spans(path: str, fmt: str, *, role: str, opts: dict[str, Any]):
    if fmt == "brat":
        from ragmeter.io.brat import load_brat

        return load_brat(
            path,
            role=role,
            on_offset_mismatch=opts["on_offset_mismatch"],
            discontinuous=opts["discontinuous"],
            offset_unit=opts["offset_unit"],
        )
    from ragmeter.io.heritage import load_heritage

    return load_heritage(
        path,
        role=role,
        on_offset_mismatch=opts["on_offset_mismatch"],
        offset_unit=opts["offset_unit"],
    )


def _ner_tables(report, *, per_document: bool, token_report=None) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title="NER (SemEval-2013 schemas, micro over documents)")
    for col in (
        "schema",
        "COR",
        "INC",
        "PAR",
        "MIS",
        "SPU",
        "POS",
        "ACT",
        "P",
        "R",
        "F1",
        "macro F1",
    ):
        t.add_column(col, justify="right" if col != "schema" else "left")
    for s in report.schemas:
        o = report.overall[s]
        t.add_row(
            s,
            *(str(o[k]) for k in ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")),
            *(_fmt(o[k]) for k in ("precision", "recall", "f1")),
            _fmt(report.metrics["macro_over_labels"][s]["f1"]),
        )
    console.print(t)
    lab = Table(title="per label (strict)" if "strict" in report.schemas else "per label")
    shown = "strict" if "strict" in report.schemas else report.schemas[0]
    for col in ("label", "support", "predicted", "P", "R", "F1"):
        lab.add_column(col, justify="left" if col == "label" else "right")
    for name, block in report.per_label.items():
        b = block[shown]
        lab.add_row(
            name,
            str(b["POS"]),
            str(b["ACT"]),
            _fmt(b["precision"]),
            _fmt(b["recall"]),
            _fmt(b["f1"]),
        )
    console.print(lab)
    ent = report.entity
    e = Table(title="entity level, exact match (seqeval)")
    for col in ("average", "P", "R", "F1"):
        e.add_column(col, justify="left" if col == "average" else "right")
    for avg in ("micro", "macro", "weighted"):
        e.add_row(avg, _fmt(ent[avg]["precision"]), _fmt(ent[avg]["recall"]), _fmt(ent[avg]["f1"]))
    if "token_accuracy" in report.metrics:
        e.caption = f"token accuracy {_fmt(report.metrics['token_accuracy'])}"
    console.print(e)
    if report.confusions:
        c = Table(title="type confusions (same boundaries)")
        for col in ("gold", "predicted", "count"):
            c.add_column(col)
        for g, p, n in report.confusions[:10]:
            c.add_row(g, p, str(n))
        console.print(c)
    if token_report is not None:
        tt = Table(
            title=f"token level (diagnostic; tokenizer {token_report.settings['tokenizer']})"
        )
        for col in ("average", "P", "R", "F1"):
            tt.add_column(col, justify="left" if col == "average" else "right")
        for avg in ("micro", "macro", "weighted"):
            blk = getattr(token_report, avg)
            tt.add_row(avg, _fmt(blk["precision"]), _fmt(blk["recall"]), _fmt(blk["f1"]))
        tt.caption = f"token accuracy {_fmt(token_report.token_accuracy)}"
        console.print(tt)
    if per_document:
        d = Table(title="per document")
        d.add_column("document")
        for s in report.schemas:
            d.add_column(f"{s} F1", justify="right")
        d.add_column("POS", justify="right")
        d.add_column("ACT", justify="right")
        for i, doc in enumerate(report.doc_ids):
            d.add_row(
                doc,
                *(_fmt(float(report.doc_values[s][2][i])) for s in report.schemas),
                str(int(report.doc_pos[i])),
                str(int(report.doc_act[i])),
            )
        console.print(d)
    if report.undefined:
        console.print(
            "undefined (zero_division applied): "
            + "; ".join(f"{k}: {v}" for k, v in list(report.undefined.items())[:8])
            + (" …" if len(report.undefined) > 8 else ""),
            style="dim",
        )


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


def _refuse_non_finite(label_file: Any, level: str) -> None:
    """A rating of ``nan``, ``inf`` or ``1e309`` (which reads as infinity) is bad input.

    A distance between ratings on a numeric scale is undefined for them (numpy would warn and
    the coefficient would be NaN), so they are refused with the line, as NaN in JSON is.
    """
    import math

    for item, value in label_file.labels.items():
        try:
            number = float(value)
        except ValueError:
            continue  # a text category (ordinal with --categories)
        if not math.isfinite(number):
            raise InputError(
                f"rating {value!r} of item '{item}' is not a finite number (expected a finite "
                f"number for --level {level})",
                path=label_file.path,
                line=label_file.lines.get(item),
            )


def _numeric_order(ratings: dict[str, dict[str, Any]], cmd: str) -> list[str]:
    """The categories of ordinal labels without --categories: numbers, in numeric order.

    Text sorts "10" before "9", which would weight every disagreement wrongly; labels that are
    not numbers have no order ragmeter could guess.
    """
    present = sorted({v for labels in ratings.values() for v in labels.values()})
    try:
        return sorted(present, key=float)
    except ValueError:
        raise UsageError(
            "--level ordinal needs --categories LOW,...,HIGH (the labels are not numbers, so "
            "their order is unknown)",
            command=cmd,
        ) from None


def register(app: typer.Typer) -> None:
    @app.command("ner")
    def ner(
        gold: str = typer.Argument(
            ..., help="Gold annotations: BRAT folder, CoNLL file or heritage JSON/JSONL."
        ),
        pred: str = typer.Argument(..., help="Predicted annotations, same format."),
        fmt: str = typer.Option(
            None, "--format", "-f", help="brat | conll | heritage (default: from the path)."
        ),
        schemas: str = typer.Option(
            "strict,exact,partial,type",
            "--schemas",
            "--schema",
            help="Comma-separated SemEval schemas.",
        ),
        scheme: str = typer.Option(
            "IOB2", "--scheme", help="CoNLL tag scheme: IOB2, IOB1, IOBES, BILOU, IOE1, IOE2."
        ),
        mode: str = typer.Option(
            "lenient", "--mode", help="CoNLL decoding: lenient (seqeval default) or strict."
        ),
        min_overlap: float = typer.Option(
            0.0, "--min-overlap", help="Minimum |g∩p|/|g| for an overlap (0-1)."
        ),
        duplicates: str = typer.Option(
            "dedupe", "--duplicates", help="dedupe | keep (extra copies are SPU)."
        ),
        unknown_documents: str = typer.Option(
            "error", "--unknown-documents", help="error | ignore | as_empty_gold."
        ),
        zero_division: str = typer.Option("0", "--zero-division", help="0 | 1 | warn."),
        empty_documents: str = typer.Option(
            "perfect", "--empty-documents", help="perfect | skip (macro over documents)."
        ),
        on_offset_mismatch: str = typer.Option(
            "error", "--on-offset-mismatch", help="error | skip | relocate."
        ),
        discontinuous: str = typer.Option(
            "span", "--discontinuous", help="BRAT: span | fragments | error."
        ),
        offset_unit: str = typer.Option(
            "codepoint",
            "--offset-unit",
            help="Offsets of BRAT and heritage JSON: codepoint | utf16 | utf8.",
        ),
        profile: str = typer.Option(
            None,
            "--profile",
            help="Check labels against a profile's NER vocabulary (heritage or a file).",
        ),
        token_level: bool = typer.Option(
            False, "--token-level", help="Add token-level diagnostics."
        ),
        tokenizer: str = typer.Option("simple", "--tokenizer", help="Tokenizer for --token-level."),
        per_document: bool = typer.Option(
            False, "--per-document", help="Show (or include) per-document results."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
        output: str = typer.Option(
            None, "--output", "-o", help="Also write the full report as JSON."
        ),
    ) -> None:
        """Score predicted entities against gold: SemEval-2013 schemas and seqeval entity scores."""
        cmd = "ner"
        fmt_ = _choice(cmd, "--format", fmt, _FORMATS) if fmt else _detect_format(gold)
        for opt, val, allowed in (
            ("--mode", mode, ("lenient", "strict")),
            ("--duplicates", duplicates, ("dedupe", "keep")),
            ("--unknown-documents", unknown_documents, ("error", "ignore", "as_empty_gold")),
            ("--empty-documents", empty_documents, ("perfect", "skip")),
            ("--on-offset-mismatch", on_offset_mismatch, ("error", "skip", "relocate")),
            ("--discontinuous", discontinuous, ("span", "fragments", "error")),
            ("--offset-unit", offset_unit, ("codepoint", "utf16", "utf8")),
        ):
            _choice(cmd, opt, val, allowed)
        from ragmeter.extraction.ner import _schemas
        from ragmeter.extraction.tags import SCHEMES

        _choice(cmd, "--scheme", scheme, SCHEMES)
        try:
            schema_list = _schemas(schemas)
        except ValueError as exc:
            raise UsageError(str(exc), command=cmd) from None
        if not 0.0 <= min_overlap <= 1.0:
            raise UsageError(f"--min-overlap {min_overlap} is not between 0 and 1", command=cmd)
        zd = _zero_division(cmd, zero_division)
        vocabulary = None
        if profile:
            from ragmeter.extraction.profiles import get_profile

            prof = get_profile(profile)
            if not prof.ner_vocabulary:
                raise UsageError(f"profile '{prof.name}' has no NER vocabulary", command=cmd)
            vocabulary = list(prof.ner_vocabulary)
        options = {
            "schemas": schema_list,
            "vocabulary": vocabulary,
            "min_overlap": min_overlap,
            "duplicates": duplicates,
            "unknown_documents": unknown_documents,
            "zero_division": zd,
            "empty_documents": empty_documents,
        }
        if token_level and fmt_ == "conll":
            raise UsageError(
                "--token-level needs character spans (BRAT or heritage input)", command=cmd
            )
        token_report = None
        with _status("scoring entities"):
            if fmt_ == "conll":
                from ragmeter.extraction.ner import evaluate_ner_tags
                from ragmeter.io.conll import check_same_tokens, read_conll

                g = read_conll(gold, scheme=scheme, mode=mode)
                p = read_conll(pred, scheme=scheme, mode=mode)
                check_same_tokens(g, p)
                y_true = [s for d in g.documents for s in d.tags]
                y_pred = [s for d in p.documents for s in d.tags]
                doc_ids = [d.doc_id for d in g.documents for _ in d.tags]
                report = evaluate_ner_tags(
                    y_true, y_pred, scheme=scheme, mode=mode, doc_ids=doc_ids, **options
                )
                report.settings["files"] = {"gold": gold, "pred": pred, "format": "conll"}
            else:
                from ragmeter.extraction.ner import evaluate_ner

                lo = {
                    "on_offset_mismatch": on_offset_mismatch,
                    "discontinuous": discontinuous,
                    "offset_unit": offset_unit,
                }
                gc, grep = _load_spans(gold, fmt_, role="gold", opts=lo)
                pc, prep = _load_spans(pred, fmt_, role="pred", opts=lo)
                if fmt_ == "heritage":
                    _warn_lines(drop_unannotated([gc, pc], [gold, pred]))
                report = evaluate_ner(gc, pc, on_offset_mismatch=on_offset_mismatch, **options)
                report.reports["load"] = {"gold": grep.to_dict(), "pred": prep.to_dict()}
                report.settings["files"] = {"gold": gold, "pred": pred, "format": fmt_}
                if token_level:
                    from ragmeter.extraction.token_level import token_level_metrics

                    token_report = token_level_metrics(gc, pc, tokenizer=tokenizer)
        _warn_lines(report.warnings)
        full = report.to_dict()
        if token_report is not None:
            full["token_level"] = token_report.to_dict()
        _write_output(output, full)
        if as_json:
            data = report.cli_summary()
            if per_document:
                data["per_document"] = report.per_document
            if token_report is not None:
                data["token_level"] = token_report.to_dict()
            _emit_json(data)
            return
        _ner_tables(report, per_document=per_document, token_report=token_report)

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
            "error", "--missing", help="Gold items without prediction: error | as_invalid."
        ),
        extra: str = typer.Option(
            "error", "--extra", help="Predictions for unknown items: error | ignore."
        ),
        invalid_gold: str = typer.Option("error", "--invalid-gold", help="error | drop_items."),
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
            ("--missing", missing, ("error", "as_invalid")),
            ("--extra", extra, ("error", "ignore")),
            ("--invalid-gold", invalid_gold, ("error", "drop_items")),
        ):
            _choice(cmd, opt, val, allowed)
        if top_k < 0 or level < 1:
            raise UsageError("--top-k must be >= 0 and --level >= 1", command=cmd)
        zd = _zero_division(cmd, zero_division, allow_nan=True)
        from ragmeter.extraction.classification import evaluate_types, evaluate_types_multilabel
        from ragmeter.io.labels import read_labels

        with _status("scoring types"):
            g = read_labels(gold)
            p = read_labels(pred)
            _check_label_files(g, p, prof, missing=missing, extra=extra, invalid=invalid_gold)
            report = evaluate_types(
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
                ml = evaluate_types_multilabel(
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

    @app.command("link")
    def link(
        gold: str = typer.Argument(
            ..., help="Gold mentions (JSONL/JSON records, heritage linking JSON or gold records)."
        ),
        pred: str = typer.Argument(
            ..., help="Predictions: {mention_id, candidates, nil?} records."
        ),
        k: str = typer.Option("1,5,10", "-k", "--k", help="Comma-separated cutoffs for Hits@K."),
        nil_id: str = typer.Option("NIL", "--nil-id", help="Candidate id meaning NIL."),
        zero_division: str = typer.Option("0", "--zero-division", help="0 | 1 | warn."),
        strict: bool = typer.Option(
            False, "--strict", help="Error on predictions for unknown mention ids."
        ),
        e2e: bool = typer.Option(
            False,
            "--e2e",
            help="End-to-end (spans + links): GOLD and PRED are BRAT or heritage corpora.",
        ),
        fmt: str = typer.Option(None, "--format", "-f", help="--e2e input: brat | heritage."),
        match: str = typer.Option("strong", "--match", help="--e2e: strong | weak."),
        subset: str = typer.Option("all", "--subset", help="--e2e: all | inkb | ee | gs_inkb."),
        matching: str = typer.Option("optimal", "--matching", help="--e2e: optimal | gerbil."),
        empty_documents: str = typer.Option(
            "perfect", "--empty-documents", help="--e2e: perfect | skip."
        ),
        mapping: str = typer.Option(
            None, "--mapping", help="Cross-KB check of PRED identifiers against this mapping file."
        ),
        per_mention: bool = typer.Option(
            False,
            "--per-mention",
            "--per-document",
            help="Show (or include) per-mention/per-document results.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
        output: str = typer.Option(
            None, "--output", "-o", help="Also write the full report as JSON."
        ),
    ) -> None:
        """Entity linking: Hits@K, MRR, NIL detection, or GERBIL end-to-end scores."""
        cmd = "link"
        zd = _zero_division(cmd, zero_division)
        if e2e:
            for opt, val, allowed in (
                ("--match", match, ("strong", "weak")),
                ("--subset", subset, ("all", "inkb", "ee", "gs_inkb")),
                ("--matching", matching, ("optimal", "gerbil")),
                ("--empty-documents", empty_documents, ("perfect", "skip")),
            ):
                _choice(cmd, opt, val, allowed)
            fmt_ = (
                _choice(cmd, "--format", fmt, ("brat", "heritage")) if fmt else _detect_format(gold)
            )
            if fmt_ not in ("brat", "heritage"):
                raise UsageError("--e2e needs BRAT or heritage corpora", command=cmd)
            from ragmeter.extraction.linking import evaluate_linking_e2e

            lo = {
                "on_offset_mismatch": "error",
                "discontinuous": "span",
                "offset_unit": "codepoint",
            }
            gc, _ = _load_spans(gold, fmt_, role="gold", opts=lo)
            pc, _ = _load_spans(pred, fmt_, role="pred", opts=lo)
            if fmt_ == "heritage":
                _warn_lines(drop_unannotated([gc, pc], [gold, pred]))
            rep = evaluate_linking_e2e(
                gc,
                pc,
                match=match,
                subset=subset,
                matching=matching,
                empty_documents=empty_documents,
                nil_id=nil_id,
            )
            data = rep.to_dict()
            if not per_mention:
                data.pop("per_document")
            _write_output(output, rep.to_dict())
            if as_json:
                _emit_json(data)
                return
            _e2e_tables(rep, per_mention)
            return
        try:
            ks = sorted({int(x) for x in _split(k)})
        except ValueError:
            raise UsageError(
                f"-k '{k}' is not a comma-separated list of integers", command=cmd
            ) from None
        if not ks or ks[0] < 1:
            raise UsageError(f"-k '{k}' needs positive cutoffs", command=cmd)
        from ragmeter.extraction.linking import evaluate_linking
        from ragmeter.io.mentions import read_link_gold, read_link_predictions

        g = read_link_gold(gold)
        p = read_link_predictions(pred)
        rep = evaluate_linking(
            {m: r["kb_ids"] for m, r in g.records.items()},
            dict(p.records),
            k=ks,
            nil_id=nil_id,
            zero_division=zd,
            strict=strict,
        )
        _warn_lines(rep.warnings)
        data = rep.to_dict()
        data["reports"]["gold_file"] = {"format": g.format, **g.notes}
        if mapping:
            from ragmeter.extraction.crosskb import check_consistency, load_mapping

            entities = []
            for mid, r in p.records.items():
                cands = r.get("candidates") or []
                top = cands[0] if cands else None
                qid = top.get("kb_id") if isinstance(top, dict) else top
                raw = r.get("identifiers") or {}
                entities.append({"entity_id": mid, "wikidata_id": qid, "identifiers": raw})
            data["cross_kb"] = check_consistency(entities, load_mapping(mapping)).to_dict()
        if not per_mention:
            data.pop("per_mention")
        _write_output(output, rep.to_dict() | ({"cross_kb": data["cross_kb"]} if mapping else {}))
        if as_json:
            _emit_json(data)
            return
        _link_tables(rep, data, per_mention)

    @app.command("agreement")
    def agreement_cmd(
        files: list[str] = typer.Argument(  # noqa: B008 - typer's declaration style
            ..., help="One file (or BRAT folder) per annotator."
        ),
        level: str = typer.Option(
            "nominal", "--level", help="nominal | ordinal | interval | ratio (label files)."
        ),
        fmt: str = typer.Option(
            None,
            "--format",
            "-f",
            help="labels | brat | conll | heritage (default: from the paths).",
        ),
        schemas: str = typer.Option(
            "strict,type", "--schemas", "--schema", help="Span schemas for NER agreement."
        ),
        categories: str = typer.Option(
            None, "--categories", help="Ordered categories (ordinal data), comma-separated."
        ),
        names: str = typer.Option(
            None, "--names", help="Annotator names, comma-separated (default: file names)."
        ),
        scheme: str = typer.Option("IOB2", "--scheme", help="CoNLL tag scheme."),
        as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
        output: str = typer.Option(
            None, "--output", "-o", help="Also write the full report as JSON."
        ),
    ) -> None:
        """Inter-annotator agreement: κ/π/α/AC1 for labels, pairwise span F1 for entities."""
        cmd = "agreement"
        if len(files) < 2:
            raise UsageError("needs at least two annotators' files", command=cmd)
        _choice(cmd, "--level", level, ("nominal", "ordinal", "interval", "ratio"))
        ann_names = _split(names) or [Path(f).stem or f for f in files]
        if len(ann_names) != len(files) or len(set(ann_names)) != len(ann_names):
            raise UsageError("--names must give one distinct name per file", command=cmd)
        fmt_ = fmt or _agreement_format(files[0])
        _choice(cmd, "--format", fmt_, ("labels", *_FORMATS))
        from ragmeter.extraction import iaa as ag

        if fmt_ == "labels":
            from ragmeter.io.labels import read_labels

            ratings: dict[str, dict[str, Any]] = {}
            for name, f in zip(ann_names, files, strict=True):
                label_file = read_labels(f)
                labels = label_file.labels
                if level in ("interval", "ratio"):
                    try:
                        labels = {i: float(v) for i, v in labels.items()}
                    except ValueError as exc:
                        raise UsageError(
                            f"--level {level} needs numeric labels ({exc})", command=cmd
                        ) from None
                if level != "nominal":
                    _refuse_non_finite(label_file, level)
                ratings[name] = labels
            cats = _split(categories) or None
            if cats is None and level == "ordinal":
                cats = _numeric_order(ratings, cmd)
            report = ag.agreement(ratings, level=level, categories=cats)
            _warn_lines(report.warnings)
            _write_output(output, report.to_dict())
            if as_json:
                _emit_json(report.to_dict())
                return
            _agreement_table(report)
            return
        if fmt_ == "conll":
            from ragmeter.io.conll import check_same_tokens, read_conll

            parsed = [read_conll(f, scheme=scheme) for f in files]
            for other in parsed[1:]:
                check_same_tokens(parsed[0], other)
            seqs = {
                n: [s for d in cf.documents for s in d.tags]
                for n, cf in zip(ann_names, parsed, strict=True)
            }
            import warnings as _w

            with _w.catch_warnings():
                _w.simplefilter("ignore")
                span_rep = ag.span_agreement_tags(seqs, scheme=scheme, schemas=_split(schemas))
        else:
            lo = {
                "on_offset_mismatch": "error",
                "discontinuous": "span",
                "offset_unit": "codepoint",
            }
            corpora = {
                n: _load_spans(f, fmt_, role="gold", opts=lo)[0]
                for n, f in zip(ann_names, files, strict=True)
            }
            if fmt_ == "heritage":
                _warn_lines(drop_unannotated(list(corpora.values()), list(files), sides=len(files)))
            span_rep = ag.span_agreement(corpora, schemas=_split(schemas))
        _warn_lines(span_rep.warnings)
        _write_output(output, span_rep.to_dict())
        if as_json:
            _emit_json(span_rep.to_dict())
            return
        _span_agreement_table(span_rep)


def _agreement_format(path: str) -> str:
    p = Path(path)
    if p.is_dir() or p.suffix == ".ann":
        return "brat"
    if p.suffix.lower() in (".conll", ".iob", ".bio", ".iob2", ".bilou", ".iobes"):
        return "conll"
    if p.suffix.lower() in (".json", ".jsonl"):
        from ragmeter.io.records import read_records

        first = read_records(path)[0][1]
        return "heritage" if "ner_annotations" in first else "labels"
    return "labels"


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


def _link_tables(rep, data, per_mention: bool) -> None:
    from rich.table import Table

    console = _console()
    r = rep.ranking
    t = Table(
        title=f"entity linking ({r['n_inkb_mentions']} InKB, {r['n_nil_mentions']} NIL "
        "gold mentions)"
    )
    t.add_column("metric")
    t.add_column("value", justify="right")
    for cut in rep.ks:
        t.add_row(f"Hits@{cut}", _fmt(r[f"hits@{cut}"]))
    t.add_row("MRR", _fmt(r["mrr"]))
    t.add_row("NIL precision", _fmt(rep.nil["precision"]))
    t.add_row("NIL recall", _fmt(rep.nil["recall"]))
    t.add_row("NIL F1", _fmt(rep.nil["f1"]))
    t.add_row("D2KB accuracy", _fmt(rep.d2kb_accuracy))
    t.caption = (
        f"missing predictions {r['n_missing_predictions']}, InKB predicted NIL "
        f"{r['n_inkb_predicted_nil']}, unmatched predictions {r['n_unmatched_predictions']}"
    )
    console.print(t)
    if "cross_kb" in data:
        ck = data["cross_kb"]
        console.print(
            f"cross-KB: consistency {_fmt(ck['consistency_rate'])}, "
            f"coverage {_fmt(ck['coverage_rate'])}, "
            f"checked {_fmt(ck['checked_rate'])} ({ck['counts']})"
        )
    if per_mention:
        pm = Table(title="per mention")
        for col in ("mention", "gold NIL", "pred NIL", "rank"):
            pm.add_column(col)
        for mid, row in rep.per_mention().items():
            pm.add_row(mid, str(row["gold_nil"]), str(row["pred_nil"]), _fmt(row["rank"]))
        console.print(pm)


def _e2e_tables(rep, per_document: bool) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title=f"end-to-end linking ({rep.match}, {rep.subset}, {rep.matching} matching)")
    for col in ("average", "P", "R", "F1"):
        t.add_column(col, justify="left" if col == "average" else "right")
    for avg in ("micro", "macro"):
        b = getattr(rep, avg)
        t.add_row(avg, _fmt(b["precision"]), _fmt(b["recall"]), _fmt(b["f1"]))
    c = rep.metrics["counts"]
    t.caption = f"TP {c['tp']}, FP {c['fp']}, FN {c['fn']}"
    console.print(t)
    if per_document:
        d = Table(title="per document")
        for col in ("document", "TP", "FP", "FN", "F1"):
            d.add_column(col)
        for doc, row in rep.per_document.items():
            d.add_row(doc, str(row["tp"]), str(row["fp"]), str(row["fn"]), _fmt(row["f1"]))
        console.print(d)


def _agreement_table(report) -> None:
    from rich.table import Table

    console = _console()
    t = Table(title=f"agreement ({report.n_items} items, {report.n_raters} raters, {report.level})")
    t.add_column("coefficient")
    t.add_column("value", justify="right")
    t.add_row("observed agreement p_o", _fmt(report.observed_agreement))
    for name, value in report.coefficients.items():
        t.add_row(name, _fmt(value))
    console.print(t)
    for name, why in report.undefined.items():
        console.print(f"{name}: {why}", style="dim")


def _span_agreement_table(rep) -> None:
    from rich.table import Table

    console = _console()
    for s in rep.schemas:
        t = Table(title=f"pairwise span F1 ({s}); mean {_fmt(rep.mean_f1[s])}")
        t.add_column("")
        for a in rep.annotators:
            t.add_column(a, justify="right")
        for i, a in enumerate(rep.annotators):
            t.add_row(a, *(_fmt(v) for v in rep.pairwise[s][i]))
        console.print(t)
    if rep.token_kappa is not None:
        console.print(f"token κ (diagnostic, inflated by O tokens): {_fmt(rep.token_kappa)}")
