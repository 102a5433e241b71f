"""CoNLL / IOB files: loader and writer (docs/extraction.md#formats).

One token per line, columns separated by whitespace, the tag in ``tag_col`` (default: last),
a blank line between sentences. ``-DOCSTART-`` or a comment ``# doc_id = <id>`` starts a new
document (a ``# doc_id`` comment right after ``-DOCSTART-`` names that document); other
``# key = value`` lines are comments. Without either marker the file is one document named
after the file; unnamed documents are numbered ``doc0001…``.

Character offsets: tokens are aligned to ``text`` when given (each token must occur verbatim at
the next non-whitespace position); otherwise the text is rebuilt as the tokens joined by one
space within a sentence and ``\\n`` between sentences.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.conll"
>>> _ = p.write_text("Het O\\nRijksmuseum B-MUS\\nAmsterdam I-MUS\\n", encoding="utf-8")
>>> corpus, _ = load_conll(p)
>>> corpus.documents["x"].text, [(s.start, s.end, s.label) for s in corpus.spans["x"]]
('Het Rijksmuseum Amsterdam', [(4, 25, 'MUS')])
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import InputError
from ragmeter.io.annotations import ConversionReport, LoadReport, read_text_exact
from ragmeter.io.files import atomic_write
from ragmeter.records.errors import TagSchemeError, TokenMismatchError
from ragmeter.records.model import Corpus, Document, Span
from ragmeter.records.tags import ALLOWED_PREFIXES, SCHEMES, decode, is_well_formed, split_tag
from ragmeter.records.tokenize import get_tokenizer, spans_to_tags

__all__ = [
    "ConllDocument",
    "ConllFile",
    "check_same_tokens",
    "load_conll",
    "read_conll",
    "write_conll",
]

_DOC_COMMENT = re.compile(r"^#\s*doc_id\s*=\s*(.*?)\s*$")
_COMMENT = re.compile(r"^#\s+\S+\s*=")
_ALLOWED_LENIENT = frozenset("BIESO")


@dataclass
class ConllDocument:
    """One document: sentences of tokens and tags, with the line of every token."""

    doc_id: str
    tokens: list[list[str]] = field(default_factory=list)
    tags: list[list[str]] = field(default_factory=list)
    lines: list[list[int]] = field(default_factory=list)
    named: bool = False
    from_stem: bool = False  # the file had no document markers; the id is the file name


@dataclass
class ConllFile:
    path: str
    documents: list[ConllDocument]

    def document(self, doc_id: str) -> ConllDocument:
        for d in self.documents:
            if d.doc_id == doc_id:
                return d
        raise KeyError(doc_id)


def read_conll(
    path: str | os.PathLike[str],
    *,
    scheme: str = "IOB2",
    mode: str = "lenient",
    token_col: int = 0,
    tag_col: int = -1,
) -> ConllFile:
    """Read the tokens and tags of a CoNLL file, checking every tag's prefix (FILE:LINE)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme={scheme!r} (expected one of {', '.join(SCHEMES)})")
    name = os.fspath(path)
    text = read_text_exact(name)
    allowed = (
        ALLOWED_PREFIXES[scheme]
        if mode == "strict"
        else (_ALLOWED_LENIENT | ALLOWED_PREFIXES[scheme])
    )
    docs: list[ConllDocument] = []
    cur: ConllDocument | None = None
    sent_t: list[str] = []
    sent_g: list[str] = []
    sent_l: list[int] = []

    def close_sentence() -> None:
        nonlocal sent_t, sent_g, sent_l
        if sent_t:
            assert cur is not None
            cur.tokens.append(sent_t)
            cur.tags.append(sent_g)
            cur.lines.append(sent_l)
        sent_t, sent_g, sent_l = [], [], []

    def new_doc(doc_id: str | None) -> None:
        nonlocal cur
        close_sentence()
        cur = ConllDocument(doc_id or "", named=doc_id is not None)
        docs.append(cur)

    markers = False
    for line_no, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            close_sentence()
            continue
        m = _DOC_COMMENT.match(line)
        if m:
            markers = True
            if not m.group(1):
                raise InputError(
                    "empty doc_id comment (expected '# doc_id = <id>')", path=name, line=line_no
                )
            if cur is not None and not cur.tokens and not sent_t and not cur.named:
                cur.doc_id, cur.named = m.group(1), True  # names the -DOCSTART- document
            else:
                new_doc(m.group(1))
            continue
        if _COMMENT.match(line):
            continue
        cols = line.split()
        if cols[0] == "-DOCSTART-":
            markers = True
            new_doc(None)
            continue
        if cur is None:
            new_doc(None)
        try:
            token, tag = cols[token_col], cols[tag_col]
        except IndexError:
            raise InputError(
                f"{len(cols)} column(s) (expected a token in column {token_col} and a tag in "
                f"column {tag_col})",
                path=name,
                line=line_no,
            ) from None
        if len(cols) < 2:
            raise InputError(
                "one column (expected at least a token and a tag)", path=name, line=line_no
            )
        try:
            prefix, _ = split_tag(tag)
        except TagSchemeError as exc:
            raise InputError(exc.message, path=name, line=line_no) from None
        if prefix not in allowed or (prefix == "O" and tag != "O"):
            raise TagSchemeError(
                f"tag '{tag}' is not a {scheme} tag (expected 'O' or one of "
                f"{', '.join(p + '-TYPE' for p in sorted(allowed - {'O'}))})",
                path=name,
                line=line_no,
            )
        sent_t.append(token)
        sent_g.append(tag)
        sent_l.append(line_no)
    close_sentence()
    if not docs:
        raise InputError("no tokens (expected one 'token tag' line per token)", path=name)
    if not markers:
        docs[0].doc_id, docs[0].named, docs[0].from_stem = Path(name).stem, True, True
    n = 0
    seen: set[str] = set()
    for d in docs:
        if not d.named:
            n += 1
            d.doc_id = f"doc{n:04d}"
        if d.doc_id in seen:
            raise InputError(
                f"document '{d.doc_id}' appears twice (expected unique doc ids)", path=name
            )
        seen.add(d.doc_id)
    return ConllFile(name, docs)


