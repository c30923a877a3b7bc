"""Upstream failures, whatever the dialect, in the terms Codex acts on (docs/codex.md "Errors and retries"):
`context_length_exceeded` starts its compaction, 429 + retry-after drives its retries, and
`server_is_overloaded` / `rate_limit_exceeded` in a `response.failed` have their own handling."""

from __future__ import annotations

import re

CONTEXT_OVERFLOW = re.compile(
    r"prompt is too long|context length|context window|maximum context|too many (input )?tokens"
    r"|input is too long|exceeds the maximum number of tokens|input token count|reduce the length",
    re.IGNORECASE,
)

_CODE_BY_STATUS = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    408: "timeout",
    413: "context_length_exceeded",
    424: "server_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    502: "server_error",
    503: "server_is_overloaded",
    504: "timeout",
    529: "server_is_overloaded",
}


def code_for(status: int, message: str, vendor_code: str | None = None) -> str:
    if CONTEXT_OVERFLOW.search(message) or (vendor_code and "context" in vendor_code):
        return "context_length_exceeded"
    if vendor_code in ("overloaded_error", "overloaded", "UNAVAILABLE", "serviceUnavailableException"):
        return "server_is_overloaded"
    if vendor_code in ("insufficient_quota", "billing_error"):
        return "insufficient_quota"
    return _CODE_BY_STATUS.get(status, "server_error" if status >= 500 else "invalid_request_error")


MAX_MESSAGE = 4000
"""Characters of an upstream's error message the client gets: the gist, not a megabyte page."""


def clip(message: str) -> str:
    """The one place an upstream's message is cut for the client (errors and failed streams)."""
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[:MAX_MESSAGE]}... ({len(message) - MAX_MESSAGE} more characters)"


def text_of(body: object, limit: int = 2000) -> str:
    if isinstance(body, bytes | bytearray):
        return bytes(body[:limit]).decode("utf-8", "replace")
    return str(body)[:limit]
