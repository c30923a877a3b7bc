"""Gemini error bodies, whether a whole HTTP answer or an element of a stream (docs/gemini.md "Errors"):
`{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "...", "details": [...]}}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from translators.upstream_errors import code_for

# google.rpc status -> HTTP status, for bodies that name only one of the two.
HTTP_BY_STATUS = {
    "INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400, "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403, "NOT_FOUND": 404, "ABORTED": 409, "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429, "CANCELLED": 499, "INTERNAL": 500, "UNKNOWN": 500, "DATA_LOSS": 500,
    "NOT_IMPLEMENTED": 501, "UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504,
}
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    code: str
    """The Responses error code Codex acts on (upstream_errors.code_for)."""
    message: str
    retry_after: float | None = None


def error_object(body: Any) -> dict[str, Any] | None:
    """The `error` object of a body, also when the JSON-array stream framing wraps it in a list."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return None


def describe(error: dict[str, Any], http_status: int | None = None) -> Failure:
    status_name = error.get("status") if isinstance(error.get("status"), str) else None
    code = error.get("code") if isinstance(error.get("code"), int) else None
    status = http_status or code or HTTP_BY_STATUS.get(status_name or "", 500)
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    retry_after = _retry_delay(error.get("details"))
    text = f"{status_name}: {message}" if status_name else message or f"HTTP {status}"
    if retry_after is not None and "try again in" not in text.lower():
        # Codex reads the wait from the message (docs/codex.md "Errors and retries")
        text = f"{text} Please try again in {retry_after:g}s."
    return Failure(status, code_for(status, message, status_name), text, retry_after)


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
