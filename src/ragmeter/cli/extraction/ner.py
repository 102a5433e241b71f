"""``ragmeter ner``: entity scores of predicted spans or tags against gold.

nervaluate's four schemas, seqeval's entity score and token-level scores.

Engines are imported inside the command so that ``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import typer

from ragmeter.cli.extraction.common import (
    _FORMATS,
    _alts,
    _choice,
    _console,
    _detect_format,
    _emit_json,
    _fmt,
    _load_spans,
    _status,
    _warn_lines,
    _write_output,
    _zero_division,
)
from ragmeter.errors import UsageError
from ragmeter.extraction.choices import (
    EMPTY_DOCUMENTS,
    NER_DUPLICATES,
    NER_MODES,
    UNKNOWN_DOCUMENTS,
)
from ragmeter.io.unannotated import drop_unannotated
from ragmeter.records.choices import DISCONTINUOUS, OFFSET_UNITS, ON_OFFSET_MISMATCH


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
            "dedupe", "--duplicates", help=f"{_alts(NER_DUPLICATES)} (extra copies are SPU)."
        ),
        unknown_documents: str = typer.Option(
            "error", "--unknown-documents", help=f"{_alts(UNKNOWN_DOCUMENTS)}."
        ),
        zero_division: str = typer.Option("0", "--zero-division", help="0 | 1 | warn."),
        empty_documents: str = typer.Option(
            "perfect", "--empty-documents", help=f"{_alts(EMPTY_DOCUMENTS)} (macro over documents)."
        ),
        on_offset_mismatch: str = typer.Option(
            "error", "--on-offset-mismatch", help=f"{_alts(ON_OFFSET_MISMATCH)}."
        ),
        discontinuous: str = typer.Option(
            "span", "--discontinuous", help=f"BRAT: {_alts(DISCONTINUOUS)}."
        ),
        offset_unit: str = typer.Option(
            "codepoint",
            "--offset-unit",
            help=f"Offsets of BRAT and heritage JSON: {_alts(OFFSET_UNITS)}.",
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
            ("--mode", mode, NER_MODES),
            ("--duplicates", duplicates, NER_DUPLICATES),
            ("--unknown-documents", unknown_documents, UNKNOWN_DOCUMENTS),
            ("--empty-documents", empty_documents, EMPTY_DOCUMENTS),
            ("--on-offset-mismatch", on_offset_mismatch, ON_OFFSET_MISMATCH),
            ("--discontinuous", discontinuous, DISCONTINUOUS),
            ("--offset-unit", offset_unit, OFFSET_UNITS),
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
                from ragmeter.extraction.ner import evaluate_tags
                from ragmeter.io.conll import check_same_tokens, read_conll

                g = read_conll(gold, scheme=scheme, mode=mode)
                p = read_conll(pred, scheme=scheme, mode=mode)
                check_same_tokens(g, p)
                y_true = [s for d in g.documents for s in d.tags]
                y_pred = [s for d in p.documents for s in d.tags]
                doc_ids = [d.doc_id for d in g.documents for _ in d.tags]
                report = evaluate_tags(
                    y_true, y_pred, scheme=scheme, mode=mode, doc_ids=doc_ids, **options
                )
                report.settings["files"] = {"gold": gold, "pred": pred, "format": "conll"}
            else:
                from ragmeter.extraction.ner import evaluate

                lo = {
                    "on_offset_mismatch": on_offset_mismatch,
                    "discontinuous": discontinuous,
                    "offset_unit": offset_unit,
                }
                gc, grep = _load_spans(gold, fmt_, role="gold", opts=lo)
                pc, prep = _load_spans(pred, fmt_, role="pred", opts=lo)
                if fmt_ == "heritage":
                    _warn_lines(drop_unannotated([gc, pc], [gold, pred]))
                report = evaluate(gc, pc, on_offset_mismatch=on_offset_mismatch, **options)
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
