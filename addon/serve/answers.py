"""Answers the proxy gives itself, written once in the client's own dialect: an error is its client
dialect's `error_body` with the status its `error_status` says (docs/design.md "Errors"); the
flow's client dialect is `addon/serve/flow.py` `speaks_of(flow.metadata)` where no `FlowCtx` is
at hand."""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from addon.serve.seal import seal
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
    """The proxy answers a gateway flow itself, and seals it at once (addon/serve/seal.py): the
    request headers may already carry the upstream key, and the `response` hook that still runs
    for it never reads it as an upstream answer."""
    flow.response = response
    seal(flow)
