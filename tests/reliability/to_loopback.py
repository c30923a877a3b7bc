"""mitmdump script for the credential tests: a flow the gateway addressed to api.openai.com goes to
a local upstream instead (port `$TO_LOOPBACK_PORT`), so what the gateway sends OpenAI can be seen
without leaving the machine. Loaded after `addon/gateway.py`, it only moves the flow: the headers,
credentials included, are what the gateway decided (the upstream is plain http on loopback)."""

from __future__ import annotations

import os

from mitmproxy import http


class ToLoopback:
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and "gateway" in flow.metadata and flow.request.host == "api.openai.com":
            flow.request.scheme = "http"
            flow.request.host = "127.0.0.1"
            flow.request.port = int(os.environ["TO_LOOPBACK_PORT"])


addons = [ToLoopback()]
