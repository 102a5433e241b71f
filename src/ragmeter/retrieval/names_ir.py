"""The ir_measures grammar of measure names: ``P@10``, ``nDCG(gain=exp)@10``, ``P(rel=2)@10``,
and the lower-case RAG spellings printed in ir_measures style (``mrr@10``, ``ndcg@10``).

The base names and the arguments each accepts are those declared by the families
(``ir_spellings``, ``ir_args``).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from ragmeter.retrieval.measure import Measure
from ragmeter.retrieval.measure import name_error as _err
from ragmeter.retrieval.measures import FAMILIES
from ragmeter.retrieval.names_trec import int_cutoff, parse_number

__all__ = ["LOWER_ALIASES", "try_ir", "try_lower_alias"]

# ir_measures spellings -> family; cutoff rules are applied by the parser
_IR_BASE: dict[str, str] = {s: f.name for f in FAMILIES.values() for s in f.ir_spellings}
LOWER_ALIASES = {  # common RAG spellings (ranx, UltraRAG); printed in ir_measures style
    "mrr": "RR",
    "ndcg": "nDCG",
    "map": "AP",
    "precision": "P",
    "recall": "R",
    "hit_rate": "Success",
}

# ir_measures grammar: Name[(args)][@cutoff]
# compiled on first use (re caches it): ``-m all_trec`` and other trec_eval names never need it
_IR_RE = r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<args>.*)\))?(?:@(?P<cut>[^@()]+))?$"


def _split_args(text: str, name: str) -> list[tuple[str, str]]:
    """Split ``k=v, k2={1:2, 3:4}`` at top-level commas."""
    out: list[tuple[str, str]] = []
    depth, start, quote = 0, 0, ""
    parts: list[str] = []
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    for part in parts:
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise _err(f"malformed parameter '{part.strip()}' in '{name}' (expected key=value)")
        out.append((key.strip(), value.strip()))
    return out


def _ir_value(text: str, name: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise _err(f"bad value '{text}' in '{name}' (expected a finite number)")
        return value
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) >= 2:
        return text[1:-1]
    if text.startswith("{"):
        import ast

        try:
            value = ast.literal_eval(text)  # never eval: literals only
        except (ValueError, SyntaxError):
            raise _err(
                f"bad value '{text}' in '{name}' (expected a dict such as {{0:0,1:1,2:3}})"
            ) from None
        return value
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", text):
        return text
    raise _err(f"bad value '{text}' in '{name}'")


def _gains_param(value: Any, name: str) -> tuple[tuple[int, float], ...]:
    if not isinstance(value, dict):
        raise _err(f"gains must be a dict such as {{0:0,1:1,2:3}} in '{name}'")
    out: dict[int, float] = {}
    for k, v in value.items():
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise _err(f"bad gain level {k!r} in '{name}' (levels are integers ≥ 0)")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _err(f"bad gain {v!r} for level {k} in '{name}' (expected a number)")
        out[k] = float(v)
    return tuple(sorted(out.items()))


def try_ir(name: str, warnings: list[str]) -> list[Measure] | None:
    m = re.compile(_IR_RE).match(name)
    if m is None:
        return None
    base, args_text, cut_text = m.group("name"), m.group("args"), m.group("cut")
    if base not in _IR_BASE:
        return None
    family = _IR_BASE[base]
    args: dict[str, Any] = {}
    for key, value in _split_args(args_text or "", name):
        if key in args:
            raise _err(f"parameter '{key}' is given twice in '{name}'")
        args[key] = _ir_value(value, name)
    allowed = FAMILIES[family].ir_args
    for key in args:
        if key not in allowed:
            if key == "rel" and family in ("ndcg", "rbp"):
                raise _err(
                    f"{base} takes no rel= parameter ({base} uses graded gains and ignores the "
                    "relevance level, as trec_eval does); use gains={…} to change the gain of a "
                    "grade"
                )
            raise _err(
                f"{base} takes no {key}= parameter"
                + (f" (it takes {', '.join(sorted(allowed))})" if allowed else "")
            )
    params: dict[str, Any] = {}
    if "rel" in args:
        rel = args.pop("rel")
        if isinstance(rel, bool) or not isinstance(rel, int) or rel < 0:
            raise _err(f"bad rel '{rel}' in '{name}' (expected an integer ≥ 0)")
        params["rel"] = rel
    if "judged_only" in args:
        if not isinstance(args["judged_only"], bool):
            raise _err(f"judged_only takes true or false in '{name}'")
        if args.pop("judged_only"):
            params["judged_only"] = True
    # family-specific parameters
    if family == "success" and args.pop("all", False) is True:
        family = "success_all"
    if family == "set_P" and args.pop("relative", False) is True:
        family = "set_relative_P"
    if family == "num_ret" and "rel" in params:
        # NumRet(rel=1) is ir_measures' spelling of NumRelRet
        family = "num_rel_ret"
        if params["rel"] == 1:
            del params["rel"]
    if family == "ndcg":
        gain = args.pop("gain", None)
        dcg = args.pop("dcg", None)
        if dcg is not None:
            if dcg != "exp-log2":
                raise _err(f"nDCG supports dcg='exp-log2' only (an alias of gain=exp), not '{dcg}'")
            gain = "exp"
        if gain not in (None, "linear", "exp"):
            raise _err(f"bad gain '{gain}' in '{name}' (expected linear or exp)")
        if "gains" in args:
            if gain == "exp":
                raise _err(f"gain=exp and gains={{…}} cannot be combined ('{name}')")
            params["gains"] = _gains_param(args.pop("gains"), name)
        if gain == "exp":
            family = "ndcg_exp"
        if cut_text is not None:
            family = "ndcg_cut_exp" if family == "ndcg_exp" else "ndcg_cut"
    if family in ("rbp", "rbp_resid"):
        p = args.pop("p", 0.8)
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise _err(f"bad p '{p}' in '{name}' (expected 0 < p < 1)")
        params["p"] = float(p)
        if "gains" in args:
            params["gains"] = _gains_param(args.pop("gains"), name)
        if args.pop("tail", False) is True:
            params["tail"] = True
    if family == "set_F":
        beta = args.pop("beta", 1.0)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise _err(f"bad beta '{beta}' in '{name}' (expected a number)")
        params["beta"] = float(beta)
    if args:  # e.g. all=false, relative=false: accepted defaults
        for key, value in args.items():
            if value not in (False, None):
                raise _err(f"bad value {value!r} for {key} in '{name}'")
    # cutoff
    fam = FAMILIES[family]
    cutoff: int | float | None = None
    if family == "map" and cut_text is not None:
        family, fam = "map_cut", FAMILIES["map_cut"]
    if family == "recip_rank" and cut_text is not None:
        family, fam = "recip_rank_cut", FAMILIES["recip_rank_cut"]
    if fam.kind == "cut":
        if cut_text is None:
            if family in ("P", "recall", "success", "success_all", "judged"):
                raise _err(f"{base} needs a cutoff, e.g. {base}@10 ('{name}')")
            raise _err(f"'{name}' needs a cutoff")  # pragma: no cover
        # ir_measures style has no C reading to reproduce: only decimals (23.4 → 23, warned)
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]*)?", cut_text.strip()):
            raise _err(f"bad cutoff '{cut_text}' in '{name}' (cutoffs are integers ≥ 1)")
        cutoff = int_cutoff(cut_text, name, warnings)
    elif fam.kind == "point":
        if cut_text is None:
            raise _err(f"IPrec needs a recall level, e.g. IPrec@0.5 ('{name}')")
        cutoff = parse_number(cut_text, what="cutoff", name=name)
        if cutoff < 0:
            raise _err(f"bad cutoff '{cut_text}' in '{name}' (expected a number ≥ 0)")
    elif cut_text is not None:
        raise _err(f"{base} takes no cutoff ('{name}')")
    if fam.kind == "reals" and family == "set_F" and "beta" not in params:
        params["beta"] = 1.0
    return [
        Measure(
            family, cutoff=cutoff, params=tuple(sorted(params.items())), style="ir", requested=name
        )
    ]


def try_lower_alias(name: str, warnings: list[str]) -> list[Measure] | None:
    m = re.fullmatch(r"(?P<base>[a-z_]+)(?:@(?P<cut>[^@-]+))?(?P<suffix>-l\d+)?", name)
    if m is None or m.group("base") not in LOWER_ALIASES:
        return None
    base, cut, suffix = m.group("base"), m.group("cut"), m.group("suffix")
    if suffix:
        raise _err(
            f"'{name}' uses ranx's relevance suffix; ragmeter's nDCG ignores the relevance level "
            f"(as trec_eval does), use nDCG(gains={{1:0}})@{cut or 10} to give grade 1 no gain"
            if base == "ndcg"
            else f"'{name}' uses ranx's relevance suffix; use {LOWER_ALIASES[base]}(rel="
            f"{suffix[2:]})@{cut} instead"
        )
    if cut is None:
        if base in ("map", "ndcg", "recall"):
            return None  # trec_eval names
        if base != "mrr":
            return None
    ir = LOWER_ALIASES[base] + (f"@{cut}" if cut is not None else "")
    out = try_ir(ir, warnings)
    if out is not None:
        out = [replace(x, requested=name) for x in out]
    return out
