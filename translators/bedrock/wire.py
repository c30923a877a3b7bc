"""Bedrock Converse outcome tables shared by the stream and the whole-answer readers:
stop reasons, usage, and the errors Bedrock raises (docs/bedrock.md "ConverseStream events")."""

from __future__ import annotations

import re
from typing import Any

from translators.ir import events as ev
from translators.upstream_errors import code_for

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "max_output_tokens",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "model_context_window_exceeded": "context_length_exceeded",
}
# The model produced something Bedrock could not parse: no answer the client can use.
MALFORMED_STOPS = {
    "malformed_model_output": "the model's output could not be parsed",
    "malformed_tool_use": "the model wrote a tool call that could not be parsed",
}

# Exception event / error type -> HTTP status Bedrock gives it (service model, docs/bedrock.md "ConverseStream
# events").
ERROR_STATUS = {
    "validationexception": 400,
    "accessdeniedexception": 403,
    "resourcenotfoundexception": 404,
    "modeltimeoutexception": 408,
    "modelstreamerrorexception": 424,
    "modelerrorexception": 424,
    "throttlingexception": 429,
    "modelnotreadyexception": 429,
    "servicequotaexceededexception": 429,
    "internalserverexception": 500,
    "serviceunavailableexception": 503,
}

# Claude-on-Bedrock overflow wordings the shared pattern misses ("input length and `max_tokens`
# exceed context limit: 187254 + 20000 > 200000", "Input is too long for requested model").
_OVERFLOW = re.compile(r"exceeds? context limit|too long for requested model", re.IGNORECASE)


def usage_event(usage: dict[str, Any]) -> ev.Usage:
    """Bedrock's `inputTokens` excludes cache reads and writes (they are reported beside it, AWS
    prompt-caching guide); Responses' `input_tokens` includes both and details each."""
    read = _int(usage.get("cacheReadInputTokens"))
    write = _int(usage.get("cacheWriteInputTokens"))
    fresh = _int(usage.get("inputTokens"))
    output = _int(usage.get("outputTokens"))
    if fresh is None:
        return ev.Usage(output_tokens=output)
    return ev.Usage(input_tokens=fresh + (read or 0) + (write or 0), output_tokens=output,
                    cached_tokens=read or 0, cache_write_tokens=write or 0)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def finish_events(stop_reason: Any) -> list[ev.Event]:
    key = stop_reason if isinstance(stop_reason, str) else ""
    if key in MALFORMED_STOPS:
        return [ev.Failed("server_error", f"Bedrock stopped with {key}: {MALFORMED_STOPS[key]}")]
    if key not in STOP_REASONS:
        return [ev.Note(f"unknown Bedrock stopReason {stop_reason!r} treated as end_turn"),
                ev.Finished("stop")]
    return [ev.Finished(STOP_REASONS[key])]


def error_code(status: int, message: str, error_type: str | None = None) -> str:
    if _OVERFLOW.search(message):
        return "context_length_exceeded"
    return code_for(status, message, error_type)


def status_for(error_type: str | None, default: int = 500) -> int:
    """`throttlingException`, `ThrottlingException` and `...#ThrottlingException` alike."""
    name = (error_type or "").rsplit("#", 1)[-1].split(":", 1)[0].strip().lower()
    return ERROR_STATUS.get(name, default)


def exception_event(error_type: str, payload: Any) -> ev.Failed:
    """An exception the service raised inside an HTTP 200 stream. `modelStreamErrorException`
    also carries the model's own status and message, which may name a context overflow."""
    body = payload if isinstance(payload, dict) else {}
    message = str(body.get("message") or body.get("Message") or "upstream error")
    if body.get("originalMessage"):
        message = f"{message} (model said: {body['originalMessage']})"
    status = status_for(error_type)
    return ev.Failed(error_code(status, message, error_type), f"{error_type}: {message}", status=status)
