"""Measure names in both grammars: trec_eval (``P.5,10``) and ir_measures (``P@10``).

This module and its two sub-grammars (:mod:`~ragmeter.retrieval.names_trec`,
:mod:`~ragmeter.retrieval.names_ir`) read every measure name (docs/retrieval.md#measure-names):
the CLI, the registry entry (:mod:`ragmeter.retrieval.registry`) and the output use them. The
spellings of each family are declared with the family (:mod:`ragmeter.retrieval.measures`); what
is here is how names are written: nicknames, the trec_eval and ir_measures grammars, the
canonical order and the suggestions for unknown names.

A requested name expands to one or more :class:`Measure` objects, one per printed value (``P.5,10``
is ``P_5`` and ``P_10``). A Measure knows its trec_eval spelling, its ir_measures spelling (when
either exists), its canonical name (the ir_measures spelling where one exists, else the trec_eval
one) and the spelling it was requested in.

>>> [m.printed() for m in parse_measures("P.5,10 nDCG@10")]
['P_5', 'P_10', 'nDCG@10']
>>> [m.canonical for m in parse_measures(["map", "ndcg_cut.10", "recip_rank"])]
['AP', 'RR', 'nDCG@10']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.retrieval.measure import COMMAND, Measure, MeasureSpec
from ragmeter.retrieval.measure import name_error as _err
from ragmeter.retrieval.measures import FAMILIES, ORDER, Family
from ragmeter.retrieval.names_ir import try_ir, try_lower_alias
from ragmeter.retrieval.names_trec import PARAM_KINDS, try_trec

__all__ = [
    "CANONICAL_ORDER",
    "FAMILIES",
    "NICKNAMES",
    "Family",
    "Measure",
    "MeasureSpec",
    "parse_measures",
    "resolve_one",
]

CANONICAL_ORDER: tuple[str, ...] = ORDER
"""trec_eval's table order, then ragmeter's extensions (docs/retrieval.md#measure-names)."""

ALL_TREC: tuple[str, ...] = tuple(
    f for f in CANONICAL_ORDER[: CANONICAL_ORDER.index("unj") + 1] if f not in ("dcg", "ideal_dcg")
)

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ],
    "all_trec": ALL_TREC,
    "set": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
}
ULTRARAG_KS = (1, 5, 10, 20, 50, 100)

# measures of trec_eval and ir_measures that ragmeter does not compute: refused as such, not
# reported as unknown names
_UNSUPPORTED = {
    "ERR",
    "nERR",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "ERR_IA",
    "nERR_IA",
    "alpha_nDCG",
    "alpha-nDCG",
    "alpha_ndcg",
    "INST",
    "INSQ",
    "SDCG",
    "NRBP",
    "Compat",
    "BPM",
    "StRecall",
    "AP_IA",
    "MAP_IA",
    "P_IA",
    "Accuracy",
    "yaap",
    "ndcg_p",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "num_nonjudged_ret",
    "all_prefs",
    "qrels_jg",
    "relstring_avgjg",
}
_PREFS_PREFIX = "prefs_"


def _nickname(name: str, ks: Sequence[int]) -> list[str] | None:
    if name in NICKNAMES:
        return list(NICKNAMES[name])
    if name == "ultrarag":
        k = ",".join(str(x) for x in ks)
        return ["recip_rank", "map", f"ndcg_cut.{k}", f"P.{k}", f"recall.{k}"]
    return None


def _normalise(name: str) -> str:
    return re.sub(r"[@._\s]|cut", "", name.lower())


def suggestions(name: str) -> list[str]:
    """At most three valid names close to ``name``.

    Names that differ only in case, separators (``@ . _``) and the word ``cut`` come first
    (``NDCG10`` → ``nDCG@10``, ``ndcg_cut.10``); otherwise difflib's closest matches.
    """
    from ragmeter.registry import suggest

    pool = _suggestion_pool(name)
    target = _normalise(name)
    exact: dict[str, str] = {}
    for p in pool:
        if _normalise(p) == target and p != name:
            exact.setdefault(p.lower(), p)
    if exact:
        return list(exact.values())[:3]
    return suggest(name, pool)


