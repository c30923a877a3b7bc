"""Gemini error bodies, whether a whole HTTP answer or an element of a stream (docs/gemini.md "Errors"):
`{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "...", "details": [...]}}`.
"""

from __future__ import annotations

import re
from typing import Any

from translators.wire.upstream_errors import ErrorTable, Failure, describe

ERRORS = ErrorTable(
    # google.rpc status -> HTTP status, for bodies that name only the first
    status_of={
        "invalid_argument": 400, "failed_precondition": 400, "out_of_range": 400, "unauthenticated": 401,
        "permission_denied": 403, "not_found": 404, "aborted": 409, "already_exists": 409,
        "resource_exhausted": 429, "cancelled": 499, "internal": 500, "unknown": 500, "data_loss": 500,
        "not_implemented": 501, "unavailable": 503, "deadline_exceeded": 504,
    },
    code_of={"unavailable": "server_is_overloaded"},
)
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")


def error_object(body: Any) -> dict[str, Any] | None:
    """The `error` object of a body, also when the JSON-array stream framing wraps it in a list."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return None


def describe_error(error: dict[str, Any], http_status: int | None = None) -> Failure:
    status_name = error.get("status") if isinstance(error.get("status"), str) else None
    code = error.get("code") if isinstance(error.get("code"), int) else None
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    return describe(ERRORS, message, status=http_status or code or ERRORS.status(status_name),
                    error_type=status_name, retry_after=_retry_delay(error.get("details")))


def _retry_delay(details: Any) -> float | None:
    """`RetryInfo.retryDelay` ("28s") from the error details, if Google sent one."""
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and detail.get("@type") == _RETRY_INFO:
            match = _SECONDS.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None
