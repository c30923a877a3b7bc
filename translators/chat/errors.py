"""Chat Completions error types (docs/chat.md "Streaming", "DeepSeek"): `{"error": {"message", "type",
"param", "code"}}` from OpenAI and DeepSeek, Ollama's `{"error": "text"}`, vLLM's flat
`{"object": "error", "message", "type", "code": 400}`; an HTTP error body or a chunk of a stream."""

from __future__ import annotations

from typing import Any

from translators.wire.upstream_errors import ErrorTable, Failure, describe, text_of

ERRORS = ErrorTable(
    status_of={"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
               "not_found_error": 404, "rate_limit_error": 429, "rate_limit_exceeded": 429,
               "insufficient_quota": 429, "server_error": 500, "api_error": 500, "overloaded_error": 529},
    code_of={"insufficient_quota": "insufficient_quota", "overloaded": "server_is_overloaded",
             "overloaded_error": "server_is_overloaded"},
)


def body_failure(status: int, body: Any) -> Failure:
    """An HTTP error body (parsed JSON, or the text of one that is not)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _described(error, error["message"], status)
    text = error if isinstance(error, str) else text_of(body)
    return describe(ERRORS, text, status=status)


def event_failure(error: Any) -> Failure:
    """An error chunk inside a stream: a numeric `code` is its status, else its type's."""
    if not isinstance(error, dict):
        return describe(ERRORS, str(error), status=ERRORS.default_status)
    code = error.get("code")
    if isinstance(code, int) and not isinstance(code, bool) and code:
        status = code
    else:
        kind = error.get("type") if isinstance(error.get("type"), str) else ""
        status = ERRORS.status_of.get(kind) or ERRORS.status_of.get(str(code), ERRORS.default_status)
    return _described(error, str(error.get("message") or "upstream error"), status)


def _described(error: dict[str, Any], message: str, status: int) -> Failure:
    """`type: message`; the code decided by `code` when it is a word (OpenAI's
    `context_length_exceeded`, `insufficient_quota`), else by `type`."""
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    code = error.get("code")
    vendor = code if isinstance(code, str) else kind
    return describe(ERRORS, message, status=status, error_type=vendor, label=kind or "")
