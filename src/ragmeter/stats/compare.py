"""Comparing N systems on several metrics (docs/stats.md) and the UltraRAG view.

Every unordered pair of systems is tested on every metric, p-values are corrected within a
family (Holm per metric by default), and the report renders ranx's table: each system's mean
with the letters of the systems it beats significantly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import InputError
from ragmeter.result import ordered_mean
from ragmeter.stats._common import (
    check_alpha,
    check_alternative,
    check_n_resamples,
    check_seed,
)
from ragmeter.stats.corrections import CORRECTIONS, adjust
from ragmeter.stats.dispatch import canonical_test
from ragmeter.stats.paired import (
    MISSING_POLICIES,
    AlignmentReport,
    MissingPolicy,
    MissingQueriesError,
    Paired,
    _check_finite,
    _round,
    check_magnitude,
)
from ragmeter.stats.result import TestResult, versions
from ragmeter.stats.tables import fancy_grid_table, simple_table
from ragmeter.views import require_pandas

if TYPE_CHECKING:
    import pandas as pd

    from ragmeter.result import Result

__all__ = [
    "FAMILIES",
    "ComparisonReport",
    "PairComparison",
    "compare",
    "compare_systems",
    "scores_from_results",
]

FAMILIES = ("per_metric", "all")
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


# -- inputs -------------------------------------------------------------------------------------
def scores_from_results(
    results: Mapping[str, Result], metrics: Sequence[str] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """``system → metric → sample id → value`` from each system's :class:`~ragmeter.Result`.

    Only scored rows (``ok``, ``missing_zeroed``) give values; other samples are missing and
    follow the ``missing`` policy of :func:`compare`. A metric may be named by any alias the
    registry resolves within the Result's task; the report shows the spelling asked for.
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system, result in results.items():
        names = list(metrics) if metrics is not None else result.metrics
        per: dict[str, dict[str, float]] = {}
        for name in names:
            canonical = name
            if name not in result.metrics:
                from ragmeter import registry

                try:
                    canonical = registry.resolve(name, task=result.task).canonical
                except registry.UnknownMetricError:
                    canonical = name
            if canonical not in result.metrics:
                raise InputError(
                    f"has no per-sample values for metric {name!r} (it has: "
                    f"{', '.join(result.metrics) or 'none'})",
                    location=f"system {system!r}",
                )
            per[name] = result.values(canonical)
        out[system] = per
    return out


def _align_systems(
    metric: str,
    per_system: Mapping[str, Mapping[str, float]],
    *,
    missing: MissingPolicy,
    fill_value: float | None,
) -> tuple[list[str], np.ndarray, dict[str, list[str]], list[str]]:
    """Align all systems on one query set: (ids, X (n × S), ids filled per system, dropped)."""
    checked = {s: _check_finite(v, f"{s}[{metric!r}]") for s, v in per_system.items()}
    union = sorted(set().union(*(set(v) for v in checked.values())))
    lacking = {s: sorted(set(union) - set(v)) for s, v in checked.items()}
    dropped: list[str] = []
    if missing == "error":
        bad = {s: ids for s, ids in lacking.items() if ids}
        if bad:
            raise MissingQueriesError([], [], location=f"metric {metric!r}", missing_by_system=bad)
        ids = union
    elif missing == "fill":
        if fill_value is None:
            raise ValueError("missing='fill' needs a fill_value (e.g. 0.0)")
        ids = union
    else:
        ids = sorted(set.intersection(*(set(v) for v in checked.values())))
        dropped = sorted(set(union) - set(ids))
    x = np.empty((len(ids), len(checked)))
    for j, v in enumerate(checked.values()):
        if missing == "fill":
            fv = float(fill_value)  # type: ignore[arg-type]
            x[:, j] = [v.get(i, fv) for i in ids]
        else:
            x[:, j] = list(map(v.__getitem__, ids))
    return ids, x, lacking, dropped


