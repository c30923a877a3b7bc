"""Upstream failures, whatever the dialect, in the terms Codex acts on (docs/codex.md "Errors and retries"):
`context_length_exceeded` starts its compaction, 429 + retry-after drives its retries, and
`server_is_overloaded` / `rate_limit_exceeded` in a `response.failed` have their own handling.

Each dialect declares what its error types mean as an `ErrorTable` (data, in its own folder);
`describe` is the one mapping every path uses: an HTTP error body, an error event inside a stream,
an error read from a whole body. `clip` is the one place a message is cut, and `describe` the one
place the retry hint is written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

CONTEXT_OVERFLOW = re.compile(
    r"prompt is too long|context length|context window|maximum context|too many (input )?tokens"
    r"|input is too long|exceeds the maximum number of tokens|input token count|reduce the length",
    re.IGNORECASE,
)

REQUEST_VALIDATION = re.compile(
    r"Input should be|validation errors? for|\d+ validation errors?\b|RequestValidationError"
    r"|['\"]loc['\"]\s*:|['\"]detail['\"]\s*:\s*\[",
    re.IGNORECASE,
)
"""A server's own check of the request body refused it (FastAPI/pydantic: a `detail` list of
`{type, loc, msg, input}`, "1 validation error for ...", "Input should be a valid string").
Servers that wrap every exception in a 500 (llama-cpp-python) send it as a server error; the
client's request could not be served as written, and retrying it changes nothing, so the client
gets a 400 `invalid_request_error` (`client_status`; docs/chat.md "Errors")."""

_CODE_BY_STATUS = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    402: "insufficient_quota",
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
"""HTTP status -> Responses code, for every dialect (402 is Payment Required: Anthropic's
`billing_error`, DeepSeek's "Insufficient Balance")."""


@dataclass(frozen=True, slots=True)
class ErrorTable:
    """What one dialect's error types mean. Types are looked up by `type_key` (case, a `...#`
    namespace and a `:` suffix do not matter)."""

    status_of: Mapping[str, int] = field(default_factory=dict)
    """Error type -> the HTTP status it stands for, for an error that arrives without one (an
    error event inside a stream)."""
    code_of: Mapping[str, str] = field(default_factory=dict)
    """Error type -> Responses code, where the type says more than its status (an overload sent
    as 500, a quota sent as 429)."""
    overflow: re.Pattern[str] | None = None
    """The vendor's own context-overflow wordings, besides `CONTEXT_OVERFLOW`."""
    default_status: int = 500
    """The status of an error type the table does not know."""

    def status(self, error_type: str | None) -> int:
        return self.status_of.get(type_key(error_type), self.default_status)


PLAIN = ErrorTable()
"""No vendor types: the HTTP status and the message alone."""


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    code: str
    """The Responses error code Codex acts on."""
    message: str
    """What the client reads: `type: message`, with the retry hint when the upstream gave a wait."""


def type_key(error_type: str | None) -> str:
    """`throttlingException`, `ThrottlingException` and `...#ThrottlingException:http` alike."""
    return (error_type or "").rsplit("#", 1)[-1].split(":", 1)[0].strip().lower()


def code_for(status: int, message: str, error_type: str | None = None, table: ErrorTable = PLAIN) -> str:
    key = type_key(error_type)
    if overflows(message, table) or "context" in key:
        return "context_length_exceeded"
    if key in table.code_of:
        return table.code_of[key]
    if status >= 500 and REQUEST_VALIDATION.search(message):
        return "invalid_request_error"
    return _CODE_BY_STATUS.get(status, "server_error" if status >= 500 else "invalid_request_error")


def client_status(status: int, message: str) -> int:
    """The HTTP status the client gets for an upstream error: the upstream's, except a 5xx that
    is a request-validation error (`REQUEST_VALIDATION`), which is the client's 400."""
    if status >= 500 and REQUEST_VALIDATION.search(message):
        return 400
    return status


def overflows(message: str, table: ErrorTable = PLAIN) -> bool:
    return bool(CONTEXT_OVERFLOW.search(message) or (table.overflow and table.overflow.search(message)))


def describe(table: ErrorTable, message: str, *, status: int | None = None, error_type: str | None = None,
             label: str | None = None, retry_after: float | None = None) -> Failure:
    """An upstream error as the client gets it. Without an HTTP status (an error event inside a
    stream) the error type's status stands in. The message is prefixed by `label`, by default the
    error type (`""`: nothing, where the type that decides the code is not the one to show)."""
    status = status if status is not None else table.status(error_type)
    shown = error_type if label is None else label
    text = f"{shown}: {message}" if shown else message or f"HTTP {status}"
    return Failure(status, code_for(status, message, error_type, table), with_retry_hint(text, retry_after))


def with_retry_hint(message: str, retry_after: float | None) -> str:
    """Codex reads the wait from the message text ("try again in 1.5s", docs/codex.md "Errors and
    retries")."""
    if retry_after is None or "try again in" in message.lower():
        return message
    return f"{message} Please try again in {retry_after:g}s."


MAX_MESSAGE = 4000
"""Characters of an upstream's error message the client gets: the gist, not a megabyte page."""


def clip(message: str, limit: int = MAX_MESSAGE) -> str:
    """The one place an upstream's message (or a quote of its body) is cut for the client."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message) - limit} more characters)"


def text_of(body: object) -> str:
    """An error body that is not the dialect's JSON, as text (uncut: `clip` cuts)."""
    if isinstance(body, bytes | bytearray):
        return bytes(body).decode("utf-8", "replace")
    return str(body)
