"""Tokens, prices, the per-call ledger and the budget (docs/judge.md).

One ledger row is written per call attempt that reached the server and per cache hit. The cost
of a call is ``prompt × in/10⁶ + completion × out/10⁶ − cached × (in − cached_in)/10⁶`` (the last
term only when a cached-input price is known); cache hits cost 0; an unknown price gives
``None``, never 0. The budget reserves an upper bound before each call and stops starting
calls as soon as the cap would be exceeded.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from ragmeter.errors import InputError

__all__ = [
    "Budget",
    "Ledger",
    "Price",
    "PriceTable",
    "call_cost",
    "estimate_prompt_tokens",
]


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model, and where the figure came from."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    as_of: str | None = None
    source: str = ""
    key: str = ""


def call_cost(
    price: Price | None,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    cached_prompt_tokens: int | None = None,
) -> float | None:
    """USD of one call, or ``None`` when the price is unknown.

    >>> p = Price(0.15, 0.60)
    >>> round(call_cost(p, 1200, 300), 8)
    0.00036
    >>> round(call_cost(Price(0.15, 0.60, 0.075), 1200, 300, 1000), 8)
    0.000285
    >>> call_cost(None, 10, 10) is None
    True
    """
    if price is None:
        return None
    pt, ct = prompt_tokens or 0, completion_tokens or 0
    cost = pt * price.input_per_mtok / 1e6 + ct * price.output_per_mtok / 1e6
    if cached_prompt_tokens and price.cached_input_per_mtok is not None:
        cost -= cached_prompt_tokens * (price.input_per_mtok - price.cached_input_per_mtok) / 1e6
    return cost


def _read_price_file(path: str, text: str) -> dict[str, Price]:
    from ragmeter.io import yamlsafe
    from ragmeter.judge.config import yaml_key_lines

    data = yamlsafe.load(text, path)
    lines = yaml_key_lines(text)
    models = data.get("models") if isinstance(data, Mapping) else None
    if not isinstance(models, Mapping):
        raise InputError("expected a 'models:' mapping of model id to prices", path=path, line=1)
    out: dict[str, Price] = {}
    for name, entry in models.items():
        line = lines.get(("models", str(name)))
        if not isinstance(entry, Mapping):
            raise InputError(
                "expected input_per_mtok and output_per_mtok",
                path=path,
                line=line,
                location=f"models.{name}",
            )
        vals: dict[str, Any] = {}
        for k in ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok"):
            v = entry.get(k)
            if v is None and k != "cached_input_per_mtok":
                raise InputError(
                    f"missing {k} (expected USD per million tokens)",
                    path=path,
                    line=line,
                    location=f"models.{name}",
                )
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise InputError(
                    f"{k} {v!r} is not a non-negative number",
                    path=path,
                    line=lines.get(("models", str(name), k), line),
                    location=f"models.{name}.{k}",
                )
            vals[k] = None if v is None else float(v)
        unknown = set(entry) - {
            "input_per_mtok",
            "output_per_mtok",
            "cached_input_per_mtok",
            "as_of",
        }
        if unknown:
            k = sorted(unknown)[0]
            raise InputError(
                "unknown key (expected input_per_mtok, output_per_mtok, "
                "cached_input_per_mtok, as_of)",
                path=path,
                line=lines.get(("models", str(name), k), line),
                location=f"models.{name}.{k}",
            )
        as_of = entry.get("as_of")
        out[str(name)] = Price(
            vals["input_per_mtok"],
            vals["output_per_mtok"],
            vals["cached_input_per_mtok"],
            str(as_of) if as_of is not None else None,
            path,
            str(name),
        )
    return out


@cache
def shipped_prices() -> dict[str, Price]:
    text = resources.files("ragmeter.judge").joinpath("prices.yaml").read_text("utf-8")
    return {
        k: Price(
            p.input_per_mtok, p.output_per_mtok, p.cached_input_per_mtok, p.as_of, "shipped", k
        )
        for k, p in _read_price_file("prices.yaml", text).items()
    }


def _lookup(table: Mapping[str, Price], model: str) -> Price | None:
    if model in table:
        return table[model]
    best = None
    for key in table:
        if model.startswith(key + "-") and (best is None or len(key) > len(best)):
            best = key
    return table[best] if best is not None else None


class PriceTable:
    """Resolves a model's price: flags, then the user's files, then the shipped table.

    An endpoint on a loopback or private address costs 0.0 unless a price is configured (flags
    or the user's files); anything else unlisted is unknown.
    """

    def __init__(
        self,
        files: Sequence[str | os.PathLike[str]] = (),
        *,
        price_in: float | None = None,
        price_out: float | None = None,
        shipped: bool = True,
    ) -> None:
        self.user: list[dict[str, Price]] = []
        for f in files:
            name = os.fspath(f)
            from ragmeter.io.files import read_text

            text = read_text(name)  # a regular file, size-capped, UTF-8 checked
            self.user.append(_read_price_file(name, text))
        if (price_in is None) != (price_out is None):
            from ragmeter.errors import UsageError

            raise UsageError("give both --price-in and --price-out", command="judge")
        self.flag = (
            Price(float(price_in), float(price_out), None, None, "flags", "")
            if price_in is not None and price_out is not None
            else None
        )
        self.shipped = shipped_prices() if shipped else {}

    def resolve(self, model: str | None, *, local: bool = False) -> Price | None:
        if self.flag is not None:
            return self.flag
        if model:
            for table in self.user:
                hit = _lookup(table, model)
                if hit is not None:
                    return hit
        if local:
            return Price(0.0, 0.0, None, None, "local endpoint", "")
        if model:
            return _lookup(self.shipped, model)
        return None


# -- token estimates ------------------------------------------------------------------------


@cache
def _tiktoken_encoder() -> Any:
    """o200k_base, only when tiktoken is installed *and* its file is already cached locally.

    tiktoken downloads encodings on first use; ragmeter never fetches anything at run time
    (docs/architecture.md, principle 3), so without a cached file the estimate falls back to
    chars/4.
    """
    try:
        import hashlib

        import tiktoken
    except ImportError:
        return None
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        import tempfile

        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not os.path.exists(os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())):
        return None
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:
        return None


def count_text_tokens(text: str) -> int:
    enc = _tiktoken_encoder()
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return math.ceil(len(text) / 4)


def estimate_prompt_tokens(messages: Iterable[Mapping[str, str]]) -> int:
    """Prompt tokens of a chat request: o200k_base if available, else ceil(chars/4); +4/message.

    >>> estimate_prompt_tokens([{"role": "user", "content": "x" * 40}]) >= 14
    True
    """
    total = 0
    for m in messages:
        total += count_text_tokens(m.get("content") or "") + 4
    return total


# -- budget ---------------------------------------------------------------------------------


class Budget:
    """Caps new spend in a run (``--max-cost``); cache hits are free.

    >>> b = Budget(0.01)
    >>> b.try_reserve(0.004), b.try_reserve(0.004), b.try_reserve(0.004), b.closed
    (True, True, False, True)
    >>> b.settle(0.004, 0.003); round(b.spent, 6)
    0.003
    """

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.outstanding = 0.0
        self.closed = False

    def try_reserve(self, amount: float) -> bool:
        if self.cap is None:
            return True
        if self.closed or self.spent + self.outstanding + amount > self.cap + 1e-15:
            self.closed = True  # no further calls are started
            return False
        self.outstanding += amount
        return True

    def settle(self, reserved: float, actual: float | None) -> None:
        if self.cap is None:
            return
        self.outstanding = max(0.0, self.outstanding - reserved)
        self.spent += actual if actual is not None else reserved

    def release(self, reserved: float) -> None:
        if self.cap is not None:
            self.outstanding = max(0.0, self.outstanding - reserved)


def reservation(price: Price, est_prompt_tokens: int, max_tokens: int) -> float:
    """Upper bound of one call: estimated prompt × 1.2 × in + max_tokens × out (USD)."""
    return (
        est_prompt_tokens * 1.2 * price.input_per_mtok / 1e6
        + max_tokens * price.output_per_mtok / 1e6
    )


# -- the ledger -----------------------------------------------------------------------------

LEDGER_FIELDS = (
    "run_id",
    "sample_id",
    "metric",
    "stage",
    "kind",
    "repeat",
    "attempts",
    "cache_hit",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "cost_usd",
    "latency_ms",
    "status",
    "created",
)


@dataclass
class Totals:
    """Counts and the cost of a set of ledger rows, the same in whatever order they are added.

    Calls finish in an order that changes from run to run (and across Dask workers), so the
    cost is summed exactly: the partial sums of Shewchuk's algorithm (as in ``math.fsum``),
    rounded once when read.
    """

    calls_sent: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    usd_unknown_calls: int = 0
    _partials: list[float] = field(default_factory=list, repr=False)

    @property
    def usd(self) -> float:
        return math.fsum(self._partials)

    def add(self, row: Mapping[str, Any]) -> None:
        if row["cache_hit"]:
            self.cache_hits += 1
            return
        self.calls_sent += 1
        self.tokens_in += row["prompt_tokens"] or 0
        self.tokens_out += row["completion_tokens"] or 0
        if row["cost_usd"] is None:
            self.usd_unknown_calls += 1
        else:
            _add_exact(self._partials, float(row["cost_usd"]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls_sent": self.calls_sent,
            "cache_hits": self.cache_hits,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            # a sum that leaves out calls of unknown price is not a cost: null, never a number
            "usd": None if self.usd_unknown_calls else round(self.usd, 10),
            "usd_unknown_calls": self.usd_unknown_calls,
        }


def _add_exact(partials: list[float], x: float) -> None:
    """Add ``x`` to the non-overlapping partial sums ``partials`` without rounding error
    (Shewchuk 1997, "Adaptive precision floating-point arithmetic"; the recipe behind
    ``math.fsum``)."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


@dataclass
class Ledger:
    """Collects ledger rows: totals overall and per metric, and the rows for ``--ledger``.

    ``sink`` (the cache database) receives each row as it is written; ``enabled=False`` keeps
    only the totals (used by the benchmark to measure the ledger's overhead).
    """

    run_id: str
    sink: Any = None
    enabled: bool = True
    keep_rows: bool = True
    rows: list[dict[str, Any]] = field(default_factory=list)
    total: Totals = field(default_factory=Totals)
    per_metric: dict[str, Totals] = field(default_factory=dict)

    def record(
        self,
        *,
        sample_id: str,
        metric: str,
        stage: str,
        kind: str,
        repeat: int,
        attempts: int,
        cache_hit: bool,
        model: str | None,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        cached_prompt_tokens: int | None,
        cost_usd: float | None,
        latency_ms: float | None,
        status: str,
    ) -> dict[str, Any]:
        row = {
            "run_id": self.run_id,
            "sample_id": sample_id,
            "metric": metric,
            "stage": stage,
            "kind": kind,
            "repeat": repeat,
            "attempts": attempts,
            "cache_hit": cache_hit,
            "model": model,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cached_prompt_tokens": cached_prompt_tokens,
            "cost_usd": cost_usd,
            "latency_ms": latency_ms,
            "status": status,
            "created": time.time(),
        }
        self.total.add(row)
        self.per_metric.setdefault(metric, Totals()).add(row)
        if self.enabled:
            if self.keep_rows:
                self.rows.append(row)
            if self.sink is not None:
                self.sink.write_ledger(row)
        return row
