"""A comparison of N systems, rendered: ranx's table, Markdown, LaTeX, JSON, CSV and UltraRAG.

Each system's mean carries the letters of the systems it beats significantly (after the
correction), as ranx prints them. Running the tests is :func:`ragmeter.stats.compare.compare`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragmeter.stats.result import TestResult
from ragmeter.stats.tables import fancy_grid_table, simple_table
from ragmeter.views import require_pandas

if TYPE_CHECKING:
    import pandas as pd

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ"
# ranx 0.3.21 prints U+06F9 (an Extended Arabic-Indic digit nine) for q; kept in ranx_compat
RANX_SUPERSCRIPTS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ"
RESERVED_NAMES = (
    "stat_test",
    "metrics",
    "model_names",
    "settings",
    "pairs",
    "comparisons_adjusted",
)
_RANX_LABELS = {
    "hits": "Hits",
    "hit_rate": "Hit Rate",
    "precision": "P",
    "recall": "Recall",
    "f1": "F1",
    "r-precision": "R-Prec",
    "mrr": "MRR",
    "map": "MAP",
    "dcg": "DCG",
    "dcg_burges": "DCG Burges",
    "ndcg": "NDCG",
    "ndcg_burges": "NDCG Burges",
    "bpref": "BPref",
}
_TEST_LABELS = {
    "randomization": "randomization test",
    "t": "paired Student's t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}
_CORRECTION_LABELS = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini–Hochberg",
    "by": "Benjamini–Yekutieli",
    "none": "no correction",
}


def _ranx_label(metric: str) -> str:
    """ranx's column label for a ranx metric name (``ndcg@5`` → ``NDCG@5``), else the name."""
    name, sep, level = metric.partition("-l")
    base, at, cutoff = name.partition("@")
    label = _RANX_LABELS.get(base)
    if label is None:
        return metric
    return f"{label}{at}{cutoff}" + (f"-l{level}" if sep else "")


@dataclass(frozen=True)
class PairComparison:
    """One pair of systems on one metric: the test result (with its corrected p-value) and
    win/tie/loss counts of ``system_a`` against ``system_b`` on the rounded differences."""

    metric: str
    system_a: str
    system_b: str
    result: TestResult
    win_tie_loss: Mapping[str, int]

    @property
    def p_value(self) -> float:
        return self.result.p_value

    @property
    def p_adjusted(self) -> float | None:
        return self.result.p_adjusted

    @property
    def significant(self) -> bool:
        return self.result.significant

    def swapped(self) -> PairComparison:
        """The same comparison read as ``system_b`` versus ``system_a``."""
        w = self.win_tie_loss
        return PairComparison(
            self.metric,
            self.system_b,
            self.system_a,
            self.result.swapped(),
            {"W": w["L"], "T": w["T"], "L": w["W"]},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "system_a": self.system_a,
            "system_b": self.system_b,
            "p_value": self.result.p_value,
            "p_adjusted": self.result.p_adjusted,
            "significant": self.result.significant,
            "win_tie_loss": dict(self.win_tie_loss),
            "result": self.result.to_dict(),
        }