def compare(
    scores: Mapping[str, Mapping[str, Mapping[str, float]] | Result],
    *,
    metrics: Sequence[str] | None = None,
    test: str | None = None,
    correction: str | None = None,
    family: str = "per_metric",
    alpha: float | None = None,
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    seed: int = 42,
    missing: MissingPolicy = "error",
    fill_value: float | None = None,
    ci: str | None = None,
    confidence: float = 0.95,
    ranx_compat: bool = False,
    rounding_digits: int = 3,
    exact: bool | str = "auto",
    two_sided: str = "abs",
    decimals: int | None = 12,
    directions: Mapping[str, str] | None = None,
    run_tests: Callable[..., dict[tuple[str, int, int], TestResult]] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ComparisonReport:
    """Compare N systems pairwise on every metric, with a multiple-comparison correction.

    ``scores`` maps each system (in display order) to ``metric → query id → score`` (or to a
    :class:`~ragmeter.Result`, read with :func:`scores_from_results`). For each metric, all
    systems are aligned on one query set (``missing``); every unordered pair {i, j}, in input
    order, is tested (``test``: ``"randomization"`` by default, ``"t"``, ``"wilcoxon"`` or
    ``"bootstrap"``); p-values are corrected (``correction``, Holm by default) within each metric
    (``family="per_metric"``) or over all pairs × metrics (``"all"``); a pair is significant iff
    its adjusted p ≤ α. W/T/L count d > 0, d = 0 and d < 0 on the rounded differences.

    ``ranx_compat=True`` reproduces ``ranx.compare(..., stat_test="student")``: two-sided paired
    t-test, no correction, α = 0.01 unless given. Randomization tests of every pair share the
    seeded sign patterns and run as one vectorised product, giving exactly what one
    :func:`~ragmeter.stats.randomization_test` per pair gives.

    ``on_progress(done, total)`` is called after each (metric, pair) test; it may raise to stop
    the comparison (a cancelled MCP call does).

    >>> r = compare({"bm25": {"ndcg@10": {"q1": .5, "q2": .4, "q3": .6}},
    ...              "dense": {"ndcg@10": {"q1": .6, "q2": .5, "q3": .7}}})
    >>> p = r.pair("dense", "bm25", "ndcg@10")
    >>> round(p.result.mean_diff, 12), p.p_value, p.win_tie_loss
    (0.1, 0.25, {'W': 3, 'T': 0, 'L': 0})
    """
    from ragmeter.result import Result

    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise ValueError("compare needs a mapping of at least 2 systems to their scores")
    if any(isinstance(v, Result) for v in scores.values()):
        results = {s: v for s, v in scores.items() if isinstance(v, Result)}
        if len(results) != len(scores):
            raise TypeError("pass either Results or score mappings for every system, not a mix")
        scores = scores_from_results(results, metrics)
    systems = [str(s) for s in scores]
    if len(set(systems)) != len(systems):
        raise ValueError("system names must be unique")
    for s in systems:
        if s in RESERVED_NAMES:
            raise ValueError(
                f"system name {s!r} is reserved by the report's dict layout (rename the system)"
            )
    test_name = (
        canonical_test(test) if test is not None else ("t" if ranx_compat else "randomization")
    )
    corr = correction if correction is not None else ("none" if ranx_compat else "holm")
    corr = {"fdr_bh": "bh", "fdr_by": "by"}.get(corr, corr)
    if corr not in CORRECTIONS:
        raise ValueError(f"correction={correction!r} (expected one of {', '.join(CORRECTIONS)})")
    if family not in FAMILIES:
        raise ValueError(f"family={family!r} (expected one of {', '.join(FAMILIES)})")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} (expected one of {', '.join(MISSING_POLICIES)})")
    a_level = check_alpha(alpha if alpha is not None else (0.01 if ranx_compat else 0.05))
    check_alternative(alternative)
    n_resamples = check_n_resamples(n_resamples)
    seed = check_seed(seed)
    if ci is not None and ci not in ("bca", "percentile", "basic"):
        raise ValueError(f"ci={ci!r} (expected None, 'bca', 'percentile' or 'basic')")
    first = scores[systems[0]]
    metric_names = list(metrics) if metrics is not None else list(first)
    if not metric_names:
        raise ValueError("no metrics to compare")
    if len(set(metric_names)) != len(metric_names):
        raise ValueError("metric names must be unique")
    for s, per in scores.items():
        absent = [m for m in metric_names if m not in per]
        if absent:
            raise InputError(
                f"has no values for metric {absent[0]!r} "
                f"(it has: {', '.join(map(str, per)) or 'none'})",
                location=f"system {s!r}",
            )

    aligned: dict[str, tuple[list[str], np.ndarray, dict[str, list[str]], list[str]]] = {}
    for m in metric_names:
        aligned[m] = _align_systems(
            m, {s: scores[s][m] for s in systems}, missing=missing, fill_value=fill_value
        )

    index_pairs = list(itertools.combinations(range(len(systems)), 2))
    paired: dict[tuple[str, int, int], Paired] = {}
    for m in metric_names:
        ids, x, lacking, dropped = aligned[m]
        if len(ids) < 2:
            raise InputError(
                f"only {len(ids)} queries are scored by every system (a paired test needs 2)",
                location=f"metric {m!r}",
            )
        for k, s in enumerate(systems):
            check_magnitude(x[:, k], ids, f"system {s!r}, metric {m!r}")
        for i, j in index_pairs:
            report = AlignmentReport(
                missing,
                "id",
                tuple(lacking[systems[i]]) if missing != "intersect" else (),
                tuple(lacking[systems[j]]) if missing != "intersect" else (),
                tuple(dropped),
                float(fill_value) if missing == "fill" and fill_value is not None else None,
            )
            paired[(m, i, j)] = Paired(
                tuple(ids), x[:, i], x[:, j], _round(x[:, i] - x[:, j], decimals), report, decimals
            )

    # run_tests: where the tests run (an executor's test blocks; default in this process)
    results = (run_tests or _run_tests)(
        paired,
        test=test_name,
        alternative=alternative,
        alpha=a_level,
        n_resamples=n_resamples,
        seed=seed,
        exact=exact,
        two_sided=two_sided,
        ci=ci,
        confidence=confidence,
        on_progress=on_progress,
    )

    keys = [(m, i, j) for m in metric_names for i, j in index_pairs]
    families = (
        [[k for k in keys if k[0] == m] for m in metric_names] if family == "per_metric" else [keys]
    )
    for fam in families:
        adj = adjust([results[k].p_value for k in fam], corr, a_level)
        for k, p_adj in zip(fam, adj.p_adjusted, strict=True):
            results[k] = results[k].with_adjustment(
                p_adj, method=corr, family=family, m=len(fam), alpha=a_level
            )

    pairs = []
    for m, i, j in keys:
        d = paired[(m, i, j)].d
        wtl = {
            "W": int(np.count_nonzero(d > 0)),
            "T": int(np.count_nonzero(d == 0)),
            "L": int(np.count_nonzero(d < 0)),
        }
        pairs.append(PairComparison(m, systems[i], systems[j], results[(m, i, j)], wtl))

    means = {
        s: {m: ordered_mean(aligned[m][1][:, j]) for m in metric_names}
        for j, s in enumerate(systems)
    }
    settings = {
        "test": test_name,
        "correction": corr,
        "family": family,
        "alpha": a_level,
        "alternative": alternative,
        "n_resamples": n_resamples,
        "seed": int(seed),
        "exact": exact,
        "two_sided": two_sided,
        "missing": missing,
        "fill_value": fill_value,
        "ci": ci,
        "confidence": confidence,
        "ranx_compat": bool(ranx_compat),
        "rounding_digits": int(rounding_digits),
        "decimals": decimals,
        "directions": dict(directions or {}),
        "versions": versions(),
    }
    alignment = {
        m: {
            "policy": missing,
            "n_queries": len(aligned[m][0]),
            "missing_by_system": {s: v for s, v in aligned[m][2].items() if v},
            "dropped": aligned[m][3],
        }
        for m in metric_names
    }
    return ComparisonReport(
        tuple(systems),
        tuple(metric_names),
        means,
        {m: len(aligned[m][0]) for m in metric_names},
        tuple(pairs),
        settings,
        alignment,
    )


