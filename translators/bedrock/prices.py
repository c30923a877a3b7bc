"""List prices on Bedrock (`prices.toml` beside this file, docs/prices.md), found by a model id in
any of Bedrock's forms."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from translators.core import pricing

_PROFILE = re.compile(r"^(?:arn:aws[\w-]*:bedrock:[\w-]*:\d*:(?:foundation-model|inference-profile)/)?"
                      r"(?:(?:us|eu|apac|ap|jp|au|ca|us-gov|global)\.)?")
_VERSION = re.compile(r"-v\d+(?::\d+)?$")


@functools.cache
def table() -> pricing.PriceTable:
    return pricing.shipped(Path(__file__).parent)


def model_key(model_id: str) -> str:
    """The model a Bedrock id names, as the table keys it: `us.anthropic.claude-sonnet-4-6-v1:0`,
    `global.anthropic.claude-sonnet-4-6` and a foundation-model or inference-profile ARN all read
    `anthropic.claude-sonnet-4-6` (an application inference profile hides its model: itself)."""
    return _VERSION.sub("", _PROFILE.sub("", model_id, count=1))


def price(model_id: str, prices: pricing.PriceTable | None = None) -> pricing.Price | None:
    return (prices or table()).find(model_key(model_id))
