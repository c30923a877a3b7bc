"""Input tokens when no tokenizer is asked: the request's characters at `CHARS_PER_TOKEN` a
token, and a route's calibration from its last real usage (docs/claude-code.md "Token counts").

The estimate is what the addon answers a token count with when the upstream counts none; the
calibration is the ratio of the tokens the upstream then billed to the estimate of the same
request, which the addon keeps per route and applies to the next estimate (a model's tokenizer is
denser or looser than four characters a token, and stays so).
"""

from __future__ import annotations

import math
from typing import Any

from translators.ir.size import CHARS_PER_TOKEN
from translators.wire import wirejson

LOWEST, HIGHEST = 0.25, 4.0
"""The calibration kept is within these: a usage that far from the estimate (a cached turn read
as zero, a server that counts oddly) says nothing about the next request."""


def estimate(body: Any) -> int:
    """The tokens of an upstream request body, at `CHARS_PER_TOKEN` characters a token (at least 1)."""
    return max(1, math.ceil(len(wirejson.dumps(body)) / CHARS_PER_TOKEN))


def calibration(real_input_tokens: int | None, estimated: int) -> float | None:
    """The ratio of the input tokens the upstream billed for a request (cached and written ones
    included) to the estimate of that request; None when there is nothing to learn from."""
    if not real_input_tokens or real_input_tokens <= 0 or estimated <= 0:
        return None
    return min(max(real_input_tokens / estimated, LOWEST), HIGHEST)


def calibrated(estimated: int, ratio: float | None) -> int:
    """An estimate corrected by a route's calibration (unchanged without one)."""
    return estimated if ratio is None else max(1, math.ceil(estimated * ratio))
