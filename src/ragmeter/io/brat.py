"""BRAT standoff: loader and writer (docs/extraction.md#formats, https://brat.nlplab.org/standoff.html).

A document is ``X.txt`` (UTF-8 text, read byte-exact) and ``X.ann``; its ``doc_id`` is the path
of ``X`` relative to the corpus root with ``/`` separators. ``T`` lines become spans, ``N``
lines add canonical KB ids (several per span allowed), ``A``/``M`` lines set attributes (the
``nil_attribute``, default ``NIL``, sets ``nil=True``), and ``R``/``E``/``#``/``*`` lines are
kept for round trips. Anything else is an error with its file and line.

>>> import pathlib, tempfile
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> _ = (root / "d.txt").write_text("Rijks- en Stedelijk Museum", encoding="utf-8")
>>> ann = "T1\\tGRP.HER.MUS 0 5;20 26\\tRijks Museum\\n"
>>> _ = (root / "d.ann").write_text(ann, encoding="utf-8")
>>> corpus, report = load_brat(root)
>>> span = corpus.spans["d"][0]
>>> (span.start, span.end, span.fragments), report.conversions[0]["kind"]
((0, 26, ((0, 5), (20, 26))), 'discontinuous')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import InputError
from ragmeter.io.annotations import ConversionReport, LoadReport, OffsetConverter, read_text_exact
from ragmeter.io.files import atomic_write
from ragmeter.records.choices import DISCONTINUOUS, Discontinuous, OffsetUnit, OnMismatch, expected
from ragmeter.records.kbids import canonical_kb_id
from ragmeter.records.model import Corpus, Document, Span
from ragmeter.records.validation import validate

__all__ = ["format_ann", "load_brat", "parse_ann", "write_brat"]

_ID = re.compile(r"^([TNAMREL*#])(\d*)$")
_FRAG = re.compile(r"^(\d+) (\d+)$")
_TREF = re.compile(r"\bT(\d+)\b")


@dataclass
class _TLine:
    tid: str
    label: str
    fragments: list[tuple[int, int]]
    surface: str
    line: int


def parse_ann(
    content: str, *, path: str = "<ann>", text: str | None = None, offset_unit: str = "codepoint"
) -> tuple[
    list[_TLine],
    dict[str, list[tuple[str, int]]],
    dict[str, dict[str, str]],
    list[str],
    dict[str, int],
]:
    """Parse ``.ann`` content: T lines, N references (T id → [(canonical id, line)]),
    attributes (T id → {name: value}), extra lines and the line of each T/N/A id."""
    conv = OffsetConverter(text or "", offset_unit) if offset_unit != "codepoint" else None
    tlines: list[_TLine] = []
    norms: dict[str, list[tuple[str, int]]] = {}
    attrs: dict[str, dict[str, str]] = {}
    extras: list[str] = []
    lines_of: dict[str, int] = {}
    seen_ids: dict[str, int] = {}
    for line_no, raw in enumerate(content.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip():
            continue
        head, _, rest = line.partition("\t")
        m = _ID.match(head)
        if not m:
            raise InputError(
                f"line starts with {head[:20]!r} (expected a BRAT id such as T1, N1, A1, R1, E1 "
                "or #1, then a tab)",
                path=path,
                line=line_no,
            )
        kind = m.group(1)
        if kind not in ("*", "#") and head in seen_ids:
            raise InputError(
                f"id {head} is used twice (first on line {seen_ids[head]}; expected unique ids)",
                path=path,
                line=line_no,
            )
        seen_ids[head] = line_no
        if kind == "T":
            fields = line.split("\t")
            if len(fields) != 3:
                raise InputError(
                    f"text-bound line has {len(fields)} tab-separated fields (expected 3: id, "
                    "'Label start end[;start end...]', surface text)",
                    path=path,
                    line=line_no,
                )
            label, _, frag_text = fields[1].partition(" ")
            if not label or not frag_text:
                raise InputError(
                    f"text-bound annotation {fields[1]!r} (expected 'Label start end')",
                    path=path,
                    line=line_no,
                )
            frags = []
            for piece in frag_text.split(";"):
                fm = _FRAG.match(piece.strip())
                if not fm:
                    raise InputError(
                        f"offsets {piece!r} (expected two non-negative integers 'start end')",
                        path=path,
                        line=line_no,
                    )
                a, b = int(fm.group(1)), int(fm.group(2))
                if conv is not None:
                    try:
                        a, b = conv(a), conv(b)
                    except InputError as exc:
                        raise InputError(exc.message, path=path, line=line_no) from None
                frags.append((a, b))
            tlines.append(_TLine(head, label, frags, fields[2], line_no))
            lines_of[head] = line_no
        elif kind == "N":
            body = rest.split("\t")[0].split(" ")
            if len(body) != 3 or body[0] != "Reference" or not body[1].startswith("T"):
                raise InputError(
                    f"normalization {rest.split(chr(9))[0]!r} (expected "
                    "'Reference T<k> <DB>:<ID>')",
                    path=path,
                    line=line_no,
                )
            db_id = body[2]
            if ":" not in db_id:
                raise InputError(
                    f"normalization target {db_id!r} has no database prefix (expected <DB>:<ID>)",
                    path=path,
                    line=line_no,
                )
            canon = canonical_kb_id(db_id)
            if canon is None:
                raise InputError(
                    f"normalization target {db_id!r} is empty", path=path, line=line_no
                )
            norms.setdefault(body[1], []).append((canon, line_no))
            lines_of[head] = line_no
        elif kind in ("A", "M"):
            body = rest.split(" ")
            if len(body) not in (2, 3) or not body[1].startswith(("T", "E", "R")):
                raise InputError(
                    f"attribute {rest!r} (expected 'Name T<k>' or 'Name T<k> value')",
                    path=path,
                    line=line_no,
                )
            if body[1].startswith("T"):
                attrs.setdefault(body[1], {})[body[0]] = body[2] if len(body) == 3 else "true"
                lines_of[head] = line_no
            else:
                extras.append(line)
        else:  # R, E, #, *: relations, events, notes, equivalences
            extras.append(line)
    return tlines, norms, attrs, extras, lines_of


def _doc_files(root: Path) -> list[tuple[str, Path, Path | None]]:
    if root.is_file():
        stem = root.with_suffix("")
        txt, ann = stem.with_suffix(".txt"), stem.with_suffix(".ann")
        if not txt.exists():
            raise InputError(
                f"{ann.name} has no {txt.name} (expected the text next to it)", path=str(ann)
            )
        return [(stem.name, txt, ann if ann.exists() else None)]
    if not root.is_dir():
        raise InputError(
            "no such file or directory (expected a BRAT corpus folder)", path=str(root)
        )
    out = []
    txts = {p.relative_to(root).with_suffix("").as_posix(): p for p in root.rglob("*.txt")}
    anns = {p.relative_to(root).with_suffix("").as_posix(): p for p in root.rglob("*.ann")}
    orphans = sorted(set(anns) - set(txts))
    if orphans:
        raise InputError(
            f"{anns[orphans[0]].name} has no .txt (expected X.txt next to every X.ann)",
            path=str(anns[orphans[0]]),
        )
    for doc_id in sorted(txts):
        out.append((doc_id, txts[doc_id], anns.get(doc_id)))
    if not out:
        raise InputError("no .txt/.ann documents (expected a BRAT corpus folder)", path=str(root))
    return out


def load_brat(
    root: str | os.PathLike[str],
    *,
    offset_unit: OffsetUnit = "codepoint",
    discontinuous: Discontinuous = "span",
    nil_attribute: str = "NIL",
    on_offset_mismatch: OnMismatch = "error",
    vocabulary: Any = None,
    role: Literal["gold", "pred"] = "gold",
) -> tuple[Corpus, LoadReport]:
    """Load a BRAT corpus (a folder, or one ``X.ann``/``X.txt``) into a :class:`Corpus`.

    Surfaces are validated against the text (fragment texts joined by one space); offsets in
    ``utf16`` or ``utf8`` units are converted to code points. Discontinuous spans become one
    span with ``fragments`` (``"span"``, listed), one span per fragment (``"fragments"``) or an
    error.
    """
    if discontinuous not in DISCONTINUOUS:
        raise ValueError(f"discontinuous={discontinuous!r} (expected {expected(DISCONTINUOUS)})")
    root_path = Path(os.fspath(root))
    report = LoadReport(path=str(root_path), format="brat")
    documents: dict[str, Document] = {}
    spans: dict[str, list[Span]] = {}
    where: dict[tuple[str, int], tuple[str, int]] = {}
    for doc_id, txt_path, ann_path in _doc_files(root_path):
        text = read_text_exact(txt_path)
        meta: dict[str, Any] = {"brat": {"extra_lines": [], "t_ids": []}}
        doc_spans: list[Span] = []
        if ann_path is not None:
            ann_name = str(ann_path)
            content = read_text_exact(ann_path)
            tlines, norms, attrs, extras, lines_of = parse_ann(
                content, path=ann_name, text=text, offset_unit=offset_unit
            )
            t_ids = {t.tid for t in tlines}
            for ref, items in norms.items():
                if ref not in t_ids:
                    raise InputError(
                        f"normalization refers to {ref}, which is not a text-bound annotation "
                        "of this file",
                        path=ann_name,
                        line=items[0][1],
                    )
            for ref in attrs:
                if ref not in t_ids:
                    raise InputError(
                        f"attribute refers to {ref}, which is not a text-bound annotation",
                        path=ann_name,
                        line=lines_of.get(ref, 0) or None,
                    )
            meta["brat"]["extra_lines"] = extras
            for t in tlines:
                kb = [c for c, _ in norms.get(t.tid, [])]
                attributes = dict(attrs.get(t.tid, {}))
                nil = attributes.get(nil_attribute, "false").lower() not in ("false", "0", "no")
                frags = sorted(t.fragments)
                if len(frags) > 1 and discontinuous == "error":
                    raise InputError(
                        f"{t.tid} is discontinuous ({len(frags)} fragments; expected "
                        "discontinuous='span' or 'fragments')",
                        path=ann_name,
                        line=t.line,
                    )
                try:
                    span = Span(
                        doc_id,
                        frags[0][0],
                        frags[-1][1],
                        t.label,
                        text=t.surface,
                        fragments=tuple(frags) if len(frags) > 1 else None,
                        kb_ids=frozenset(kb),
                        nil=nil,
                        attributes=attributes,
                    )
                except InputError as exc:
                    raise InputError(exc.message, path=ann_name, line=t.line) from None
                where[(doc_id, len(doc_spans))] = (ann_name, t.line)
                doc_spans.append(span)
                meta["brat"]["t_ids"].append(t.tid)
        documents[doc_id] = Document(doc_id, text, meta)
        spans[doc_id] = doc_spans
    corpus = Corpus(documents, spans)
    val = validate(
        corpus,
        vocabulary=vocabulary,
        on_offset_mismatch=on_offset_mismatch,
        role=role,
        duplicates="keep" if role == "pred" else None,
        locate=lambda d, i: where.get((d, i), (None, None)),
    )
    corpus = val.corpus
    # keep each surviving span's original T id (skipped spans drop out; order is preserved)
    skipped = {(r["doc_id"], r["start"], r["end"], r["label"], r["text"]) for r in val.skipped}
    for doc_id, before in spans.items():
        ids = documents[doc_id].meta["brat"]["t_ids"]
        kept = [
            tid
            for s, tid in zip(before, ids, strict=True)
            if (doc_id, s.start, s.end, s.label, s.text) not in skipped
        ]
        documents[doc_id].meta["brat"]["t_ids"] = kept
    for doc_id in corpus.doc_ids:
        for s in corpus.spans[doc_id]:
            if s.fragments:
                report.conversions.append(
                    {
                        "kind": "discontinuous",
                        "doc_id": doc_id,
                        "fragments": [list(f) for f in s.fragments],
                        "label": s.label,
                        "policy": discontinuous,
                    }
                )
    if discontinuous == "fragments":
        split: dict[str, list[Span]] = {}
        for doc_id in corpus.doc_ids:
            text = corpus.documents[doc_id].text
            out: list[Span] = []
            for s in corpus.spans[doc_id]:
                if not s.fragments:
                    out.append(s)
                    continue
                for a, b in s.fragments:
                    out.append(s.replace(start=a, end=b, fragments=None, text=text[a:b]))
            split[doc_id] = out
        corpus = Corpus(corpus.documents, split)
    report.validation = val.to_dict()
    report.warnings.extend(val.warnings)
    report.n_documents = len(corpus)
    report.n_spans = corpus.n_spans
    report.notes["offset_unit"] = offset_unit
    return corpus, report


def _brat_id(kb_id: str) -> str:
    return f"Wikidata:{kb_id}" if re.match(r"^Q\d+$", kb_id) else kb_id


def format_ann(
    doc: Document, spans: list[Span], *, nil_attribute: str = "NIL"
) -> tuple[str, list[dict[str, Any]]]:
    """The ``.ann`` content of one document (canonical order) and what it could not hold."""
    lost: list[dict[str, Any]] = []
    ordered = sorted(spans, key=lambda s: (s.start, s.end, s.label, s.pieces))
    lines: list[str] = []
    new_id: dict[str, str] = {}
    old_ids = doc.meta.get("brat", {}).get("t_ids", []) if isinstance(doc.meta, dict) else []
    orig = {id(s): old_ids[i] for i, s in enumerate(spans) if i < len(old_ids)}
    for n, s in enumerate(ordered, start=1):
        surface = s.surface(doc.text)
        if "\t" in surface or "\n" in surface or "\r" in surface:
            raise InputError(
                f"span {s.start}-{s.end} '{s.label}' covers a tab or line break, which a BRAT "
                "surface text cannot hold (expected fragments around it)",
                location=f"document '{doc.doc_id}'",
            )
        frags = ";".join(f"{a} {b}" for a, b in s.pieces)
        lines.append(f"T{n}\t{s.label} {frags}\t{surface}")
        if id(s) in orig:
            new_id[orig[id(s)]] = f"T{n}"
        if s.identifiers:
            lost.append(
                {"doc_id": doc.doc_id, "span": [s.start, s.end], "identifiers": dict(s.identifiers)}
            )
    k = 0
    for n, s in enumerate(ordered, start=1):
        for kb in sorted(s.kb_ids):
            k += 1
            lines.append(f"N{k}\tReference T{n} {_brat_id(kb)}\t{s.surface(doc.text)}")
    k = 0
    for n, s in enumerate(ordered, start=1):
        if s.nil:
            k += 1
            lines.append(f"A{k}\t{nil_attribute} T{n}")
        for name in sorted(s.attributes):
            if name == nil_attribute:
                continue
            k += 1
            value = s.attributes[name]
            lines.append(f"A{k}\t{name} T{n}" + ("" if value == "true" else f" {value}"))
    for line in (
        doc.meta.get("brat", {}).get("extra_lines", []) if isinstance(doc.meta, dict) else []
    ):
        head, _, rest = line.partition("\t")
        missing = [f"T{m}" for m in _TREF.findall(rest) if f"T{m}" not in new_id]
        if missing:
            lost.append(
                {
                    "doc_id": doc.doc_id,
                    "line": line,
                    "reason": f"refers to {missing[0]}, no longer present",
                }
            )
            continue
        lines.append(head + "\t" + _TREF.sub(lambda m: new_id[f"T{m.group(1)}"], rest))
    return "".join(line + "\n" for line in lines), lost


def write_brat(
    corpus: Corpus, out_dir: str | os.PathLike[str], *, nil_attribute: str = "NIL"
) -> ConversionReport:
    """Write ``X.txt`` (byte-exact) and ``X.ann`` for every document of ``corpus``.

    In the ``.ann``: T lines ordered by (start, end, label) and numbered T1…, then one N line per
    KB id (sorted; Wikidata ids as ``Wikidata:<QID>``, entry label = mention text), then an A
    line per NIL span (and per other attribute), then kept relation/event/note lines with their
    T references renumbered. Identifiers other than KB ids cannot be written and are listed.
    """
    out = Path(os.fspath(out_dir))
    report = ConversionReport(path=str(out), format="brat")
    for doc_id in corpus.doc_ids:
        doc = corpus.documents.get(doc_id)
        if doc is None:
            raise InputError(
                "spans for a document without text (BRAT needs the .txt)",
                location=f"document '{doc_id}'",
            )
        if doc_id.startswith("/") or ".." in doc_id.split("/"):
            raise InputError(
                f"document id '{doc_id}' is not a relative path (expected one for X.txt)"
            )
        ann, lost = format_ann(doc, corpus.spans.get(doc_id, []), nil_attribute=nil_attribute)
        base = out / doc_id
        with atomic_write(str(base) + ".txt", "wb") as fh:
            fh.write(doc.text.encode("utf-8"))
        with atomic_write(str(base) + ".ann", "wb") as fh:
            fh.write(ann.encode("utf-8"))
        report.lost.extend(lost)
        report.n_documents += 1
        report.n_spans += len(corpus.spans.get(doc_id, []))
    return report