def _suggestion_pool(name: str = "") -> list[str]:
    digits = re.findall(r"\d+(?:\.\d+)?", name)
    cut = digits[0] if digits and "." not in digits[0] else "10"
    pool: list[str] = []
    for fam in FAMILIES.values():
        if fam.kind == "cut":
            if fam.ir:
                pool.append(Measure(fam.name, cutoff=int(cut), style="ir").ir_name or "")
            pool.append(f"{fam.name}.{cut}")
        elif fam.kind == "point":
            if fam.ir:
                pool.append("IPrec@0.5")
            pool.append(f"{fam.name}.0.5")
        else:
            if fam.ir:
                ms = Measure(fam.name, params=fam.default_params("ir"), style="ir")
                pool.append(ms.ir_name or "")
            pool.append(fam.name)
    pool += [*NICKNAMES, "ultrarag", "mrr", f"precision@{cut}", f"hit_rate@{cut}"]
    return [p for p in dict.fromkeys(pool) if p]


def _unsupported(name: str) -> bool:
    base = re.split(r"[.@(_]", name, maxsplit=1)[0] if not name.startswith(_PREFS_PREFIX) else name
    plain = re.split(r"[.@(]", name, maxsplit=1)[0]
    return (
        name.startswith(_PREFS_PREFIX)
        or plain in _UNSUPPORTED
        or base in _UNSUPPORTED
        or plain.endswith("_avgjg")
    )


def _parse_one(name: str, warnings: list[str]) -> list[Measure]:
    for attempt in (try_trec, try_lower_alias, try_ir):
        out = attempt(name, warnings)
        if out is not None:
            return out
    if _unsupported(name):
        raise _err(f"'{name}' is not supported by ragmeter.retrieval")
    hints = suggestions(name)
    quoted = [f"'{h}'" for h in hints]
    tail = ""
    if quoted:
        body = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
        tail = f"; did you mean {body}?"
    raise _err(f"unknown measure '{name}'{tail}")


def _apply_gain(m: Measure, gain: str) -> Measure:
    """``--gain exp``: rewrite nDCG requests to their exponential-gain variants.

    The variants are ragmeter extensions (docs/retrieval.md#measures).
    """
    if gain != "exp" or m.gains is not None:
        return m
    if m.family == "ndcg":
        return replace(m, family="ndcg_exp", param_text=None)
    if m.family == "ndcg_cut":
        return replace(m, family="ndcg_cut_exp")
    return m


def parse_measures(
    spec: str | Iterable[str] | None = ("official",),
    *,
    ks: Sequence[int] = ULTRARAG_KS,
    gain: str = "linear",
    warnings: list[str] | None = None,
) -> list[Measure]:
    """Parse measure names in either style into Measures, deduplicated, in canonical order.

    ``spec`` is a string (several names may be separated by spaces) or an iterable of strings.
    Nicknames (``official``, ``all_trec``, ``set``, ``ultrarag``) expand; repeated requests of one
    trec_eval family take the union of their cutoffs; a value requested twice is kept once, in
    the spelling requested first. ``warnings`` collects parse-time warnings (truncated cutoffs).

    >>> [m.printed() for m in parse_measures(["P.10", "P.5,10", "map"])]
    ['map', 'P_5', 'P_10']
    >>> parse_measures("NDCG10")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ragmeter.errors.UsageError: ragmeter trec: unknown measure 'NDCG10'; did you mean 'nDCG@10' ...
    """
    if gain not in ("linear", "exp"):
        raise _err(f"bad gain '{gain}' (expected linear or exp)")
    if spec is None:
        spec = ("official",)
    names = [spec] if isinstance(spec, str) else list(spec)
    tokens: list[str] = []
    for item in names:
        if not isinstance(item, str):
            raise _err(f"measure names are strings, not {type(item).__name__}")
        tokens += _split_names(item)
    if not tokens:
        raise _err("no measure given")
    collected: dict[tuple[Any, ...], tuple[int, Measure]] = {}
    warn_list = warnings if warnings is not None else []
    order = 0
    for token in tokens:
        expanded = _nickname(token, ks)
        items = [(x, "trec") for x in expanded] if expanded is not None else [(token, None)]
        for name, _style in items:
            for m in _parse_one(name, warn_list):
                m = _apply_gain(m, gain)
                if m.key not in collected:
                    collected[m.key] = (order, m)
                    order += 1
    # as in trec_eval, explicit trec_eval-style parameters replace a family's defaults (from a
    # nickname or a bare name): -m all_trec -m relstring.20 prints relstring_20 only
    explicit = {
        m.family
        for _, m in collected.values()
        if m.style == "trec" and m.explicit and m.fam.kind in PARAM_KINDS
    }
    kept = [
        m
        for _, m in collected.values()
        if m.explicit or m.style != "trec" or m.family not in explicit
    ]
    return sorted(kept, key=lambda m: _sort_key(m, collected))


