"""Answers the proxy gives itself, always in the client's own dialect (Responses)."""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from addon.observe import flowinfo
from addon.upstream import auth, credentials
from translators.core.errors import error_type_for_status
from translators.wire import wirejson


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"type": error_type_for_status(status), "code": code, "message": message,
                      "param": param}}


def json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> http.Response:
    return http.Response.make(status, wirejson.dumps(body),
                              {"content-type": "application/json", **(headers or {})})


def error_response(status: int, code: str, message: str, param: str | None = None) -> http.Response:
    return json_response(status, error_body(status, code, message, param))


def answer(flow: http.HTTPFlow, response: http.Response) -> None:
    """The proxy answers a gateway flow itself. The `response` hook still runs for it, so the
    flow is marked done (never read as an upstream answer), and the request headers are
    redacted now, since they may already carry the upstream key."""
    flow.response = response
    flow.metadata["gateway.done"] = True
    auth.redact_request(flow.request.headers)
    credentials.scrub_flow(flow)
    flowinfo.describe(flow)
