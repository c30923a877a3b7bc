"""The request fields every Responses object repeats: the client's value when it set one, the
Responses API's default when it did not, in whole answers and in every event that carries the
object (translators/responses_client/echo.py; docs/responses.md "The Response object"; issue 24)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import conformance
from tests.translators.responses_client.openresponses_rules import assert_valid_response
from translators import stream_translator, translate_request, translate_response
from translators.core.ids import sequential_ids

TARGET, MODEL = "anthropic", "claude-sonnet-4-6"
STREAM = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude-sonnet-4-6","content":[],"stop_reason":null,"usage":'
    b'{"input_tokens":3,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":'
    b'{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":'
    b'{"type":"text_delta","text":"Hi."}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
"""A short Anthropic answer, in the shape of tests/data/anthropic's recordings."""

DEFAULTS: dict[str, Any] = {
    "background": False,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
    "metadata": {},
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "conversation": None,
}
"""What OpenAI's answers carry for a request that set none of them (tests/data/openai_responses;
presence and frequency penalty, which the Open Responses document adds, 0 as in its example)."""

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
          "additionalProperties": False}
SET: dict[str, tuple[Any, Any]] = {
    "instructions": ("Be brief.", "Be brief."),
    "max_output_tokens": (300, 300),
    "max_tool_calls": (4, 4),
    "parallel_tool_calls": (False, False),
    "prompt_cache_key": ("cache-1", "cache-1"),
    "reasoning": ({"effort": "low", "summary": "auto"}, {"effort": "low", "summary": "auto"}),
    "safety_identifier": ("user-hash-1", "user-hash-1"),
    "service_tier": ("flex", "flex"),
    "store": (False, False),
    "temperature": (0.2, 0.2),
    "text": ({"format": {"type": "json_schema", "name": "answer", "schema": SCHEMA}, "verbosity": "low"},
             {"format": {"type": "json_schema", "name": "answer", "schema": SCHEMA, "description": None,
                         "strict": False}, "verbosity": "low"}),
    "tool_choice": ("required", "required"),
    "top_logprobs": (3, 3),
    "top_p": (0.5, 0.5),
    "truncation": ("auto", "auto"),
    "user": ("user-hash-1", "user-hash-1"),
    "metadata": ({"ticket": "T-1"}, {"ticket": "T-1"}),
    "presence_penalty": (0.5, 0.5),
    "frequency_penalty": (1, 1.0),
}
"""Field -> (what the client sends, what every Responses object then says)."""


def _body(**fields: Any) -> dict[str, Any]:
    return {"model": "gpt-5.5", "input": "hi", **fields}


def _objects(body: dict[str, Any], resolved: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The Responses objects of one request: the whole answer's, and those of the streamed
    answer's response.created / in_progress / completed events."""
    whole = translate_request({**body, "stream": False}, TARGET, MODEL, resolved=resolved)
    body_bytes = json.dumps(conformance.of(TARGET).whole).encode()
    answer = translate_response(TARGET, whole, body_bytes, new_id=sequential_ids(), clock=lambda: 5)
    translation = translate_request({**body, "stream": True}, TARGET, MODEL, resolved=resolved)
    translator = stream_translator(TARGET, translation, new_id=sequential_ids(), clock=lambda: 5)
    sse = translator.feed(STREAM) + translator.close()
    events = [json.loads(line[5:]) for line in sse.decode().splitlines() if line.startswith("data:")]
    return [answer, *(e["response"] for e in events if "response" in e)]


def test_a_request_that_sets_nothing_gets_the_apis_defaults() -> None:
    objects = _objects(_body())
    assert len(objects) == 4
    for response in objects:
        assert {key: response[key] for key in DEFAULTS} == DEFAULTS
        assert_valid_response(response)


@pytest.mark.parametrize("field", sorted(SET))
def test_a_field_the_client_sets_is_echoed_in_every_object(field: str) -> None:
    sent, echoed = SET[field]
    for response in _objects(_body(**{field: sent})):
        assert response[field] == echoed
        assert_valid_response(response)


def test_function_tools_are_echoed_in_their_full_form() -> None:
    """OpenAI repeats a function tool with `description`, `parameters` and `strict` (true unless
    the client said otherwise); the Open Responses `FunctionTool` requires all three."""
    tools = [{"type": "function", "name": "get_weather", "parameters": SCHEMA},
             {"type": "function", "name": "lookup", "description": "Look up.", "parameters": SCHEMA,
              "strict": False}]
    for response in _objects(_body(tools=tools)):
        assert response["tools"] == [
            {"type": "function", "name": "get_weather", "description": None, "parameters": SCHEMA,
             "strict": True},
            {"type": "function", "name": "lookup", "description": "Look up.", "parameters": SCHEMA,
             "strict": False},
        ]


def test_the_deprecated_generate_summary_is_echoed_as_summary() -> None:
    for response in _objects(_body(reasoning={"effort": "high", "generate_summary": "concise"})):
        assert response["reasoning"] == {"effort": "high", "summary": "concise"}


@pytest.mark.parametrize(("resolved", "previous", "conversation"), [
    ({"previous_response_id": "resp_1"}, "resp_1", None),
    ({"conversation": "conv_1"}, None, {"id": "conv_1"}),
    ({"conversation": {"id": "conv_2"}}, None, {"id": "conv_2"}),
])
def test_the_state_the_addon_resolved_into_the_input_is_still_echoed(
        resolved: dict[str, Any], previous: str | None, conversation: dict[str, str] | None) -> None:
    """The addon puts the history `previous_response_id` / `conversation` name into `input`
    before translating (addon/state/stored_items.py `expand`); the objects still say which they continue."""
    for response in _objects(_body(), resolved):
        assert response["previous_response_id"] == previous
        assert response["conversation"] == conversation
        assert_valid_response(response)