compare_systems = compare
"""Alias of :func:`compare` (the name the runner and the issue use)."""


def _run_tests(
    paired: Mapping[tuple[str, int, int], Paired],
    *,
    test: str,
    alternative: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    exact: bool | str,
    two_sided: str,
    ci: str | None,
    confidence: float,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[tuple[str, int, int], TestResult]:
    out: dict[tuple[str, int, int], TestResult] = {}

    def tick() -> None:
        if on_progress is not None:
            on_progress(len(out), len(paired))

    if test == "randomization":
        from ragmeter.stats._signflip import Patterns
        from ragmeter.stats.randomization import build_result, signflip_pvalues

        by_shape: dict[tuple[int, int | None], list[tuple[str, int, int]]] = {}
        for key, p in paired.items():
            by_shape.setdefault((p.n, p.decimals), []).append(key)
        for (n, decimals), keys in by_shape.items():
            patterns = Patterns.choose(n, n_resamples=n_resamples, exact=exact, seed=seed)
            live = [k for k in keys if np.any(paired[k].d)]
            pvals: dict[tuple[str, int, int], float] = dict.fromkeys(keys, 1.0)
            if live:
                d = np.column_stack([paired[k].d for k in live])
                got = signflip_pvalues(
                    d, patterns, alternative=alternative, two_sided=two_sided, decimals=decimals
                )
                pvals.update({k: float(v) for k, v in zip(live, got, strict=True)})
            for k in keys:
                interval = None
                if ci is not None:
                    from ragmeter.stats.bootstrap import bootstrap_ci

                    interval = bootstrap_ci(
                        paired[k],
                        method=ci,
                        confidence=confidence,
                        n_resamples=n_resamples,
                        seed=seed,
                    )
                out[k] = build_result(
                    paired[k],
                    p_value=pvals[k],
                    patterns=patterns,
                    statistic=float(np.mean(paired[k].d)),
                    alternative=alternative,
                    two_sided=two_sided,
                    exact=exact,
                    alpha=alpha,
                    ci=interval,
                )
                tick()
        return out
    from ragmeter.stats.dispatch import paired_test

    for key, p in paired.items():
        options: dict[str, Any] = {"alternative": alternative, "alpha": alpha, "ci": ci}
        if test in ("t", "bootstrap", "wilcoxon"):
            options["confidence"] = confidence
        if test != "t" or ci is not None:
            options.update(n_resamples=n_resamples, seed=seed)
        if test == "bootstrap":
            options["method"] = ci or "bca"
            options.pop("ci")
        out[key] = paired_test(p, test=test, **options)
        tick()
    return out
