"""An OpenAI Responses upstream in the shared suites: the client's own wire (its error shape is
OpenAI's)."""

from __future__ import annotations

from tests.support.conformance import Conformance, json_error


def _error(status: int, message: str) -> tuple[dict[str, str], bytes]:
    kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(status, "invalid_request_error")
    return json_error({"error": {"message": message, "type": kind, "code": kind}})


CONFORMANCE = Conformance(
    dialect="responses",
    model="gpt-5.5",
    key_env="RELIABILITY_OPENAI_KEY",
    key="sk-proj-reliability-UPSTREAM-openai-compatible-0123456789",
    key_header=("authorization", "Bearer {key}"),
    base_suffix="/v1",
    is_mine=lambda path: path.split("?")[0].endswith("/responses"),
    error=_error,
    whole={
        "id": "resp_whole",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-5.5",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hello whole.", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": {
            "input_tokens": 3,
            "output_tokens": 2,
            "total_tokens": 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    },
    recordings=(
        "openai_responses/function_call_gpt4o.sse",
        "openai_responses/function_call_gpt5_reasoning.sse",
        "deepseek/responses_api_function_call.sse",
    ),
    default_stream="function_call_gpt4o.sse",
    finish_marker=rb'"type":\s*"response\.completed"',
    named_events=True,
    models=("gpt-5.5",),
    unknown_event=b'event: response.mystery\ndata: {"type":"response.mystery","sequence_number":1}\n\n',
)
