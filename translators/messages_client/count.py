"""Anthropic's token count answer, `POST /v1/messages/count_tokens` (docs/claude-code.md "Token
counts"): `{"input_tokens": N}`, from the upstream's own count where its dialect has one, else
estimated from the request the upstream would have been sent."""

from __future__ import annotations

import math
from typing import Any

from translators.messages_client.context import CHARS_PER_TOKEN
from translators.wire import wirejson

ESTIMATED = f"at {CHARS_PER_TOKEN} characters a token"


def answer(tokens: int) -> dict[str, Any]:
    return {"input_tokens": tokens}


def estimate(upstream_body: dict[str, Any]) -> int:
    """The upstream body's characters at CHARS_PER_TOKEN a token, at least one."""
    return max(1, math.ceil(len(wirejson.dumps(upstream_body)) / CHARS_PER_TOKEN))
