"""Gemini's token count (docs/claude-code.md "Token counts"): the turn the Gemini encoder wrote, as
`generateContentRequest` of `POST /v1beta/models/{model}:countTokens` (the form that counts the
system instruction and the tools), checked against the google-genai types; `totalTokens` is the
count."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types

from translators import dialect, translate_request

COUNTER = dialect.get("gemini").codec.count_tokens
TOOL = {"name": "exec_command", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}


def turn() -> dict[str, Any]:
    body = {"model": "claude-x", "max_tokens": 100, "system": "Be brief.", "tools": [TOOL],
            "messages": [{"role": "user", "content": "count me"}]}
    return translate_request(body, "gemini", "gemini-3-flash-preview", client="messages").body


def test_the_count_is_the_whole_turn_as_generate_content_request() -> None:
    assert COUNTER is not None
    sent = turn()
    path, body = COUNTER.encode(sent, "gemini-3-flash-preview")
    assert path == "/v1beta/models/gemini-3-flash-preview:countTokens"
    assert list(body) == ["generateContentRequest"]
    request = body["generateContentRequest"]
    assert request["model"] == "models/gemini-3-flash-preview"
    assert {k: v for k, v in request.items() if k != "model"} == sent
    for content in [*request["contents"], request["systemInstruction"]]:
        types.Content.model_validate_json(json.dumps(content))
    for tool in request["tools"]:
        types.Tool.model_validate_json(json.dumps(tool))


def test_a_model_named_with_its_prefix_is_named_once() -> None:
    assert COUNTER is not None
    path, body = COUNTER.encode({"contents": []}, "models/gemini-2.5-pro")
    assert path == "/v1beta/models/gemini-2.5-pro:countTokens"
    assert body["generateContentRequest"]["model"] == "models/gemini-2.5-pro"


def test_the_answer_is_its_total_tokens() -> None:
    assert COUNTER is not None
    answer = types.CountTokensResponse(total_tokens=321).model_dump(mode="json", by_alias=True,
                                                                    exclude_none=True)
    assert COUNTER.parse(answer) == 321


@pytest.mark.parametrize("answer", [{}, {"totalTokens": "3"}, {"candidates": []}, None])
def test_another_body_is_no_count(answer: Any) -> None:
    assert COUNTER is not None
    with pytest.raises(ValueError):
        COUNTER.parse(answer)
