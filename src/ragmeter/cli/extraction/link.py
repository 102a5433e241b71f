"""``ragmeter link``: entity-linking ranking, NIL detection and GERBIL end-to-end scores.

Engines are imported inside the command so that ``ragmeter --help`` stays fast.
"""

from __future__ import annotations

import typer

from ragmeter.cli.extraction.common import (
    _alts,
    _choice,
    _console,
    _detect_format,
    _emit_json,
    _fmt,
    _load_spans,
    _split,
    _warn_lines,
    _write_output,
    _zero_division,
)
from ragmeter.errors import UsageError
from ragmeter.extraction.choices import EMPTY_DOCUMENTS, LINK_MATCHES, LINK_MATCHINGS, LINK_SUBSETS
from ragmeter.io.unannotated import drop_unannotated


def register(app: typer.Typer) -> None:
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
        match: str = typer.Option("strong", "--match", help=f"--e2e: {_alts(LINK_MATCHES)}."),
        subset: str = typer.Option("all", "--subset", help=f"--e2e: {_alts(LINK_SUBSETS)}."),
        matching: str = typer.Option(
            "optimal", "--matching", help=f"--e2e: {_alts(LINK_MATCHINGS)}."
        ),
        empty_documents: str = typer.Option(
            "perfect", "--empty-documents", help=f"--e2e: {_alts(EMPTY_DOCUMENTS)}."
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
                ("--match", match, LINK_MATCHES),
                ("--subset", subset, LINK_SUBSETS),
                ("--matching", matching, LINK_MATCHINGS),
                ("--empty-documents", empty_documents, EMPTY_DOCUMENTS),
            ):
                _choice(cmd, opt, val, allowed)
            fmt_ = (
                _choice(cmd, "--format", fmt, ("brat", "heritage")) if fmt else _detect_format(gold)
            )
            if fmt_ not in ("brat", "heritage"):
                raise UsageError("--e2e needs BRAT or heritage corpora", command=cmd)
            from ragmeter.extraction.linking import evaluate_e2e

            lo = {
                "on_offset_mismatch": "error",
                "discontinuous": "span",
                "offset_unit": "codepoint",
            }
            gc, _ = _load_spans(gold, fmt_, role="gold", opts=lo)
            pc, _ = _load_spans(pred, fmt_, role="pred", opts=lo)
            if fmt_ == "heritage":
                _warn_lines(drop_unannotated([gc, pc], [gold, pred]))
            rep = evaluate_e2e(
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
        from ragmeter.extraction.linking import evaluate
        from ragmeter.io.mentions import read_link_gold, read_link_predictions

        g = read_link_gold(gold)
        p = read_link_predictions(pred)
        rep = evaluate(
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
