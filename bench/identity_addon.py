"""mitmproxy script for the proxy benchmark's third mode: every response body streams through an
identity callable, the cheapest stream hook mitmproxy can run. Set against plain passthrough
(`stream = True`) it isolates what any per-chunk callable costs inside mitmproxy; set against the
gateway it leaves what the addon and the translation cost."""

from __future__ import annotations

from mitmproxy import http


def _identity(data: bytes) -> bytes | list[bytes]:
    return data or []  # an empty chunk mid-stream would end an HTTP/1.1 chunked body


def responseheaders(flow: http.HTTPFlow) -> None:
    if flow.response is not None:
        flow.response.stream = _identity
