"""What a turn costs: list prices per model, shipped by each dialect as data (`prices.toml` in its
folder, with the date they were taken and their source), a route's own prices, and the cost of a
turn's usage in USD (docs/prices.md).

Pure: the tables are read from the package's own files, nothing is asked of a vendor, and the
cost depends on the usage and the price alone.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

PER = 1_000_000
"""Prices are in USD per million tokens, as vendors publish them."""


@dataclass(frozen=True, slots=True)
class Price:
    """A model's prices, USD per million tokens. A cache price left unsaid is the input price:
    a vendor that does not discount its cache bills those tokens as input."""

    input: float
    output: float
    """Output tokens, reasoning tokens among them (every vendor bills them as output)."""
    cache_read: float | None = None
    cache_write_5m: float | None = None
    """A write kept five minutes (Anthropic's default; Bedrock's)."""
    cache_write_1h: float | None = None
    """A write kept an hour (`ttl: "1h"`)."""


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """A turn's tokens, each counted once, in the categories vendors bill apart."""

    input: int = 0
    """Input tokens neither read from nor written to the cache."""
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    """Output tokens, reasoning included."""
    reasoning: int = 0
    """Of `output`, the reasoning tokens (said apart, priced as output)."""

    @property
    def input_total(self) -> int:
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h


def cost(usage: TokenUsage, price: Price) -> float:
    """The turn's cost in USD."""
    read = price.input if price.cache_read is None else price.cache_read
    five = price.input if price.cache_write_5m is None else price.cache_write_5m
    hour = price.input if price.cache_write_1h is None else price.cache_write_1h
    return (usage.input * price.input + usage.cache_read * read + usage.cache_write_5m * five
            + usage.cache_write_1h * hour + usage.output * price.output) / PER


def usage_of(usage: Mapping[str, Any] | None) -> TokenUsage | None:
    """A turn's usage as the client got it: a Responses `usage` (`input_tokens` counts cached
    and written tokens in, `input_tokens_details` names them) or a Messages `usage`
    (`input_tokens` counts them out, beside `cache_read_input_tokens`,
    `cache_creation_input_tokens` and its TTL split `cache_creation`). None for anything else."""
    if not isinstance(usage, Mapping):
        return None
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        return _messages(usage)
    if "input_tokens" in usage or "output_tokens" in usage:
        return _responses(usage)
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _messages(usage: Mapping[str, Any]) -> TokenUsage:
    written = _int(usage.get("cache_creation_input_tokens"))
    by_ttl = usage.get("cache_creation")
    hour = min(_int(by_ttl.get("ephemeral_1h_input_tokens")), written) if isinstance(by_ttl, Mapping) else 0
    return TokenUsage(input=_int(usage.get("input_tokens")),
                      cache_read=_int(usage.get("cache_read_input_tokens")),
                      cache_write_5m=written - hour, cache_write_1h=hour,
                      output=_int(usage.get("output_tokens")))


def _responses(usage: Mapping[str, Any]) -> TokenUsage:
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    out_details = usage.get("output_tokens_details")
    reasoning = _int(out_details.get("reasoning_tokens")) if isinstance(out_details, Mapping) else 0
    total = _int(usage.get("input_tokens"))
    read = min(_int(details.get("cached_tokens")), total)
    written = min(_int(details.get("cache_write_tokens")), total - read)
    output = _int(usage.get("output_tokens"))
    return TokenUsage(input=total - read - written, cache_read=read, cache_write_5m=written,
                      output=output, reasoning=min(reasoning, output))


# -- tables ------------------------------------------------------------------------------------
RELEASE = re.compile(r"-\d{8}|-latest")
"""What may follow a row's id in the same model's id: a release date or `-latest`."""

@dataclass(frozen=True, slots=True)
class PriceTable:
    """One vendor's list prices: when they were taken, where from, and by model id."""

    taken: str
    """The date the prices were read off the source (ISO)."""
    source: str
    models: Mapping[str, Price]

    def find(self, model: str, release: re.Pattern[str] = RELEASE) -> Price | None:
        """The row for `model`: its own, else the row whose id it extends by what `release`
        matches (a dated release, `claude-sonnet-4-5-20250929`, is its family's). Any other
        suffix names another model (`claude-opus-4-9` is not Opus 4): no price."""
        if model in self.models:
            return self.models[model]
        for key in sorted(self.models, key=len, reverse=True):
            if model.startswith(key) and release.fullmatch(model[len(key):]):
                return self.models[key]
        return None


_KEYS = tuple(f.name for f in fields(Price))


def parse_price(value: Any, where: str = "prices") -> Price:
    """A price as written in TOML (a table of `input`, `output`, `cache_read`, `cache_write_5m`,
    `cache_write_1h`, USD per million tokens): a route's `prices` override or a table's row. Raises
    ValueError saying what to write."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a table, e.g. {{input = 3.0, output = 15.0}} "
                         "(USD per million tokens)")
    unknown = [key for key in value if key not in _KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys are {', '.join(_KEYS)}")
    for key in ("input", "output"):
        if key not in value:
            raise ValueError(f"{where}: {key} is required (USD per million tokens)")
    numbers: dict[str, float] = {}
    for key, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) \
                or number < 0:
            raise ValueError(f"{where}.{key}: {number!r} is not a price (a number of USD per million tokens, "
                             "0 or more)")
        numbers[key] = float(number)
    return Price(**numbers)


def read_table(text: str, where: str = "prices.toml") -> PriceTable:
    """A table as shipped: `taken` (a date), `source` (where the prices were read), and one
    `[models."<id>"]` table per model. Raises ValueError for anything else."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}: {exc}") from None
    taken, source, models = data.get("taken"), data.get("source"), data.get("models", {})
    if taken is None or not isinstance(source, str) or not source:
        raise ValueError(f"{where}: taken (the date) and source (where the prices were read) are required")
    if not isinstance(models, Mapping):
        raise ValueError(f"{where}: models must be tables, one a model")
    rows = {model: parse_price(row, f"{where} models.{model}") for model, row in models.items()}
    return PriceTable(taken=str(taken), source=source, models=rows)


def shipped(folder: Path) -> PriceTable:
    """The table a dialect ships beside its code (`<folder>/prices.toml`)."""
    path = folder / "prices.toml"
    return read_table(path.read_text(encoding="utf-8"), str(path.name))


Lookup = Callable[[str], Price | None]
"""A dialect's list price for a model id in its own form (`Dialect.prices`)."""
