"""One error family for the whole package.

Everything raised inside `translators` derives from `TranslatorError`; the public boundaries
(`translate_request`, the stream translators, `translate_response`) turn it into a
Responses-shaped error, so callers never see a foreign exception type.
"""

from __future__ import annotations

from typing import Any


class TranslatorError(Exception):
    """Base of every error this package raises on purpose."""

    code: str = "server_error"
    status: int = 500

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.param = param

    def to_error(self) -> dict[str, Any]:
        """The Responses-shaped error object (the value of the top-level `error` key)."""
        return {
            "type": _ERROR_TYPE_BY_STATUS.get(self.status, "server_error"),
            "code": self.code,
            "message": self.message,
            "param": self.param,
        }

    def to_body(self) -> dict[str, Any]:
        return {"error": self.to_error()}


class Refused(TranslatorError):
    """The request asks for something no upstream of this target can do; answer 400, send nothing."""

    code = "unsupported_request"
    status = 400


class MalformedRequest(Refused):
    """The client's body is not a Responses request we can read."""

    code = "invalid_request"


class UnsupportedFeature(Refused):
    """A valid Responses feature that the chosen target cannot express at all."""

    code = "unsupported_feature"


class UpstreamProtocolError(TranslatorError):
    """The upstream sent bytes that do not follow its own dialect."""

    code = "upstream_protocol_error"
    status = 502


_ERROR_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    502: "server_error",
    503: "server_error",
    529: "server_error",
}


def error_type_for_status(status: int) -> str:
    if status in _ERROR_TYPE_BY_STATUS:
        return _ERROR_TYPE_BY_STATUS[status]
    return "invalid_request_error" if 400 <= status < 500 else "server_error"
