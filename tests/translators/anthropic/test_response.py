"""Whole (non-streamed) Anthropic answers and HTTP error bodies (issue 2, Build 4; docs/anthropic.md
"Request", "Errors")."""

from __future__ import annotations

import json

import pytest
from openai.types.responses import Response

from tests.translators.bodies import APPLY_PATCH_GRAMMAR, PATCH, body, custom, function, namespace, user
from translators import translate_error, translate_request, translate_response
from translators.core.ids import sequential_ids
from translators.core.report import Report
from translators.features import vendor_state


def translation(stream=False):
    return translate_request(
        body(
            user("hi"),
            stream=stream,
            tools=[
                function("exec_command"),
                namespace("clock", function("sleep")),
                custom("apply_patch", definition=APPLY_PATCH_GRAMMAR),
            ],
        ),
        "anthropic",
    )


def message(*content, stop_reason="end_turn", usage=None):
    return json.dumps(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": list(content),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 10, "output_tokens": 5},
        }
    ).encode()


def answer(data: bytes, report: Report | None = None) -> dict:
    response = translate_response(
        "anthropic", translation(), data, new_id=sequential_ids(), clock=lambda: 0, report=report
    )
    Response.model_validate(response)  # the openai SDK's own type
    return response


def test_text_thinking_and_a_namespaced_call_become_output_items_in_order():
    response = answer(
        message(
            {"type": "thinking", "thinking": "Plan.", "signature": "EqQB=="},
            {"type": "text", "text": "Sleeping."},
            {"type": "tool_use", "id": "toolu_1", "name": "clock__sleep", "input": {"seconds": 2}},
            stop_reason="tool_use",
        )
    )
    assert response["status"] == "completed"
    reasoning, text, call = response["output"]
    state = vendor_state.decode(reasoning["encrypted_content"])
    assert (state.signature, state.text) == ("EqQB==", "Plan.")
    assert text["content"][0]["text"] == "Sleeping."
    assert (call["type"], call["namespace"], call["name"], call["call_id"]) == (
        "function_call",
        "clock",
        "sleep",
        "toolu_1",
    )
    assert json.loads(call["arguments"]) == {"seconds": 2}


def test_a_freeform_tool_use_becomes_a_custom_tool_call_with_the_raw_text():
    response = answer(
        message(
            {"type": "tool_use", "id": "toolu_p", "name": "apply_patch", "input": {"input": PATCH}},
            stop_reason="tool_use",
        )
    )
    assert response["output"] == [
        {
            "type": "custom_tool_call",
            "id": "ctc_2",
            "call_id": "toolu_p",
            "name": "apply_patch",
            "input": PATCH,
            "status": "completed",
        }
    ]


def test_redacted_thinking_is_carried_in_encrypted_content():
    response = answer(
        message({"type": "redacted_thinking", "data": "opaque=="}, {"type": "text", "text": "ok"})
    )
    assert vendor_state.decode(response["output"][0]["encrypted_content"]).redacted == "opaque=="


def test_usage_counts_cache_reads_and_writes_as_input():
    response = answer(
        message(
            {"type": "text", "text": "ok"},
            usage={
                "input_tokens": 3,
                "cache_read_input_tokens": 100,
                "cache_creation_input_tokens": 20,
                "output_tokens": 4,
            },
        )
    )
    assert response["usage"] == {
        "input_tokens": 123,
        "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 20},
        "output_tokens": 4,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 127,
    }


def test_max_tokens_is_an_incomplete_response():
    response = answer(message({"type": "text", "text": "cut"}, stop_reason="max_tokens"))
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}


def test_a_server_tool_block_is_reported_dropped():
    report = Report()
    response = answer(
        message(
            {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}},
            {"type": "text", "text": "ok"},
        ),
        report,
    )
    assert [i["type"] for i in response["output"]] == ["message"]
    assert report.dropped == ["output.content_block.server_tool_use"]


@pytest.mark.parametrize("data", [b"<html>bad gateway</html>", b'{"type": "message"}', b"[]"])
def test_an_answer_that_is_not_an_anthropic_message_fails(data):
    response = answer(data)
    assert response["status"] == "failed"
    assert response["error"]["code"] == "server_error"


# -- HTTP errors ----------------------------------------------------------------------------------


def error_body(kind: str, message: str) -> bytes:
    return json.dumps(
        {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}
    ).encode()


def test_a_rate_limit_keeps_its_status_and_retry_after():
    error = translate_error(
        "anthropic",
        429,
        error_body("rate_limit_error", "Too many requests"),
        {"Retry-After": "7", "anthropic-ratelimit-requests-remaining": "0", "x-other": "1"},
    )
    assert error.status == 429
    assert error.headers == {"retry-after": "7"}
    assert error.body["error"]["code"] == "rate_limit_exceeded"
    assert error.body["error"]["type"] == "rate_limit_error"
    assert "Too many requests" in error.body["error"]["message"]


def test_retry_after_ms_is_kept_too():
    error = translate_error(
        "anthropic", 429, error_body("rate_limit_error", "slow"), {"retry-after-ms": "1500"}
    )
    assert error.headers == {"retry-after-ms": "1500"}


def test_a_prompt_that_is_too_long_is_context_length_exceeded():
    error = translate_error(
        "anthropic",
        400,
        error_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
    )
    assert error.status == 400
    assert error.body["error"]["code"] == "context_length_exceeded"
    assert error.body["error"]["type"] == "invalid_request_error"


def test_a_request_too_large_is_context_length_exceeded():
    error = translate_error(
        "anthropic", 413, error_body("request_too_large", "Request exceeds the maximum size")
    )
    assert error.body["error"]["code"] == "context_length_exceeded"


def test_overloaded_is_server_is_overloaded_with_status_kept():
    error = translate_error("anthropic", 529, error_body("overloaded_error", "Overloaded"))
    assert error.status == 529
    assert error.body["error"]["code"] == "server_is_overloaded"


def test_a_bad_key_is_an_authentication_error():
    error = translate_error("anthropic", 401, error_body("authentication_error", "invalid x-api-key"))
    assert error.status == 401
    assert error.body["error"]["type"] == "authentication_error"
    assert "invalid x-api-key" in error.body["error"]["message"]


def test_a_body_that_is_not_json_is_kept_as_text():
    error = translate_error("anthropic", 502, b"<html>Bad Gateway</html>")
    assert error.status == 502
    assert error.body["error"]["code"] == "server_error"
    assert "Bad Gateway" in error.body["error"]["message"]


def test_every_error_body_is_responses_shaped():
    error = translate_error("anthropic", 400, error_body("invalid_request_error", "messages: bad"))
    assert set(error.body) == {"error"}
    assert set(error.body["error"]) == {"type", "code", "message", "param"}
