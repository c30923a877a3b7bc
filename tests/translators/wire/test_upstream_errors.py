"""translators/wire/upstream_errors.py: a server's request-validation error sent as a 5xx is the client's 400.

llama-cpp-python wraps every exception in a 500 `internal_server_error`, its FastAPI request
check included; Codex retries a 500 thirty times (docs/codex.md "Errors and retries"), though the
same request can only fail the same way. The bodies below are the shapes FastAPI and pydantic
write (docs/chat.md "Errors").
"""

from __future__ import annotations

import json

import pytest

from translators import translate_error
from translators.wire.upstream_errors import client_status, code_for

LLAMA_CPP_PYTHON = {"error": {
    "message": "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 2, 'typed-dict', "
               "'content'), 'msg': 'Input should be a valid string', 'input': None}\n",
    "type": "internal_server_error", "param": None, "code": None}}
FASTAPI_DETAIL = {"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required",
                              "input": {"model": "m"}}]}
PYDANTIC_TEXT = ("1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should "
                 "be 'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]")
BODIES = [json.dumps(LLAMA_CPP_PYTHON), json.dumps(FASTAPI_DETAIL), PYDANTIC_TEXT]


@pytest.mark.parametrize("upstream", BODIES)
@pytest.mark.parametrize("status", [500, 502])
def test_a_validation_error_sent_as_a_server_error_is_a_400_to_the_client(upstream: str, status: int) -> None:
    error = translate_error("chat", status, upstream.encode())
    assert error.status == 400
    assert error.body["error"]["type"] == "invalid_request_error"
    assert error.body["error"]["code"] == "invalid_request_error"
    assert f"returned {status}" in error.body["error"]["message"]  # what the upstream said stays readable


def test_the_validation_message_is_passed_on() -> None:
    error = translate_error("chat", 500, json.dumps(LLAMA_CPP_PYTHON).encode())
    assert "Input should be a valid string" in error.body["error"]["message"]


@pytest.mark.parametrize("message", ["CUDA error: out of memory", "llama_decode returned -1",
                                     "Internal Server Error"])
def test_other_server_errors_stay_server_errors(message: str) -> None:
    error = translate_error("chat", 500, json.dumps({"error": {"message": message,
                                                               "type": "internal_server_error"}}).encode())
    assert (error.status, error.body["error"]["code"]) == (500, "server_error")


def test_a_validation_error_with_its_own_4xx_keeps_its_status() -> None:
    assert translate_error("chat", 422, json.dumps(FASTAPI_DETAIL).encode()).status == 422


def test_the_rule_is_the_same_for_every_dialect() -> None:
    for dialect in ("anthropic", "gemini", "bedrock"):
        assert translate_error(dialect, 500, PYDANTIC_TEXT.encode()).status == 400


def test_the_table_decides_status_and_code_together() -> None:
    assert (client_status(500, PYDANTIC_TEXT), code_for(500, PYDANTIC_TEXT)) == (400, "invalid_request_error")
    assert client_status(503, "busy") == 503 and code_for(503, "busy") == "server_is_overloaded"
