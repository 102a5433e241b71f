"""Jinja2 rendering shared by the report and the dashboard.

One environment with autoescaping on for every template (user data such as sample ids, system
names and answers is always text), the report's templates first and the dashboard's own second.
The report inlines the vendored chart library, ``charts.js`` and the stylesheet, and pins them
with a Content-Security-Policy of their hashes, so the file can neither load nor run anything
else; JSON for the charts goes into a ``<script type="application/json">`` block escaped so that
no value can close it (:func:`json_script`).
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from ragmeter._version import __version__
from ragmeter.io.jsonutil import dumps

__all__ = ["STATIC_DIR", "environment", "json_script", "render_report_html", "report_assets"]

_HERE = Path(__file__).resolve().parent
REPORT_TEMPLATES = _HERE / "templates"
WEB_DIR = _HERE.parent / "web"
WEB_TEMPLATES = WEB_DIR / "templates"
STATIC_DIR = WEB_DIR / "static"

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    ord("'"): "\\u0027",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def json_script(obj: Any) -> Markup:
    """JSON safe to place inside ``<script type="application/json">``: ``<``, ``>``, ``&``,
    ``'`` and the JavaScript line separators are ``\\u`` escapes, so ``</script>`` or ``<!--``
    in the data cannot end or alter the element; ``JSON.parse`` restores the text exactly.

    >>> str(json_script({"a": "</script><b>"}))
    '{"a": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    return Markup(dumps(obj).translate(_JSON_ESCAPES))


def fmt_num(value: Any, digits: int = 4) -> str:
    """A value as the tables show it: ``–`` when undefined, integers as they are.

    >>> fmt_num(0.123456), fmt_num(None), fmt_num(12), fmt_num(0.00001234)
    ('0.1235', '–', '12', '1.23e-05')
    """
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "–"
        if value != 0 and abs(value) < 10 ** -(digits - 1) / 2:
            return f"{value:.{max(digits - 2, 1)}e}"
        return f"{value:.{digits}f}"
    return str(value)


def fmt_signed(value: Any, digits: int = 4) -> str:
    """>>> fmt_signed(0.01), fmt_signed(-0.5, 2), fmt_signed(None)
    ('+0.0100', '-0.50', '–')
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "–"
    return f"{value:+.{digits}f}"


def fmt_p(value: Any) -> str:
    """>>> fmt_p(0.04321), fmt_p(0.00001), fmt_p(None)
    ('0.0432', '<0.0001', '–')
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def fmt_pct(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    return f"{100 * value:.1f}%"


def fmt_when(value: Any) -> str:
    """An ISO timestamp (UTC) as ``2025-06-01 12:00 UTC``."""
    if not value:
        return "–"
    try:
        ts = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    return ts.strftime("%Y-%m-%d %H:%M UTC")


def fmt_compact(value: Any, limit: int = 300) -> str:
    text = dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def url_id(value: str) -> str:
    """A run or sample id as one URL path segment (``/``, ``#``, ``?`` and all else encoded)."""
    return quote(str(value), safe="")


@lru_cache(maxsize=1)
def _loader() -> jinja2.BaseLoader:
    return jinja2.ChoiceLoader(
        [
            jinja2.FileSystemLoader(str(REPORT_TEMPLATES)),
            jinja2.FileSystemLoader(str(WEB_TEMPLATES)),
        ]
    )


@lru_cache(maxsize=8)
def environment(
    *,
    link_run: Callable[[str], str] | None = None,
    link_sample: Callable[[str, str], str] | None = None,
    static: Callable[[str], str] | None = None,
) -> jinja2.Environment:
    """The shared environment: autoescape everywhere, the report's filters and link helpers.

    Cached per set of helpers, so templates are compiled once per process."""
    env = jinja2.Environment(
        loader=_loader(),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters.update(
        num=fmt_num,
        signed=fmt_signed,
        pval=fmt_p,
        pct=fmt_pct,
        when=fmt_when,
        compact=fmt_compact,
        json_script=json_script,
        url_id=url_id,
    )
    env.globals.update(
        link_run=link_run,
        link_sample=link_sample,
        static=static or (lambda path: f"/static/{path}"),
        ragmeter_version=__version__,
    )
    return env


def _csp_hash(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


@lru_cache(maxsize=1)
def report_assets() -> Mapping[str, Any]:
    """The inlined stylesheet and script of the report, and the CSP that allows only them."""
    css = "\n".join(
        (STATIC_DIR / p).read_text("utf-8") for p in ("vendor/uplot/uPlot.min.css", "app.css")
    )
    js = "\n".join(
        (STATIC_DIR / p).read_text("utf-8") for p in ("vendor/uplot/uPlot.iife.min.js", "charts.js")
    )
    for name, text, tag in (("css", css, "</style"), ("js", js, "</script")):
        if tag in text.lower():  # would end the inline element early
            raise RuntimeError(f"the report's {name} contains {tag}>")
    csp = (
        "default-src 'none'; "
        f"script-src {_csp_hash(js)}; "
        f"style-src {_csp_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return {"css": Markup(css), "js": Markup(js), "csp": csp}


def render_report_html(view: Mapping[str, Any]) -> str:
    """The self-contained HTML of a report view (:func:`ragmeter.report.view.build_report`)."""
    env = environment()
    assets = report_assets()
    template = env.get_template("report.html")
    return template.render(
        view=view,
        charts=view["charts"],
        inline=True,
        assets=assets,
        csp=assets["csp"],
    )