@dataclass(frozen=True)
class ComparisonReport:
    """Pairwise comparisons of N systems on several metrics, with ranx-style exports."""

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    means: Mapping[str, Mapping[str, float]]
    n_queries: Mapping[str, int]
    pairs: tuple[PairComparison, ...]
    settings: Mapping[str, Any]
    alignment: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    # -- lookups ------------------------------------------------------------------------------
    @property
    def labels(self) -> tuple[str, ...]:
        """Row labels ``a, b, c, …`` in input order (more than 26 systems have no letters)."""
        return tuple(
            LETTERS[i] if i < len(LETTERS) else f"#{i + 1}" for i in range(len(self.systems))
        )

    def pair(self, a: str, b: str, metric: str) -> PairComparison:
        """The comparison of system ``a`` against ``b`` on ``metric`` (swapped if needed)."""
        for p in self.pairs:
            if p.metric != metric:
                continue
            if (p.system_a, p.system_b) == (a, b):
                return p
            if (p.system_a, p.system_b) == (b, a):
                return p.swapped()
        known = ", ".join(self.systems)
        raise KeyError(f"no comparison of {a!r} and {b!r} on {metric!r} (systems: {known})")

    def beats(self, a: str, b: str, metric: str) -> bool:
        """The marker rule: ``a`` gets ``b``'s letter iff the pair is significant and ``a``'s
        mean is better (higher, or lower for a metric whose direction is ``lower``)."""
        p = self.pair(a, b, metric)
        if not p.significant:
            return False
        lower = self.settings.get("directions", {}).get(metric) == "lower"
        ma, mb = self.means[a][metric], self.means[b][metric]
        return ma < mb if lower else ma > mb

    # -- table --------------------------------------------------------------------------------
    def _fmt(self, score: float) -> str:
        digits = int(self.settings["rounding_digits"])
        return f"{round(score, digits):.{digits}f}"

    def _markers(self, system: str, metric: str, *, latex: bool = False) -> str:
        if len(self.systems) > len(LETTERS):
            raise ValueError(
                f"the marker table labels at most {len(LETTERS)} systems, got "
                f"{len(self.systems)}; use to_dict() or the pairs"
            )
        chars = (
            LETTERS
            if latex
            else (RANX_SUPERSCRIPTS if self.settings.get("ranx_compat") else SUPERSCRIPTS)
        )
        return "".join(
            chars[j]
            for j, other in enumerate(self.systems)
            if other != system and self.beats(system, other, metric)
        )

    def table_rows(self) -> list[list[str]]:
        """``[label, system, cell per metric]``; a cell is the rounded mean plus markers."""
        return [
            [label, system]
            + [self._fmt(self.means[system][m]) + self._markers(system, m) for m in self.metrics]
            for label, system in zip(self.labels, self.systems, strict=True)
        ]

    def footer(self) -> str:
        """The settings line under the table (test, correction, family, α, queries, seed)."""
        s = self.settings
        methods = sorted({p.result.method for p in self.pairs})
        test = _TEST_LABELS.get(s["test"], s["test"])
        if s["test"] in ("randomization", "wilcoxon") and methods:
            test += f" ({', '.join(methods)})"
        corr = _CORRECTION_LABELS.get(s["correction"], s["correction"])
        if s["correction"] != "none":
            corr += " per metric" if s["family"] == "per_metric" else " over all metrics"
        counts = sorted(set(self.n_queries.values()))
        nq = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        text = f"{test}, {corr}, alpha {s['alpha']:g}, {nq} queries"
        if s["test"] != "t" or s.get("ci"):
            text += f", seed {s['seed']}"
        return text

    def to_table(self) -> str:
        """Plain text: ranx's layout (``#``, system, one column per metric) and a footer."""
        compat = bool(self.settings.get("ranx_compat"))
        headers = ["#", "Model" if compat else "System"]
        headers += [_ranx_label(m) if compat else m for m in self.metrics]
        table = simple_table(headers, self.table_rows())
        return table if compat else table + "\n" + self.footer()

    def to_markdown(self) -> str:
        """A Markdown table with the same cells and the footer in italics."""
        headers = ["#", "System", *self.metrics]

        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        lines = [
            "| " + " | ".join(esc(h) for h in headers) + " |",
            "|" + "|".join([":--", ":--"] + ["--:"] * len(self.metrics)) + "|",
        ]
        for row in self.table_rows():
            lines.append("| " + " | ".join(esc(c) for c in row) + " |")
        return "\n".join(lines) + f"\n\n*{self.footer()}*\n"

    def to_latex(self) -> str:
        """A booktabs LaTeX table as ranx writes it: best score in bold, markers as ``$^{ac}$``."""
        digits = int(self.settings["rounding_digits"])
        best: dict[str, str | None] = {}
        for m in self.metrics:
            lower = self.settings.get("directions", {}).get(m) == "lower"
            best_sys, best_val = None, None
            for s in self.systems:
                v = round(self.means[s][m], digits)
                if best_val is None or (v < best_val if lower else v > best_val):
                    best_sys, best_val = s, v
            best[m] = best_sys
        s = self.settings
        test = _TEST_LABELS.get(s["test"], s["test"])
        corr = _CORRECTION_LABELS.get(s["correction"], s["correction"])
        caption = (
            "Overall effectiveness of the systems. The best results are highlighted in "
            f"boldface. Superscripts denote significant differences in a {_latex_escape(test)} "
            f"({_latex_escape(corr)}"
            + (" per metric" if s["correction"] != "none" and s["family"] == "per_metric" else "")
            + f") with $p \\le {s['alpha']:g}$."
        )
        lines = [
            "% Needs \\usepackage{booktabs} and \\usepackage{graphicx} in the preamble.",
            "\\begin{table*}[ht]",
            "\\centering",
            f"\\caption{{{caption}}}",
            "\\resizebox{0.8\\textwidth}{!}{",
            "\\begin{tabular}{c|l" + "|c" * len(self.metrics) + "}",
            "\\toprule",
            "\\textbf{\\#} & \\textbf{System} & "
            + " & ".join(f"\\textbf{{{_latex_escape(m)}}}" for m in self.metrics)
            + " \\\\",
            "\\midrule",
        ]
        for label, system in zip(self.labels, self.systems, strict=True):
            cells = []
            for m in self.metrics:
                score = self._fmt(self.means[system][m])
                if best[m] == system:
                    score = f"\\textbf{{{score}}}"
                marks = self._markers(system, m, latex=True)
                phantom = "".join(
                    LETTERS[j]
                    for j, other in enumerate(self.systems)
                    if other != system and LETTERS[j] not in marks
                )
                cell = score + (f"$^{{{marks}}}$" if marks else "")
                if phantom:
                    cell += f"\\hphantom{{$^{{{phantom}}}$}}"
                cells.append(cell)
            lines.append(f"{label} & {_latex_escape(system)} & " + " & ".join(cells) + " \\\\")
        lines += [
            "\\bottomrule",
            "\\end{tabular}",
            "}",
            f"\\label{{tab:results}}  % {_latex_escape(self.footer())}",
            "\\end{table*}",
        ]
        return "\n".join(lines) + "\n"

    # -- data exports -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """ranx's ``Report.to_dict()`` keys plus ``comparisons_adjusted``, ``settings`` and the
        full pair results (``pairs``)."""
        compat = bool(self.settings.get("ranx_compat"))
        stat_test = {"t": "student", "randomization": "fisher"}.get(self.settings["test"])
        out: dict[str, Any] = {
            "stat_test": stat_test if compat and stat_test else self.settings["test"],
            "metrics": list(self.metrics),
            "model_names": list(self.systems),
        }
        for a in self.systems:
            entry: dict[str, Any] = {
                "scores": {m: self.means[a][m] for m in self.metrics},
                "comparisons": {},
                "comparisons_adjusted": {},
                "win_tie_loss": {},
            }
            for b in self.systems:
                if a == b:
                    continue
                entry["comparisons"][b] = {}
                entry["comparisons_adjusted"][b] = {}
                entry["win_tie_loss"][b] = {}
                for m in self.metrics:
                    p = self.pair(a, b, m)
                    entry["comparisons"][b][m] = p.p_value
                    entry["comparisons_adjusted"][b][m] = p.p_adjusted
                    entry["win_tie_loss"][b][m] = dict(p.win_tie_loss)
            out[a] = entry
        out["settings"] = dict(self.settings)
        out["pairs"] = [p.to_dict() for p in self.pairs]
        return out

    def to_json(self, *, indent: int | None = None) -> str:
        from ragmeter.io.jsonutil import dumps

        return dumps(self.to_dict(), indent=indent)

    def to_dataframe(self) -> pd.DataFrame:
        """One row per system (``model_names`` then one column per metric), as ranx (pandas)."""
        pd = require_pandas("to_dataframe()")

        rows = [
            {"model_names": s, **{m: self.means[s][m] for m in self.metrics}} for s in self.systems
        ]
        return pd.DataFrame(rows)

    def pairs_dataframe(self) -> pd.DataFrame:
        """One row per (metric, pair): means, difference, p, adjusted p, d_z, W/T/L (pandas)."""
        return require_pandas("pairs_dataframe()").DataFrame(self._pair_rows())

    def to_csv(self) -> str:
        """:meth:`pairs_dataframe` as CSV: one row per (metric, pair); no pandas needed."""
        import csv
        import io

        rows = self._pair_rows()
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        header = list(rows[0]) if rows else ["metric", "system_a", "system_b"]
        writer.writerow(header)
        for row in rows:
            writer.writerow(
                ["" if v is None else repr(v) if isinstance(v, float) else v for v in row.values()]
            )
        return buf.getvalue()

    @property
    def summary(self) -> dict[str, dict[str, float]]:
        """System → metric → mean (the main table of :meth:`to_table`)."""
        return {s: {m: self.means[s][m] for m in self.metrics} for s in self.systems}

    def _pair_rows(self) -> list[dict[str, Any]]:
        rows = []
        for p in self.pairs:
            r = p.result
            rows.append(
                {
                    "metric": p.metric,
                    "system_a": p.system_a,
                    "system_b": p.system_b,
                    "mean_a": r.mean_a,
                    "mean_b": r.mean_b,
                    "mean_diff": r.mean_diff,
                    "p_value": r.p_value,
                    "p_adjusted": r.p_adjusted,
                    "significant": r.significant,
                    "cohens_dz": (r.effect_size or {}).get("cohens_dz"),
                    "ci_low": r.ci.low if r.ci else None,
                    "ci_high": r.ci.high if r.ci else None,
                    **dict(p.win_tie_loss),
                }
            )
        return rows

    def to_ultrarag(self, a: str, b: str, *, alpha: float = 0.05) -> dict[str, dict[str, Any]]:
        """UltraRAG ``evaluate_trec_pvalue`` JSON for A = ``a`` versus B = ``b``: per metric
        ``A_mean``, ``B_mean``, ``diff`` = mean(A − B), the raw ``p_value`` and
        ``significant`` = p < ``alpha`` (strict, uncorrected, as UltraRAG)."""
        out: dict[str, dict[str, Any]] = {}
        for m in self.metrics:
            out.update(self.pair(a, b, m).result.to_ultrarag(m, alpha=alpha))
        return out

    def to_ultrarag_table(self, a: str, b: str, *, alpha: float = 0.05) -> str:
        """UltraRAG's printed table (``metrics | A_mean | B_mean | Diff(A-B) | p_value |
        significant``, tabulate ``fancy_grid``)."""
        return ultrarag_table(self.to_ultrarag(a, b, alpha=alpha))

    def __str__(self) -> str:
        return self.to_table()

    def __repr__(self) -> str:
        return (
            f"<ComparisonReport systems={list(self.systems)} metrics={list(self.metrics)} "
            f"test={self.settings['test']!r}>"
        )


def ultrarag_table(data: Mapping[str, Mapping[str, Any]]) -> str:
    """Render UltraRAG-shaped results as UltraRAG prints them."""
    headers = ["metrics", "A_mean", "B_mean", "Diff(A-B)", "p_value", "significant"]

    def cell(v: Any) -> str:
        if isinstance(v, bool) or v is None:
            return str(v)
        return format(float(v), "g")

    rows = [
        [metric, *(cell(r[k]) for k in ("A_mean", "B_mean", "diff", "p_value", "significant"))]
        for metric, r in data.items()
    ]
    return fancy_grid_table(headers, rows)


def _latex_escape(s: str) -> str:
    table = {
        "\\": "\\textbackslash{}",
        "&": "\\&",
        "%": "\\%",
        "$": "\\$",
        "#": "\\#",
        "_": "\\_",
        "{": "\\{",
        "}": "\\}",
        "~": "\\textasciitilde{}",
        "^": "\\textasciicircum{}",
    }
    return "".join(table.get(ch, ch) for ch in s)
