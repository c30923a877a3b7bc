"""Anthropic's token count (docs/claude-code.md "Token counts"): a turn, as the Messages encoder
wrote it, re-shaped for `POST /v1/messages/count_tokens` and checked against the anthropic SDK's
`MessageCountTokensParams`; the answer's `input_tokens` is the count."""

from __future__ import annotations

from typing import Any, get_type_hints

import pytest
from anthropic.types import MessageTokensCount, message_count_tokens_params
from pydantic import TypeAdapter

from translators import dialect, translate_request

COUNTER = dialect.get("anthropic").codec.count_tokens
TOOL = {"name": "exec_command", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}}


def turn(**extra: Any) -> dict[str, Any]:
    """A Claude Code turn, as the gateway translates it for an Anthropic route."""
    body = {"model": "claude-x", "max_tokens": 1, "stream": False, "system": "Be brief.", "tools": [TOOL],
            "temperature": 0.5, "metadata": {"user_id": "u1"},
            "messages": [{"role": "user", "content": "count me"}], **extra}
    return translate_request(body, "anthropic", "claude-sonnet-4-6", client="messages").body


def test_anthropic_has_a_token_counter() -> None:
    assert COUNTER is not None


def test_the_count_goes_to_v1_messages_count_tokens_as_the_sdk_describes_it() -> None:
    assert COUNTER is not None
    path, body = COUNTER.encode(turn(), "claude-sonnet-4-6")
    assert path == "/v1/messages/count_tokens"
    TypeAdapter(message_count_tokens_params.MessageCountTokensParams).validate_python(body)
    unknown = set(body) - set(get_type_hints(message_count_tokens_params.MessageCountTokensParams))
    assert not unknown  # max_tokens, stream, temperature, metadata: the endpoint takes none
    assert body["model"] == "claude-sonnet-4-6"
    assert body["messages"][0]["content"][0]["text"] == "count me"
    assert [t["name"] for t in body["tools"]] == ["exec_command"]
    assert "Be brief." in str(body["system"])


def test_the_answer_is_its_input_tokens() -> None:
    assert COUNTER is not None
    answer = MessageTokensCount(input_tokens=1234).model_dump()
    assert COUNTER.parse(answer) == 1234


@pytest.mark.parametrize("answer", [{}, {"input_tokens": "12"}, {"input_tokens": True}, [], None])
def test_another_body_is_no_count(answer: Any) -> None:
    assert COUNTER is not None
    with pytest.raises(ValueError):
        COUNTER.parse(answer)
