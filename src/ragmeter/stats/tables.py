"""Plain-text tables in the layouts ranx and UltraRAG print (tabulate's ``simple`` and
``fancy_grid``), without depending on tabulate.

Cells are strings; as in tabulate, a column whose every cell reads as a number is numeric: its
cells are reformatted with ``format(float(x), "g")``, aligned on the decimal point and its header
is right-aligned. Other columns are left-aligned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["display_width", "fancy_grid_table", "simple_table"]

MIN_PADDING = 2
_INT = re.compile(r"^[+-]?\d+$")


def display_width(s: str) -> int:
    """Terminal columns taken by ``s`` (wide East Asian characters count 2, combining 0)."""
    width = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return s.strip() == s and s.lower() not in ("nan", "inf", "-inf", "+inf", "infinity")


def _afterpoint(s: str) -> int:
    if not _is_number(s) or _INT.match(s):
        return -1
    pos = s.rfind(".")
    if pos < 0:
        pos = s.lower().rfind("e")
    return len(s) - pos - 1 if pos >= 0 else -1


def _pad_left(width: int, s: str) -> str:
    return " " * max(0, width - display_width(s)) + s


def _pad_right(width: int, s: str) -> str:
    return s + " " * max(0, width - display_width(s))


def _column(cells: list[str], header: str, align: str | None) -> tuple[list[str], str, int]:
    numeric = bool(cells) and all(_is_number(c) for c in cells)
    if align is None:
        align = "decimal" if numeric else "left"
    if numeric and align == "decimal":
        if not all(_INT.match(c) for c in cells):
            cells = [format(float(c), "g") for c in cells]
        decimals = [_afterpoint(c) for c in cells]
        most = max(decimals)
        cells = [c + " " * (most - k) for c, k in zip(cells, decimals, strict=True)]
    width = max([display_width(header) + MIN_PADDING, *(display_width(c) for c in cells)])
    if align == "left":
        out = [_pad_right(width, c) for c in cells]
        head = _pad_right(width, header)
    else:
        out = [_pad_left(width, c) for c in cells]
        head = _pad_left(width, header)
    return out, head, width


def _columns(
    headers: Sequence[str], rows: Sequence[Sequence[str]], aligns: Sequence[str | None] | None
) -> tuple[list[list[str]], list[str], list[int]]:
    ncols = len(headers)
    for row in rows:
        if len(row) != ncols:
            raise ValueError(f"row {list(row)!r} has {len(row)} cells for {ncols} headers")
    cols, heads, widths = [], [], []
    for j in range(ncols):
        align = aligns[j] if aligns is not None else None
        col, head, width = _column([str(r[j]) for r in rows], str(headers[j]), align)
        cols.append(col)
        heads.append(head)
        widths.append(width)
    return cols, heads, widths


def simple_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    aligns: Sequence[str | None] | None = None,
) -> str:
    """tabulate's ``simple`` layout (what ranx's ``Report.to_table()`` prints).

    >>> print(simple_table(["#", "Model", "NDCG@5"], [["a", "A", "0.403"], ["b", "B", "0.360"]]))
    #    Model      NDCG@5
    ---  -------  --------
    a    A           0.403
    b    B           0.36
    """
    cols, heads, widths = _columns(headers, rows, aligns)
    lines = ["  ".join(heads).rstrip(), "  ".join("-" * w for w in widths)]
    for i in range(len(rows)):
        lines.append("  ".join(col[i] for col in cols).rstrip())
    return "\n".join(lines)


def fancy_grid_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """tabulate's ``fancy_grid`` layout with every column left-aligned (UltraRAG's tables).

    >>> print(fancy_grid_table(["metrics", "p_value"], [["mrr", "0.01"]]))
    ╒═══════════╤═══════════╕
    │ metrics   │ p_value   │
    ╞═══════════╪═══════════╡
    │ mrr       │ 0.01      │
    ╘═══════════╧═══════════╛
    """
    cols, heads, widths = _columns(headers, rows, ["left"] * len(headers))

    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    lines = [rule("╒", "═", "╤", "╕"), "│ " + " │ ".join(heads) + " │", rule("╞", "═", "╪", "╡")]
    for i in range(len(rows)):
        if i:
            lines.append(rule("├", "─", "┼", "┤"))
        lines.append("│ " + " │ ".join(col[i] for col in cols) + " │")
    lines.append(rule("╘", "═", "╧", "╛"))
    return "\n".join(lines)
