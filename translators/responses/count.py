"""OpenAI's token count, `POST /v1/responses/input_tokens` (docs/claude-code.md "Token counts"):
the Responses request without what only shapes the answer; the answer is
`{"object": "response.input_tokens", "input_tokens": N}`."""

from __future__ import annotations

from typing import Any

PATH = "/responses/input_tokens"
"""Relative to the base URL, which ends in `/v1` like the turn's `/responses`."""
COUNTED = frozenset({"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
                     "reasoning", "text", "truncation", "conversation", "previous_response_id"})
"""The fields the endpoint takes (openai SDK `InputTokenCountParams`)."""


def encode(body: dict[str, Any], model: str) -> tuple[str, dict[str, Any]]:
    return PATH, {**{k: v for k, v in body.items() if k in COUNTED}, "model": model}


def parse(answer: Any) -> int:
    tokens = answer.get("input_tokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise ValueError("not an input_tokens answer: no integer input_tokens")
    return tokens
