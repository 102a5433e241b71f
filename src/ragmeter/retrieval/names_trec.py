"""The trec_eval grammar of measure names: ``P.5,10``, ``ndcg.1=3,2=9``, printed ``P_5``.

Parameters are read as trec_eval 10.0 reads them (C ``atol``/``atof``), with a warning whenever
text is ignored (docs/retrieval.md#measure-parameters).
"""

from __future__ import annotations

import math
import re
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.io.cnum import C_SPACE, c_atof, c_atol
from ragmeter.retrieval.measure import Measure, fmt_real
from ragmeter.retrieval.measure import name_error as _err
from ragmeter.retrieval.measures import FAMILIES
from ragmeter.retrieval.measures.family import Family

__all__ = ["PARAM_KINDS", "int_cutoff", "parse_number", "try_trec"]

# the largest cutoff: beyond it a cutoff cannot be told from "the whole ranking" anyway, and
# trec_eval's atol would clamp larger text to 2**63 - 1
_MAX_CUTOFF = 2**31 - 1


def parse_number(text: str, *, what: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _err(f"bad {what} '{text}' in '{name}' (expected a number)") from None
    if not math.isfinite(value):
        raise _err(f"bad {what} '{text}' in '{name}' (expected a finite number)")
    return value


def _ignored(text: str, used: int) -> str:
    """What C's atol/atof left unread, or "" when only white space remains."""
    rest = text[used:]
    return rest if rest.strip(C_SPACE) else ""


def _c_real(text: str, *, what: str, name: str, warnings: list[str]) -> float:
    """A real parameter read as trec_eval reads it (``atof``); a warning when text is ignored.

    Text without any number (trec_eval: 0) and non-finite values are refused.
    """
    value, used = c_atof(text)
    if used == 0:
        raise _err(f"bad {what} '{text}' in '{name}' (expected a number)")
    if not math.isfinite(value):
        raise _err(f"bad {what} '{text}' in '{name}' (expected a finite number)")
    rest = _ignored(text, used)
    if rest:
        warnings.append(
            f"{what} '{text}' in '{name}' is read as {fmt_real(value)}, as trec_eval reads it "
            f"(atof stops at '{rest}')"
        )
    return value


def int_cutoff(text: str, name: str, warnings: list[str]) -> int:
    """An integer cutoff read as trec_eval 10.0 reads it: ``atol``, so ``1e1`` is 1, ``10x`` 10."""
    k, used = c_atol(text)
    if k < 1:
        raise _err(f"bad cutoff '{text}' in '{name}' (cutoffs are integers ≥ 1)")
    if k > _MAX_CUTOFF:
        raise _err(
            f"bad cutoff '{text}' in '{name}' (cutoffs are integers from 1 to {_MAX_CUTOFF})"
        )
    rest = _ignored(text, used)
    if rest:
        if re.fullmatch(r"\.[0-9]*[" + C_SPACE + "]*", rest):
            warnings.append(f"cutoff '{text}' in '{name}' is not an integer; using {k}")
        else:
            hint = ""
            if rest.startswith("="):
                hint = "; level=gain pairs belong to ndcg, ndcg_rel, Rndcg, G, dcg, ideal_dcg, rbp"
            warnings.append(
                f"cutoff '{text}' in '{name}' is read as {k}, as trec_eval reads it "
                f"(atol stops at '{rest}'){hint}"
            )
    return k


def _real_cutoff(text: str, name: str, warnings: list[str]) -> float:
    value = _c_real(text, what="cutoff", name=name, warnings=warnings)
    if value < 0:
        raise _err(f"bad cutoff '{text}' in '{name}' (expected a number ≥ 0)")
    return value


def _parse_pairs(
    text: str, name: str, family: str, warnings: list[str]
) -> tuple[tuple[str, Any], ...]:
    """trec_eval's ``name=value`` pairs: integer names are gain levels, ``p`` is RBP's p."""
    gains: dict[int, float] = {}
    params: list[tuple[str, Any]] = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key or not value.strip():
            raise _err(
                f"malformed parameter '{part}' in '{name}' (expected level=gain pairs such as "
                "ndcg.1=3,2=9)"
            )
        if re.fullmatch(r"[+-]?\d+", key):
            level = int(key)
            if level < 0:
                raise _err(f"bad gain level '{key}' in '{name}' (levels are integers ≥ 0)")
            if level in gains:
                raise _err(f"gain level {level} is given twice in '{name}'")
            gains[level] = _c_real(value, what="gain", name=name, warnings=warnings)
        elif key == "p" and family in ("rbp", "rbp_resid"):
            p = _c_real(value, what="p", name=name, warnings=warnings)
            if not 0 < p < 1:
                raise _err(f"bad p '{value}' in '{name}' (expected 0 < p < 1)")
            params.append(("p", p))
        else:
            raise _err(
                f"unknown parameter '{key}' in '{name}' "
                + (
                    "(expected p=… or level=gain pairs)"
                    if family in ("rbp", "rbp_resid")
                    else "(expected level=gain pairs such as ndcg.1=3,2=9)"
                )
            )
    if family == "rbp_resid" and gains:
        raise _err(f"rbp_resid takes only p=… ('{name}')")
    if gains:
        params.append(("gains", tuple(sorted(gains.items()))))
    return tuple(params)


def _family_params(
    fam: Family, text: str, name: str, warnings: list[str]
) -> tuple[tuple[str, Any], ...]:
    """Parameters of ``reals`` and ``pairs`` families from a trec_eval parameter string."""
    if fam.kind == "pairs":
        return _parse_pairs(text, name, fam.name, warnings)
    values = [_c_real(v, what="parameter", name=name, warnings=warnings) for v in text.split(",")]
    if fam.name == "utility":
        if len(values) != 4:
            raise _err(f"utility takes exactly 4 coefficients, not {len(values)} ('{name}')")
        return (("coeffs", tuple(values)),)
    if fam.name == "11pt_avg":
        if any(v < 0 for v in values):
            raise _err(f"bad recall point in '{name}' (expected numbers ≥ 0)")
        return (("points", tuple(sorted(values))),)
    if len(values) != 1:
        raise _err(f"{fam.name} takes one parameter ('{name}')")
    if fam.name == "set_F":
        return (("beta", values[0]),)
    if fam.name == "relstring":
        length = int(values[0])
        if length < 0:
            raise _err(f"bad length in '{name}' (expected an integer ≥ 0)")
        return (("length", length),)
    raise _err(f"{fam.name} takes no parameters ('{name}')")  # pragma: no cover


def _expand_family(
    fam: Family, params_text: str | None, name: str, style: str, warnings: list[str]
) -> list[Measure]:
    """A trec_eval-style request ``fam[.params]`` as Measures."""
    if fam.kind in ("runid", "count", "scalar", "gm"):
        if params_text is not None:
            raise _err(f"{fam.name} takes no parameters ('{name}')")
        return [Measure(fam.name, style=style, requested=name)]
    explicit = params_text is not None
    if fam.kind == "cut":
        if params_text is None:
            cuts = list(fam.defaults)
        else:
            cuts = [int_cutoff(c, name, warnings) for c in params_text.split(",")]
        return [
            Measure(fam.name, cutoff=k, style=style, requested=name, explicit=explicit)
            for k in sorted(set(cuts))
        ]
    if fam.kind == "point":
        if params_text is None:
            points = list(fam.defaults)
        else:
            points = [_real_cutoff(c, name, warnings) for c in params_text.split(",")]
        return [
            Measure(fam.name, cutoff=p, style=style, requested=name, explicit=explicit)
            for p in sorted(set(points))
        ]
    # reals / pairs: one value
    if params_text is None:
        return [
            Measure(
                fam.name,
                params=fam.default_params(style),
                style=style,
                requested=name,
                explicit=False,
            )
        ]
    if not params_text:
        raise _err(f"empty parameters in '{name}'")
    params = dict(fam.default_params(style))
    params.update(dict(_family_params(fam, params_text, name, warnings)))
    return [
        Measure(
            fam.name,
            params=tuple(sorted(params.items())),
            param_text=params_text,
            style=style,
            requested=name,
        )
    ]


PARAM_KINDS = ("cut", "point", "reals", "pairs")


def try_trec(name: str, warnings: list[str]) -> list[Measure] | None:
    """A trec_eval-style name (``P.5,10``, ``map``) or printed form (``P_5``), else None."""
    base, dot, params = name.partition(".")
    if base in FAMILIES:
        return _expand_family(FAMILIES[base], params if dot else None, name, "trec", warnings)
    # printed forms: the longest family name followed by "_" and a valid parameter
    for fam_name in sorted(FAMILIES, key=len, reverse=True):
        fam = FAMILIES[fam_name]
        if not name.startswith(fam_name + "_") or fam.kind in ("runid", "count", "scalar", "gm"):
            continue
        rest = name[len(fam_name) + 1 :]
        try:
            if fam.kind == "cut" and re.fullmatch(r"\d+", rest):
                return _expand_family(fam, rest, name, "trec", warnings)
            if fam.kind == "point" and re.fullmatch(r"\d*\.?\d+", rest):
                return _expand_family(fam, rest, name, "trec", warnings)
            if fam.kind in ("reals", "pairs"):
                return _expand_family(fam, rest, name, "trec", warnings)
        except UsageError:
            continue
    return None
