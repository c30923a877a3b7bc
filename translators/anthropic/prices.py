"""Claude's list prices on Anthropic's API (`prices.toml` beside this file, docs/prices.md)."""

from __future__ import annotations

import functools
from pathlib import Path

from translators.core import pricing


@functools.cache
def table() -> pricing.PriceTable:
    return pricing.shipped(Path(__file__).parent)


def price(model: str) -> pricing.Price | None:
    """`claude-sonnet-4-6`, or a dated release of it (`claude-sonnet-4-5-20250929`)."""
    return table().find(model)
