"""``ragmeter agreement``: inter-annotator agreement.

Cohen, Fleiss, Krippendorff and Gwet coefficients on labels; pairwise span F1 on annotations.

Engines are imported inside the command so that ``ragmeter --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ragmeter.cli.extraction.common import (
    _FORMATS,
    _alts,
    _choice,
    _console,
    _emit_json,
    _fmt,
    _load_spans,
    _split,
    _warn_lines,
    _write_output,
)
from ragmeter.errors import InputError, UsageError
from ragmeter.extraction.choices import LEVELS
from ragmeter.io.unannotated import drop_unannotated


def register(app: typer.Typer) -> None:
    @app.command("agreement")
    def agreement_cmd(
        files: list[str] = typer.Argument(  # noqa: B008 - typer's declaration style
            ..., help="One file (or BRAT folder) per annotator."
        ),
        level: str = typer.Option("nominal", "--level", help=f"{_alts(LEVELS)} (label files)."),
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
        _choice(cmd, "--level", level, LEVELS)
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
