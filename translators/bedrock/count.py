"""Bedrock's token count, `CountTokens`: `POST /model/{modelId}/count-tokens` (docs/claude-code.md
"Token counts"), the Converse request's input under `input.converse`; the answer's `inputTokens`
is the count (botocore bedrock-runtime `CountTokensRequest`, `ConverseTokensRequest`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

COUNTED = frozenset({"messages", "system", "toolConfig", "additionalModelRequestFields"})
"""The Converse fields `ConverseTokensRequest` takes; inference and output settings count nothing."""


def path(model: str) -> str:
    return f"/model/{quote(model, safe='')}/count-tokens"


def encode(body: dict[str, Any], model: str) -> tuple[str, dict[str, Any]]:
    return path(model), {"input": {"converse": {k: v for k, v in body.items() if k in COUNTED}}}


def parse(answer: Any) -> int:
    tokens = answer.get("inputTokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise ValueError("not a CountTokens answer: no integer inputTokens")
    return tokens
