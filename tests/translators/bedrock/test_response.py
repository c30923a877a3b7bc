"""translators/bedrock/response.py: whole Converse answers and Bedrock HTTP errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.translators.bedrock.support import SHELL, bedrock, request
from translators import translate_error, translate_response
from translators.bedrock.response import error_info
from translators.core.ids import sequential_ids
from translators.features.vendor_state import decode as decode_state

USAGE = {"inputTokens": 12, "outputTokens": 30, "totalTokens": 42}


def answer(content: list[dict[str, Any]], stop: str = "end_turn",
           usage: dict[str, int] | None = None) -> bytes:
    return json.dumps({"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                       "usage": usage or USAGE, "metrics": {"latencyMs": 10}}).encode()


def translate(body: bytes) -> dict[str, Any]:
    translation = bedrock(request("hi", tools=[SHELL], stream=False))
    return translate_response("bedrock", translation, body, new_id=sequential_ids(), clock=lambda: 0)


def test_text_answer_becomes_a_completed_response_with_its_message() -> None:
    response = translate(answer([{"text": "Paris."}]))
    assert response["status"] == "completed"
    assert [c["text"] for item in response["output"] for c in item["content"]] == ["Paris."]


def test_tool_use_answer_becomes_a_function_call() -> None:
    tool_use = {"toolUseId": "tooluse_9", "name": "shell", "input": {"cmd": "ls"}}
    response = translate(answer([{"toolUse": tool_use}], stop="tool_use"))
    [item] = response["output"]
    assert (item["type"], item["call_id"], item["name"]) == ("function_call", "tooluse_9", "shell")
    assert json.loads(item["arguments"]) == {"cmd": "ls"}


def test_reasoning_in_an_answer_is_kept_with_its_signature() -> None:
    block = {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}}
    reasoning, _ = translate(answer([block, {"text": "ok"}]))["output"]
    state = decode_state(reasoning["encrypted_content"])
    assert state is not None and (state.dialect, state.text, state.signature) == ("bedrock", "hmm", "sig")


def test_usage_of_an_answer_counts_cache_reads_as_input() -> None:
    usage = translate(answer([{"text": "x"}], usage={**USAGE, "cacheReadInputTokens": 100}))["usage"]
    assert usage["input_tokens"] == USAGE["inputTokens"] + 100
    assert usage["input_tokens_details"]["cached_tokens"] == 100
    assert usage["output_tokens"] == USAGE["outputTokens"]


def test_max_tokens_stop_makes_an_incomplete_response() -> None:
    response = translate(answer([{"text": "cut"}], stop="max_tokens"))
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}


def test_answer_without_output_message_fails_as_a_protocol_error() -> None:
    response = translate(json.dumps({"stopReason": "end_turn"}).encode())
    assert response["status"] == "failed"
    assert "output.message.content" in response["error"]["message"]


@pytest.mark.parametrize(("status", "message", "code"), [
    (400, "Input is too long for requested model.", "context_length_exceeded"),
    (400, "The model returned the following errors: input length and `max_tokens` exceed context limit: "
          "187254 + 20000 > 200000, decrease input length or `max_tokens` and try again",
     "context_length_exceeded"),
    (400, "The provided model identifier is invalid.", "invalid_request_error"),
    (403, "You don't have access to the model with the specified model ID.", "permission_denied"),
    (404, "Could not resolve the foundation model from the provided model identifier.", "model_not_found"),
    (429, "Too many requests, please wait before trying again.", "rate_limit_exceeded"),
    (500, "The system encountered an unexpected error during processing.", "server_error"),
    (503, "Bedrock is unable to process your request.", "server_is_overloaded"),
])
def test_error_body_code_is_inferred_from_status_and_message(status: int, message: str, code: str) -> None:
    info = error_info(status, {"message": message})
    assert (info.code, info.message) == (code, message)


def test_error_body_with_capital_message_key_is_read() -> None:
    assert error_info(403, {"Message": "User is not authorized"}).message == "User is not authorized"


def test_error_type_in_the_body_is_named_in_the_message() -> None:
    info = error_info(429, {"__type": "com.amazon.bedrock#ThrottlingException", "message": "slow down"})
    assert info.message == "ThrottlingException: slow down"


def test_error_body_that_is_not_json_is_kept_as_text() -> None:
    assert error_info(502, "<html>Bad Gateway</html>").message == "<html>Bad Gateway</html>"


def test_http_error_reaches_the_client_in_responses_shape_with_retry_after() -> None:
    error = translate_error("bedrock", 429, b'{"message":"Too many requests"}', {"Retry-After": "3"})
    assert error.body["error"]["code"] == "rate_limit_exceeded"
    assert "Too many requests" in error.body["error"]["message"]
    assert error.headers == {"retry-after": "3"}
