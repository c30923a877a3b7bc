"""The upstream's answer head, screened before anything of it reaches the client.

Which headers pass is one table (`translators/wire/response_headers.py`). Two heads never pass at all,
and are answered with a Responses-shaped 502 in the `response` hook instead:

- a redirect (`3xx` + `location`): the openai SDK follows it, re-POSTing the whole conversation
  to that host (307/308) or taking whatever it answers as the turn (301/302/303). The gateway
  follows none either: the route's base URL is the address; the error names the new one.
- headers past `MAX_BYTES` / `MAX_COUNT`: no API sends them, and passing them (or keeping them in
  every saved flow) is the upstream's choice of the proxy's memory.
"""

from __future__ import annotations

from typing import Any

from mitmproxy import http

from addon.observe import flowinfo
from translators.wire import response_headers

_MAX_LOCATION = 500


def screen(flow: http.HTTPFlow, target: str) -> None:
    """Keep only the client's headers of a translated answer; note a head that must not pass."""
    response = flow.response
    assert response is not None
    fields = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.fields]
    if too_big := response_headers.oversized(fields):
        refuse(flow, "upstream_headers_too_large",
               f"the {target} upstream's answer has too many header bytes ({too_big})")
    elif 300 <= response.status_code < 400:
        location = response.headers.get("location", "")[:_MAX_LOCATION] or "(no location)"
        refuse(flow, "upstream_redirect",
               f"the {target} upstream answered {response.status_code} redirecting to {location}; "
               "the gateway follows no redirect: set the route's base URL to the address the "
               "upstream really serves")
    response.headers = http.Headers(
        [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response_headers.for_client(fields, target)])


def refuse(flow: http.HTTPFlow, code: str, message: str) -> None:
    flow.metadata[flowinfo.REFUSAL] = {"code": code, "message": message}


def refusal(flow: http.HTTPFlow) -> dict[str, Any] | None:
    value = flow.metadata.get(flowinfo.REFUSAL)
    return value if isinstance(value, dict) else None
