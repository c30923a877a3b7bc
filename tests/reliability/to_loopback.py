"""mitmdump script for the credential tests: a flow the gateway addressed to api.openai.com goes to
a local upstream instead (port `$TO_LOOPBACK_PORT`), so what the gateway sends OpenAI can be seen
without leaving the machine. Loaded after `addon/gateway.py`, it only moves the flow's upstream
requests: the headers, credentials included, are what the gateway decided (the upstream is plain
http on loopback). The gateway's upstream leg sends them (docs/pools.md), so each attempt's
prepared request is moved, and the flow's own for what it shows.
"""

from __future__ import annotations

import os
from typing import Any

from mitmproxy import http

from addon.serve.flow import context_of

OPENAI = "https://api.openai.com"


class ToLoopback:
    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or "gateway" not in flow.metadata:
            return
        if flow.request.host != "api.openai.com":
            return
        local = f"http://127.0.0.1:{int(os.environ['TO_LOOPBACK_PORT'])}"
        flow.request.scheme = "http"  # what the flow shows (and the offline guard sees)
        flow.request.host = "127.0.0.1"
        flow.request.port = int(os.environ["TO_LOOPBACK_PORT"])
        fc = context_of(flow)
        leg = fc.sending.leg if fc is not None and fc.sending is not None else None
        if leg is not None:
            prepare = leg.prepare

            async def moved(deployment: Any) -> Any:
                prepared = await prepare(deployment)
                if prepared.url.startswith(OPENAI):
                    prepared.url = local + prepared.url[len(OPENAI):]
                return prepared

            leg.prepare = moved


addons = [ToLoopback()]
