"""One socket request as an HTTP flow of the gateway's own path (docs/websocket.md "One
translation path").

The request becomes an ordinary `POST .../responses` flow (`make_flow`), made by the proxy itself
as mitmproxy's client replay makes one, and run by addon/patches/replay_client.py: every addon hook
runs for it, so the gateway's `request` hook translates it, the upstream call, stream translation,
store write, report and saved flow are the HTTP path's own, and mitmweb lists it as its own flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from mitmproxy import connection, http

from addon.observe import flowinfo

_SOCKET_HEADERS = ("upgrade", "connection", "content-length", "transfer-encoding", "content-encoding",
                   "keep-alive", "proxy-authorization")
"""Upgrade headers that describe the handshake, never the POST made from it."""


@dataclass(frozen=True)
class Upgrade:
    """What a re-targeted upgrade leaves for its connection: where its requests go and as whom."""

    url: str
    headers: tuple[tuple[str, str], ...]
    client: str | None
    """The gateway client `identify` found for the upgrade (addon/team/keys.py)."""
    client_conn: connection.Client

    @classmethod
    def of(cls, flow: http.HTTPFlow) -> Upgrade:
        headers = tuple((k, v) for k, v in flow.request.headers.items(multi=True)
                        if k.lower() not in _SOCKET_HEADERS and not k.lower().startswith("sec-websocket-"))
        return cls(flow.request.url, headers, flow.metadata.get(flowinfo.CLIENT), flow.client_conn)


def make_flow(upgrade: Upgrade, content: bytes, connection_id: str) -> http.HTTPFlow:
    """The POST a socket request is, with the upgrade's headers (its client's own: credentials of
    a route to OpenAI itself, Codex's session headers)."""
    request = http.Request.make("POST", upgrade.url, content, [
        *((k.encode(), v.encode()) for k, v in upgrade.headers),
        (b"content-type", b"application/json"), (b"accept", b"text/event-stream")])
    flow = http.HTTPFlow(upgrade.client_conn, connection.Server(address=(request.host, request.port)))
    flow.request = request
    # made by the proxy: keys.identify takes the upgrade's client; cleared once the request's head
    # hooks ran (addon/patches/replay_client.py), so the flow is listed and printed as the client's
    flow.is_replay = "request"
    if upgrade.client:
        flow.metadata[flowinfo.CLIENT] = upgrade.client
    flow.metadata[flowinfo.WEBSOCKET] = connection_id
    return flow
