"""Anthropic's token count, `POST /v1/messages/count_tokens` (docs/claude-code.md "Token counts"):
the Messages request without what only shapes the answer; the answer is `{"input_tokens": N}`."""

from __future__ import annotations

from typing import Any

PATH = "/v1/messages/count_tokens"
COUNTED = frozenset({"model", "messages", "system", "tools", "tool_choice", "thinking", "output_config",
                     "cache_control", "speed"})
"""The Messages fields the count endpoint takes (anthropic SDK `MessageCountTokensParams`); the
rest (max_tokens, stream, sampling, metadata) change no input token."""


def encode(body: dict[str, Any], model: str) -> tuple[str, dict[str, Any]]:
    return PATH, {**{k: v for k, v in body.items() if k in COUNTED}, "model": model}


def parse(answer: Any) -> int:
    tokens = answer.get("input_tokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise ValueError("not a count_tokens answer: no integer input_tokens")
    return tokens
