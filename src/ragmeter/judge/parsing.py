"""Reading a judge reply: the fixed parsing steps of docs/judge.md.

1. ``strip()``; 2. remove a leading ``<think>…</think>`` block; 3. remove a surrounding
```` ```json … ``` ```` fence; 4. ``json.loads`` (never "first ``{`` to last ``}``" slicing);
5. pydantic validation; 6. the output spec's cross-checks. The first failing step gives the
error list that the repair call shows the model and that ``parse_error`` reports.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragmeter.judge.schemas import OutputSpec

__all__ = ["clean_text", "parse_reply"]

_THINK = re.compile(r"\A<think>.*?</think>\s*", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```\Z", re.DOTALL)


def clean_text(text: str) -> str:
    """Steps 1–3: strip, drop a leading think block, drop a surrounding code fence.

    >>> clean_text('  <think>hmm</think>\\n```json\\n{"a": 1}\\n```  ')
    '{"a": 1}'
    """
    s = text.strip()
    s = _THINK.sub("", s, count=1).strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1).strip()
    return s


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _pydantic_errors(exc: Any) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "reply"
        msg = err.get("msg", "invalid")
        if err.get("type") == "extra_forbidden":
            msg = "unexpected key"
        elif err.get("type") == "missing":
            msg = "missing key"
        out.append(f"{loc}: {msg}")
    return out


def parse_reply(text: str | None, spec: OutputSpec) -> tuple[Any, list[str]]:
    """Parse and validate ``text``; return ``(object, [])`` or ``(None, errors)``.

    >>> from ragmeter.judge.schemas import statements_spec
    >>> obj, errs = parse_reply('```json\\n{"statements": ["A."]}\\n```', statements_spec())
    >>> obj.statements, errs
    (['A.'], [])
    >>> parse_reply('Sure! {"statements": []}', statements_spec())[1]
    ['not valid JSON: Expecting value at line 1 column 1']
    """
    from pydantic import ValidationError

    if not isinstance(text, (str, type(None))):
        return None, [f"the reply is a JSON {type(text).__name__}, not text"]
    if text is None or not text.strip():
        return None, ["empty reply"]
    s = clean_text(text)
    try:
        data = json.loads(s, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return None, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    except ValueError as exc:
        return None, [f"not valid JSON: {exc}"]
    if not isinstance(data, dict):
        return None, [f"expected a JSON object, got a JSON {type(data).__name__}"]
    try:
        obj = spec.model.model_validate(data)
    except ValidationError as exc:
        return None, _pydantic_errors(exc)
    errors = spec.check(obj)
    if errors:
        return None, errors
    return obj, []
