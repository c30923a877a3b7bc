"""Gemini's list prices (`prices.toml` beside this file, docs/prices.md), found by a model id with
or without `models/`."""

from __future__ import annotations

import functools
from pathlib import Path

from translators.core import pricing


@functools.cache
def table() -> pricing.PriceTable:
    return pricing.shipped(Path(__file__).parent)


def price(model: str, prices: pricing.PriceTable | None = None) -> pricing.Price | None:
    return (prices or table()).find(model.removeprefix("models/"))