def check_same_tokens(gold: ConllFile, pred: ConllFile) -> None:
    """Raise :class:`TokenMismatchError` at the first difference between the token sequences
    of two files (documents, sentences, tokens)."""
    g_ids = [d.doc_id for d in gold.documents]
    p_ids = [d.doc_id for d in pred.documents]
    # files without document markers are one document each, named after the file
    unnamed = all(d.from_stem for d in (*gold.documents, *pred.documents))
    if g_ids != p_ids and not unnamed:
        extra = sorted(set(p_ids) - set(g_ids))
        missing = sorted(set(g_ids) - set(p_ids))
        what = (
            f"document '{extra[0]}' is not in the gold file"
            if extra
            else f"document '{missing[0]}' is missing"
            if missing
            else "documents are in a different order"
        )
        raise TokenMismatchError(
            f"{what} (expected the same documents as {gold.path})", path=pred.path
        )
    for gd, pd in zip(gold.documents, pred.documents, strict=True):
        for si in range(max(len(gd.tokens), len(pd.tokens))):
            if si >= len(gd.tokens) or si >= len(pd.tokens):
                line = pd.lines[si][0] if si < len(pd.tokens) else None
                raise TokenMismatchError(
                    f"document '{gd.doc_id}' has {len(pd.tokens)} sentences, gold has "
                    f"{len(gd.tokens)} (expected the same sentences as {gold.path})",
                    path=pred.path,
                    line=line,
                )
            gt, pt = gd.tokens[si], pd.tokens[si]
            for ti in range(max(len(gt), len(pt))):
                g_tok = gt[ti] if ti < len(gt) else None
                p_tok = pt[ti] if ti < len(pt) else None
                if g_tok != p_tok:
                    line = pd.lines[si][ti] if ti < len(pt) else pd.lines[si][-1]
                    g_line = gd.lines[si][ti] if ti < len(gt) else gd.lines[si][-1]
                    raise TokenMismatchError(
                        f"token {p_tok!r} differs from gold {g_tok!r} at {gold.path}:{g_line} "
                        f"(expected identical tokens in gold and predictions)",
                        path=pred.path,
                        line=line,
                    )


