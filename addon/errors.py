"""Answers the proxy gives itself, always in the client's own dialect (Responses)."""

from __future__ import annotations

import json
from typing import Any

from mitmproxy import http

from translators.errors import error_type_for_status


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"type": error_type_for_status(status), "code": code, "message": message,
                      "param": param}}


def json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> http.Response:
    return http.Response.make(status, json.dumps(body).encode(),
                              {"content-type": "application/json", **(headers or {})})


def error_response(status: int, code: str, message: str, param: str | None = None) -> http.Response:
    return json_response(status, error_body(status, code, message, param))
