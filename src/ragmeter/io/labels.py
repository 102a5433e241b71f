"""Label files for type classification (``ragmeter classify``,
docs/extraction.md#type-classification).

Accepted forms, detected from the content:

* TSV with a header: ``id<TAB>label`` (extra columns ignored; an optional ``labels`` or
  ``secondary_types`` column holds further labels separated by ``|``);
* the heritage type-classification TSV: ``text<TAB>gold_type<TAB>secondary_types``, optional
  ``id`` (else the 1-based row number);
* JSON Lines or a JSON array of ``{"id", "label"}`` (optionally ``"labels": [...]``), or of
  heritage/ragmeter gold records with ``type_classification: {primary_type, secondary_types}``.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "gold.tsv"
>>> _ = p.write_text("id\\tlabel\\nq1\\tM\\nq2\\tA\\n", encoding="utf-8")
>>> read_labels(p).labels
{'q1': 'M', 'q2': 'A'}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ragmeter.errors import InputError
from ragmeter.io.files import open_binary

__all__ = ["LabelFile", "read_labels"]


@dataclass
class LabelFile:
    """Item id → primary label, and item id → further labels (multi-label), with lines."""

    path: str
    format: str
    labels: dict[str, str] = field(default_factory=dict)
    secondary: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def label_sets(self) -> dict[str, set[str]]:
        return {i: {lab, *self.secondary.get(i, [])} for i, lab in self.labels.items()}


def _first_char(path: str) -> str:
    with open_binary(path) as fh:
        head = fh.read(4096)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    text = head.decode("utf-8", errors="replace").lstrip()
    return text[:1]


def _put(out: LabelFile, rid: str, label: str, extra: list[str], line: int) -> None:
    if rid in out.labels:
        raise InputError(
            f"item '{rid}' appears twice (first on line {out.lines[rid]}; expected one label "
            "per item)",
            path=out.path,
            line=line,
        )
    if not label:
        raise InputError(f"item '{rid}' has an empty label", path=out.path, line=line)
    out.labels[rid] = label
    out.lines[rid] = line
    if extra:
        out.secondary[rid] = extra


def read_labels(path: str | os.PathLike[str], *, secondary_sep: str = "|") -> LabelFile:
    """Read a label file in any of the forms of the module docstring."""
    name = os.fspath(path)
    first = _first_char(name)
    if not first:
        raise InputError(
            "empty file (expected a TSV with a header, JSONL or a JSON array)", path=name
        )
    if first in "[{":
        from ragmeter.io.records import read_records

        out = LabelFile(name, "jsonl" if first == "{" else "json")
        for line, rec in read_records(name):
            rid = rec.get("id")
            if isinstance(rid, bool) or not isinstance(rid, (str, int)) or rid == "":
                raise InputError(
                    "record has no 'id' (expected a string or integer)", path=name, line=line
                )
            tc = rec.get("type_classification")
            if isinstance(tc, dict):
                label = tc.get("primary_type")
                extra = tc.get("secondary_types") or []
            else:
                label = rec.get("label")
                extra = rec.get("labels") or []
                if label is None and extra:
                    label, extra = extra[0], extra[1:]
            if isinstance(label, (int, float)) and not isinstance(label, bool):
                # ratings on a numeric scale (agreement --level ordinal/interval/ratio)
                label = str(label)
            if not isinstance(label, str):
                raise InputError(
                    f"label is {label!r} (expected a string or number under 'label' or "
                    "type_classification.primary_type)",
                    path=name,
                    line=line,
                )
            if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
                raise InputError("secondary labels must be a list of strings", path=name, line=line)
            _put(out, str(rid), label, [x for x in extra if x != label], line)
        return out
    from ragmeter.io.heritage_files import load_type_tsv

    with open_binary(name) as fh:
        header_line = (
            fh.readline().decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
        )
    header = [c.strip() for c in header_line.split("\t")]
    if "gold_type" in header:
        out = LabelFile(name, "heritage-tsv")
        for row in load_type_tsv(name, secondary_sep=secondary_sep):
            _put(out, row.id, row.primary, row.secondary, row.line)
        return out
    if "id" not in header or "label" not in header:
        raise InputError(
            f"header {header_line!r} (expected id<TAB>label, the heritage text<TAB>gold_type<TAB>"
            "secondary_types, JSONL or a JSON array)",
            path=name,
            line=1,
        )
    out = LabelFile(name, "tsv")
    i_id, i_label = header.index("id"), header.index("label")
    i_extra = next((header.index(c) for c in ("labels", "secondary_types") if c in header), None)
    from ragmeter.io.files import open_text

    with open_text(name) as fh:
        lines = fh.read().split("\n")
    for line_no, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != len(header):
            raise InputError(
                f"{len(cols)} column(s) (expected {len(header)}: {', '.join(header)})",
                path=name,
                line=line_no,
            )
        rid = cols[i_id].strip()
        if not rid:
            raise InputError("empty id", path=name, line=line_no)
        extra = []
        if i_extra is not None and cols[i_extra].strip():
            extra = [x.strip() for x in cols[i_extra].split(secondary_sep) if x.strip()]
        _put(out, rid, cols[i_label].strip(), extra, line_no)
    if not out.labels:
        raise InputError("no rows after the header", path=name)
    return out
