"""Gemini's token count, `POST /v1beta/models/{model}:countTokens` (docs/claude-code.md "Token
counts"): the whole turn as `generateContentRequest`, since only that form counts the system
instruction and the tools on the Gemini API; the answer's `totalTokens` is the count."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def path(model: str) -> str:
    return f"/v1beta/models/{quote(model.removeprefix('models/'), safe='-._~')}:countTokens"


def encode(body: dict[str, Any], model: str) -> tuple[str, dict[str, Any]]:
    name = model.removeprefix("models/")
    return path(model), {"generateContentRequest": {"model": f"models/{name}", **body}}


def parse(answer: Any) -> int:
    tokens = answer.get("totalTokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise ValueError("not a countTokens answer: no integer totalTokens")
    return tokens
