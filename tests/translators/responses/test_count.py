"""OpenAI's token count (docs/claude-code.md "Token counts"): the turn the Responses encoder wrote
for a non-Responses client, re-shaped for `POST /v1/responses/input_tokens` and checked against the
openai SDK's `InputTokenCountParams`; the answer's `input_tokens` is the count."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from openai.types.responses import InputTokenCountResponse, input_token_count_params
from pydantic import TypeAdapter

from translators import dialect, translate_request

COUNTER = dialect.get("responses").codec.count_tokens
TOOL = {"name": "exec_command", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}


def turn() -> dict[str, Any]:
    body = {"model": "claude-x", "max_tokens": 100, "stream": True, "temperature": 0.3,
            "system": "Be brief.", "tools": [TOOL], "messages": [{"role": "user", "content": "count me"}]}
    return translate_request(body, "responses", "gpt-5.5", client="messages").body


def test_the_count_goes_to_responses_input_tokens_as_the_sdk_describes_it() -> None:
    assert COUNTER is not None
    sent = turn()
    path, body = COUNTER.encode(sent, "gpt-5.5")
    assert path == "/responses/input_tokens"  # under the base URL's /v1, like `/responses`
    TypeAdapter(input_token_count_params.InputTokenCountParams).validate_python(body)
    assert not set(body) - set(get_type_hints(input_token_count_params.InputTokenCountParams))
    assert body["model"] == "gpt-5.5"
    assert body["input"] == sent["input"] and body["tools"] == sent["tools"]
    assert body["instructions"] == sent["instructions"]


def test_the_answer_is_its_input_tokens() -> None:
    assert COUNTER is not None
    answer = InputTokenCountResponse(object="response.input_tokens", input_tokens=55).model_dump()
    assert COUNTER.parse(answer) == 55


@pytest.mark.parametrize("answer", [{}, {"input_tokens": None}, {"usage": {"input_tokens": 5}}, None])
def test_another_body_is_no_count(answer: Any) -> None:
    assert COUNTER is not None
    with pytest.raises(ValueError):
        COUNTER.parse(answer)
