"""translators/api.py `StreamTranslator`: a 200 stream that ends having sent nothing of an answer.

llama-cpp-python answers a request over its context with a 200 and an empty stream; any server
that fails after its headers does the same. Without a rule the client reads "the stream ended
before ..." as a server error and Codex retries it five times (docs/codex.md "Errors and
retries"); the rule ends it with a `response.failed` whose code Codex does not retry and whose
message it shows as sent (`invalid_prompt`), on every dialect.
"""

from __future__ import annotations

import json

import pytest

from tests.translators.bodies import body, user
from tests.translators.streamcheck import assert_valid_responses_stream, run, sized, terminal
from translators import Translation, translate_request

NOT_RETRIED = {"context_length_exceeded", "insufficient_quota", "usage_not_included", "server_is_overloaded",
               "invalid_prompt"}
"""The `response.failed` codes Codex ends a turn on without a retry (docs/codex.md "Errors and retries")."""
MODELS = {"chat": "qwen3", "anthropic": "claude-sonnet-4-6", "gemini": "gemini-2.5-pro",
          "bedrock": "us.anthropic.claude-sonnet-4-6"}


def _translation(dialect: str) -> Translation:
    return translate_request(body(user("hi")), dialect, MODELS[dialect])


def _error(dialect: str, upstream: bytes, chunk: int | None = None) -> dict[str, object]:
    chunks = sized(upstream, chunk) if chunk else [upstream]
    last = terminal(assert_valid_responses_stream(run(dialect, _translation(dialect), chunks)))
    assert last["type"] == "response.failed", last
    return last["response"]["error"]


@pytest.mark.parametrize("dialect", list(MODELS))
def test_a_stream_of_no_bytes_fails_as_sent_nothing_with_a_code_codex_does_not_retry(dialect: str) -> None:
    error = _error(dialect, b"")
    assert error["code"] in NOT_RETRIED
    assert "sent nothing" in error["message"] and "context" in error["message"]


@pytest.mark.parametrize("dialect", ["chat", "anthropic", "gemini"])
@pytest.mark.parametrize("chunk", [None, 1])
def test_keep_alives_alone_are_nothing_sent(dialect: str, chunk: int | None) -> None:
    """SSE comments, as sse-starlette (llama-cpp-python's server) sends while it waits."""
    error = _error(dialect, b": ping - 2026-12-01 21:00:00\r\n\r\n: ping\n\n", chunk)
    assert error["code"] in NOT_RETRIED and "sent nothing" in error["message"]


def test_an_anthropic_ping_event_alone_is_nothing_sent() -> None:
    error = _error("anthropic", b'event: ping\ndata: {"type": "ping"}\n\n')
    assert error["code"] in NOT_RETRIED and "sent nothing" in error["message"]


@pytest.mark.parametrize("chunk", [None, 3])
def test_a_chat_stream_of_only_done_is_nothing_sent(chunk: int | None) -> None:
    error = _error("chat", b"data: [DONE]\n\n", chunk)
    assert error["code"] in NOT_RETRIED and "sent nothing" in error["message"]


def test_the_failure_keeps_what_the_decoder_said_about_the_end() -> None:
    assert "finish_reason" in str(_error("chat", b"")["message"])


def test_an_answer_cut_short_after_it_began_is_still_a_retryable_server_error() -> None:
    started = b'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}\n\n'
    error = _error("chat", started)
    assert error["code"] == "server_error" and "sent nothing" not in error["message"]


def test_an_error_the_upstream_sent_as_its_only_data_keeps_its_own_code_and_message() -> None:
    overflow = {"error": {"message": "This model's maximum context length is 2048 tokens.",
                          "type": "invalid_request_error", "code": "context_length_exceeded"}}
    error = _error("chat", f"data: {json.dumps(overflow)}\n\n".encode())
    assert error["code"] == "context_length_exceeded" and "2048" in error["message"]


def test_a_whole_error_body_in_place_of_the_stream_keeps_its_own_reading() -> None:
    error = _error("chat", b'{"error": {"message": "model not loaded", "type": "server_error"}}')
    assert "model not loaded" in error["message"] and "sent nothing" not in error["message"]


def test_an_empty_answer_that_did_begin_completes_as_before() -> None:
    begun = (b'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}\n\n'
             b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n')
    payloads = assert_valid_responses_stream(run("chat", _translation("chat"), [begun]))
    assert terminal(payloads)["type"] == "response.completed"
