"""Answers the proxy gives itself, written once in the client's own dialect: an error is its client
dialect's `error_body` with the status its `error_status` says (docs/design.md "Errors"); the
flow's client dialect is `addon/serve/flow.py` `speaks_of(flow.metadata)` where no `FlowCtx` is
at hand."""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from addon.observe import flowinfo
from addon.upstream import auth, credentials
from translators.client_dialects import ClientDialect
from translators.wire import wirejson


def json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> http.Response:
    return http.Response.make(status, wirejson.dumps(body),
                              {"content-type": "application/json", **(headers or {})})


def error_response(speaks: ClientDialect, status: int, code: str, message: str, param: str | None = None,
                   headers: dict[str, str] | None = None) -> http.Response:
    """An error the proxy writes itself (`code`: the gateway's own, e.g. `request_too_large`), in
    the shape and with the status its client reads."""
    body = speaks.error_body(status, code, message, param)
    return json_response(speaks.error_status(status, body), body, headers)


def answer(flow: http.HTTPFlow, response: http.Response) -> None:
    """The proxy answers a gateway flow itself. The `response` hook still runs for it, so the
    flow is marked done (never read as an upstream answer), and the request headers are
    redacted now, since they may already carry the upstream key."""
    flow.response = response
    flow.metadata["gateway.done"] = True
    auth.redact_request(flow.request.headers)
    credentials.scrub_flow(flow)
    flowinfo.describe(flow)