def _offsets(
    doc: ConllDocument, text: str | None, path: str
) -> tuple[str, list[list[tuple[int, int]]]]:
    offsets: list[list[tuple[int, int]]] = []
    if text is None:
        parts: list[str] = []
        pos = 0
        for si, sent in enumerate(doc.tokens):
            if si:
                parts.append("\n")
                pos += 1
            row = []
            for ti, tok in enumerate(sent):
                if ti:
                    parts.append(" ")
                    pos += 1
                row.append((pos, pos + len(tok)))
                parts.append(tok)
                pos += len(tok)
            offsets.append(row)
        return "".join(parts), offsets
    pos = 0
    n = len(text)
    for si, sent in enumerate(doc.tokens):
        row = []
        for ti, tok in enumerate(sent):
            while pos < n and text[pos].isspace():
                pos += 1
            if text[pos : pos + len(tok)] != tok:
                raise TokenMismatchError(
                    f"token {tok!r} is not at offset {pos} of the text of document "
                    f"'{doc.doc_id}', which reads {text[pos : pos + len(tok)]!r} (expected "
                    "tokens to occur verbatim, in order)",
                    path=path,
                    line=doc.lines[si][ti],
                )
            row.append((pos, pos + len(tok)))
            pos += len(tok)
        offsets.append(row)
    return text, offsets


def load_conll(
    path: str | os.PathLike[str],
    *,
    scheme: str = "IOB2",
    mode: Literal["lenient", "strict"] = "lenient",
    text: Mapping[str, str] | None = None,
    token_col: int = 0,
    tag_col: int = -1,
    strict_gold: bool = False,
) -> tuple[Corpus, LoadReport]:
    """Load a CoNLL file as character spans (see the module docstring).

    Tags are decoded per sentence (docs/extraction.md#ner): ``mode="lenient"`` repairs ill-formed
    chunks the way
    conlleval does (each repair is listed), ``"strict"`` keeps only well-formed chunks, and
    ``strict_gold=True`` raises on any ill-formed sentence.
    """
    cf = read_conll(path, scheme=scheme, mode=mode, token_col=token_col, tag_col=tag_col)
    name = cf.path
    report = LoadReport(path=name, format="conll")
    documents: dict[str, Document] = {}
    spans: dict[str, list[Span]] = {}
    for doc in cf.documents:
        doc_text = None
        if text is not None:
            if doc.doc_id not in text:
                raise TokenMismatchError(
                    f"no text given for document '{doc.doc_id}' (expected a text per document)",
                    path=name,
                )
            doc_text = text[doc.doc_id]
        full, offsets = _offsets(doc, doc_text, name)
        out: list[Span] = []
        for si, (sent, toks) in enumerate(zip(doc.tags, offsets, strict=True)):
            if not is_well_formed(sent, scheme):
                if strict_gold:
                    raise TagSchemeError(
                        f"ill-formed {scheme} sentence ({' '.join(sent)}) (expected "
                        "well-formed gold with strict_gold=True)",
                        path=name,
                        line=doc.lines[si][0],
                    )
                report.conversions.append(
                    {
                        "kind": "repaired_tags" if mode == "lenient" else "dropped_ill_formed",
                        "doc_id": doc.doc_id,
                        "line": doc.lines[si][0],
                        "mode": mode,
                    }
                )
            for typ, a, b in decode(sent, scheme=scheme, mode=mode, sentence=si):
                s, e = toks[a][0], toks[b - 1][1]
                out.append(Span(doc.doc_id, s, e, typ, text=full[s:e]))
        documents[doc.doc_id] = Document(
            doc.doc_id, full, {"conll": {"text_rebuilt": doc_text is None}}
        )
        spans[doc.doc_id] = out
    report.n_documents = len(documents)
    report.n_spans = sum(len(v) for v in spans.values())
    report.notes = {"scheme": scheme, "mode": mode, "text_rebuilt": text is None}
    return Corpus(documents, spans), report


