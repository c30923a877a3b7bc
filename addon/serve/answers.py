"""Answers the proxy gives itself, always in the client's own dialect (Responses)."""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from addon.serve.seal import seal
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
    """The proxy answers a gateway flow itself, and seals it at once (addon/serve/seal.py): the
    request headers may already carry the upstream key, and the `response` hook that still runs
    for it never reads it as an upstream answer."""
    flow.response = response
    seal(flow)