def _split_names(text: str) -> list[str]:
    """Split at whitespace outside parentheses and braces (``nDCG(gains={0: 0})@10`` is one).

    White space next to a parameter separator (``P. 5``, ``P.5, 10``, ``ndcg.1= 3``) stays inside
    the name: trec_eval takes the whole ``-m`` value as one measure, and its ``atol``/``atof``
    skip leading white space, so these are the measure trec_eval reads, not two names.
    """
    out: list[str] = []
    depth, cur = 0, []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch.isspace() and depth <= 0:
            j = i
            while j < n and text[j].isspace():
                j += 1
            joined = bool(cur) and (cur[-1] in ".,=" or (j < n and text[j] in ",="))
            if joined:
                cur.append(text[i:j])
            elif cur:
                out.append("".join(cur))
                cur = []
            i = j
            continue
        cur.append(ch)
        i += 1
    if cur:
        out.append("".join(cur))
    return [t for t in out if t]


def _sort_key(m: Measure, collected: dict[tuple[Any, ...], tuple[int, Measure]]) -> tuple[Any, ...]:
    request = collected[m.key][0]
    if m.is_variant:
        return (1, 0, request, 0.0)
    fam_index = CANONICAL_ORDER.index(m.family)
    if m.fam.kind in ("cut", "point"):
        return (0, fam_index, 0, float(m.cutoff))  # type: ignore[arg-type]
    return (0, fam_index, request, 0.0)


def resolve_one(name: str) -> Measure | None:
    """Resolve a name that denotes exactly one value (for the registry), or None if unknown.

    Raises :class:`UsageError` for a known name with bad parameters or several values.

    >>> resolve_one("ndcg_cut_10").canonical, resolve_one("P.5").canonical
    ('nDCG@10', 'P@5')
    """
    warnings: list[str] = []
    if name in NICKNAMES or name == "ultrarag":
        raise _err(f"'{name}' is a set of measures, not one measure")
    try:
        measures = _parse_one(name, warnings)
    except UsageError as exc:
        if str(exc).startswith(f"ragmeter {COMMAND}: unknown measure"):
            return None
        raise
    if warnings:
        # a name that only reads as a measure the way trec_eval's atol/atof read it (recall.1e1
        # is recall_1) is refused outside `ragmeter trec`, where nothing would print the warning
        raise _err(
            f"'{name}' is ambiguous: {warnings[0]}; write the parameter as trec_eval reads it"
        )
    if len(measures) != 1:
        examples = ", ".join(m.printed() for m in measures[:3])
        more = ", …" if len(measures) > 3 else ""
        raise _err(
            f"'{name}' names {len(measures)} values ({examples}{more}); name one, e.g. with a "
            "single cutoff"
        )
    return measures[0]