def write_conll(
    corpus: Corpus,
    path: str | os.PathLike[str],
    *,
    scheme: str = "IOB2",
    tokenizer: Any = "simple",
    docstart: bool = True,
    doc_ids: bool = False,
    misaligned: Literal["expand", "error", "drop"] = "expand",
    on_overlap: Literal["error", "keep_longest"] = "error",
) -> ConversionReport:
    """Write ``token<TAB>tag`` lines, a blank line after each sentence (a line of the text; no
    sentence splitting). With ``docstart``, each document starts with ``-DOCSTART-<TAB>O`` and a
    blank line (``doc_ids=True`` adds ``# doc_id = <id>`` after it). The report lists
    everything IOB cannot hold: overlapping or nested spans, discontinuous spans (written as
    their fragments), misaligned spans, spans crossing a line break, KB links and NIL flags.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme={scheme!r} (expected one of {', '.join(SCHEMES)})")
    tok, tok_name = get_tokenizer(tokenizer)
    name = os.fspath(path)
    report = ConversionReport(
        path=name, format="conll", notes={"scheme": scheme, "tokenizer": tok_name}
    )
    chunks: list[str] = []
    ids = corpus.doc_ids
    if not docstart and len(ids) > 1:
        report.lost.append(
            {"reason": "documents are not separated (docstart=False)", "n_documents": len(ids)}
        )
    for doc_id in ids:
        doc = corpus.documents.get(doc_id)
        if doc is None:
            raise InputError("spans for a document without text", location=f"document '{doc_id}'")
        text = doc.text
        tokens = tok(text)
        for a, b in tokens:
            if any(ch.isspace() for ch in text[a:b]):
                raise InputError(
                    f"token {text[a:b]!r} at {a}-{b} contains whitespace, which a CoNLL line "
                    "cannot hold",
                    location=f"document '{doc_id}'",
                )
        pieces: list[tuple[int, int, str]] = []
        for s in corpus.spans.get(doc_id, []):
            if s.fragments:
                report.lost.append(
                    {
                        "doc_id": doc_id,
                        "span": [s.start, s.end],
                        "label": s.label,
                        "reason": "discontinuous (written as its fragments)",
                    }
                )
            if s.kb_ids or s.nil:
                report.lost.append(
                    {
                        "doc_id": doc_id,
                        "span": [s.start, s.end],
                        "label": s.label,
                        "reason": "KB link or NIL flag (IOB holds labels only)",
                    }
                )
            pieces.extend((a, b, s.label) for a, b in s.pieces)
        conv = spans_to_tags(
            tokens,
            pieces,
            scheme=scheme,
            misaligned=misaligned,
            on_overlap=on_overlap,
            where=f"document '{doc_id}'",
        )
        for kind, rows in (
            ("misaligned", conv.misaligned),
            ("dropped", conv.dropped),
            ("overlap", conv.overlaps),
            ("no tokens", conv.no_tokens),
        ):
            report.lost.extend({"doc_id": doc_id, "reason": kind, **row} for row in rows)
        # sentences are the lines of the text
        line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        import bisect

        sentence_of = [bisect.bisect_right(line_starts, a) - 1 for a, _ in tokens]
        for a, b, lab in pieces:
            if "\n" in text[a:b]:
                report.lost.append(
                    {
                        "doc_id": doc_id,
                        "span": [a, b],
                        "label": lab,
                        "reason": "crosses a line break (split into two chunks)",
                    }
                )
        if docstart:
            chunks.append("-DOCSTART-\tO\n")
            if doc_ids:
                chunks.append(f"# doc_id = {doc_id}\n")
            chunks.append("\n")
        prev = None
        for (a, b), tag, sent in zip(tokens, conv.tags, sentence_of, strict=True):
            if prev is not None and sent != prev:
                chunks.append("\n")
            chunks.append(f"{text[a:b]}\t{tag}\n")
            prev = sent
        if prev is not None:
            chunks.append("\n")
        report.n_documents += 1
        report.n_spans += len(corpus.spans.get(doc_id, []))
    with atomic_write(name, "wb") as fh:
        fh.write("".join(chunks).encode("utf-8"))
    return report
