"""Whole (non-streamed) Chat answers and HTTP error bodies (docs/chat.md "Request", "Streaming",
"DeepSeek")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.translators.chat.chatdata import function, translation
from translators import translate_error, translate_response
from translators.core.ids import sequential_ids
from translators.features import vendor_state


def _answer(message: dict[str, Any], finish: str = "stop", usage: dict[str, Any] | None = None) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": usage,
        }
    ).encode()


def _translate(
    body: bytes, model: str = "gpt-4o", tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return translate_response(
        "chat", translation(model, tools), body, new_id=sequential_ids(), clock=lambda: 0
    )


def test_message_content_becomes_the_output_text() -> None:
    response = _translate(_answer({"content": "Hello."}))
    assert response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == "Hello."


def test_reasoning_content_becomes_a_reasoning_item_with_its_state() -> None:
    response = _translate(_answer({"content": "4", "reasoning_content": "2+2"}), "deepseek-reasoner")
    reasoning = response["output"][0]
    state = vendor_state.decode(reasoning["encrypted_content"])
    assert reasoning["summary"][0]["text"] == "2+2" and state is not None and state.text == "2+2"


def test_tool_calls_become_function_calls() -> None:
    body = _answer(
        {
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        },
        finish="tool_calls",
    )
    output = _translate(body, tools=[function("f"), function("g")])["output"]
    assert [(o["call_id"], o["name"], json.loads(o["arguments"])) for o in output] == [
        ("call_1", "f", {"a": 1}),
        ("call_2", "g", {}),
    ]


def test_native_custom_tool_call_becomes_a_custom_tool_call() -> None:
    body = _answer(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "custom",
                    "custom": {"name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"},
                }
            ],
        },
        finish="tool_calls",
    )
    output = _translate(body, "gpt-5.5", [{"type": "custom", "name": "apply_patch", "description": "p"}])[
        "output"
    ]
    assert (output[0]["type"], output[0]["input"]) == ("custom_tool_call", "*** Begin Patch\n*** End Patch")


def test_dsml_in_message_content_becomes_calls() -> None:
    content = (
        'ok\n\n<｜DSML｜invoke name="f">'
        '<｜DSML｜parameter name="a" string="false">1</｜DSML｜parameter>'
        "</｜DSML｜invoke>"
    )
    output = _translate(_answer({"content": content}), "deepseek-chat", [function("f")])["output"]
    assert [(o["type"], o.get("arguments")) for o in output] == [
        ("message", None),
        ("function_call", '{"a": 1}'),
    ]


def test_usage_is_counted() -> None:
    usage = {
        "prompt_tokens": 9,
        "completion_tokens": 4,
        "total_tokens": 13,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 1},
    }
    got = _translate(_answer({"content": "x"}, usage=usage))["usage"]
    assert (got["input_tokens"], got["output_tokens"], got["total_tokens"]) == (9, 4, 13)
    assert (
        got["input_tokens_details"]["cached_tokens"],
        got["output_tokens_details"]["reasoning_tokens"],
    ) == (8, 1)


def test_length_finish_makes_the_response_incomplete() -> None:
    response = _translate(_answer({"content": "cut"}, finish="length"))
    assert (response["status"], response["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )


def test_answer_without_choices_fails() -> None:
    assert _translate(b'{"id": "x", "choices": []}')["status"] == "failed"


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 131072 tokens. However, you requested "
                    "140000 tokens.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_request_error",
                }
            },
            "context_length_exceeded",
        ),
        (
            400,
            {
                "error": {
                    "message": "too long",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
            "context_length_exceeded",
        ),
        (
            429,
            {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": None}},
            "rate_limit_exceeded",
        ),
        (
            402,
            {
                "error": {
                    "message": "Insufficient Balance",
                    "type": "unknown_error",
                    "code": "invalid_request_error",
                }
            },
            "insufficient_quota",
        ),
        (404, {"error": "model 'llama9' not found"}, "model_not_found"),
        (
            400,
            {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400},
            "invalid_request_error",
        ),
    ],
)
def test_http_error_bodies_get_the_code_codex_acts_on(status: int, body: dict[str, Any], code: str) -> None:
    error = translate_error("chat", status, json.dumps(body).encode())
    assert error.status == status and error.body["error"]["code"] == code


def test_http_error_message_is_kept() -> None:
    body = {
        "error": {
            "message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }
    error = translate_error("chat", 400, json.dumps(body).encode())
    assert "must be passed back" in error.body["error"]["message"]
