"""A step of a flow the gateway took on that raised: the flow is answered, never sent on as it
stands (untranslated to OpenAI with the client's credentials, or half-rewritten). mitmproxy itself
would log an exception escaping a hook and send the flow on."""

from __future__ import annotations

from collections.abc import Awaitable

from mitmproxy import http

from addon.observe import flowinfo
from addon.serve.answers import answer, error_response
from addon.serve.flow import speaks_of


async def guarded(flow: http.HTTPFlow, step: Awaitable[None]) -> None:
    try:
        await step
    except Exception as exc:
        fail_closed(flow, exc)


def fail_closed(flow: http.HTTPFlow, exc: Exception) -> None:
    message = f"gateway could not handle the request: {exc!r}"[:500]
    info = flow.metadata.setdefault(flowinfo.KEY, flowinfo.record("-"))
    info["error"] = message
    answer(flow, error_response(speaks_of(flow.metadata), 500, "server_error", message))
