"""The gateway's resource bounds and their options (where work runs: addon/work/offload.py).

mitmproxy runs every hook and stream callable on one event loop (docs/mitmproxy.md "Hooks",
"Streaming callables"): whatever a flow costs in memory or CPU there, every other flow waits
for or shares. Each bound has an option with a default that real traffic never reaches
(docs/design.md "Limits"):

- `gateway_max_request_bytes` (32 MiB): a request body as sent and as decoded. Anthropic refuses
  requests above 32 MB itself (docs/anthropic.md, 413 `request_too_large`), and a Codex request
  with a long history is a few MB; a zstd body of 32 KB can decode to 1 GB, so decoding stops at
  the bound and the client gets a 413.
- `gateway_max_kept_bytes` (8 MiB): what the saved flow keeps of each side of one stream, of the
  client's request and of the upstream request once sent. The stream itself goes on; the saved
  copy is cut and says so.

And what one client connection may hold (addon/serve/connections.py; docs/reliability.md "Hostile
clients"): connections in all and per address, the time to send a request's head or the next
one, a pause in a body, an HTTP/1 head's bytes, one WebSocket message's bytes.
"""

from __future__ import annotations

from typing import Any

MiB = 1024 * 1024
MAX_REQUEST_BYTES = 32 * MiB
MAX_KEPT_BYTES = 8 * MiB
SOCKET_BACKLOG_BYTES = 64 * MiB
"""Answer frames a WebSocket client may leave unread before the gateway closes its connection and
ends its upstream call (addon/serve/websocket/endpoint.py): four times the longest answer
(translators/ir/encoder.py MAX_OUTPUT_CHARS), whose done events repeat it; a client that
reads keeps its backlog near one frame (docs/websocket.md "Limits")."""


MAX_HEAD_BYTES = 64 * 1024
"""An HTTP/1 request head (request line and header fields): nginx reads 32 KiB by default, Node 16
KiB; a browser's cookies for one site stay within a few KiB."""
MAX_WEBSOCKET_MESSAGE_BYTES = SOCKET_BACKLOG_BYTES
"""One WebSocket message, either way, on a socket the gateway does not serve (on one it serves, a
client's message is a request: `gateway_max_request_bytes`)."""
HEADER_TIMEOUT = 30
KEEPALIVE_TIMEOUT = 120
"""Longer than the clients' own idle time for a pooled connection (reqwest, under Codex: 90 s), so
the client, not the gateway, ends an idle connection, and never as it sends a request on it."""
BODY_TIMEOUT = 60
LINGER_SECONDS = 5.0
"""How long a connection half-closed after an answer given before its body is read and dropped
(addon/patches/early_answer.py)."""


def add_options(loader: Any) -> None:
    loader.add_option("gateway_max_request_bytes", int, MAX_REQUEST_BYTES,
                      "Largest request body the gateway reads, as sent and as decoded (bytes); "
                      "a bigger one gets 413.")
    loader.add_option("gateway_max_kept_bytes", int, MAX_KEPT_BYTES,
                      "Bytes kept for the saved flow of each side of one streamed answer, of the "
                      "client's request and of the upstream request once sent; the stream goes on, "
                      "the saved copy is cut and says so.")
    loader.add_option("gateway_max_connections", int, 0,
                      "Client connections served at once; one more gets 503 and is closed (0: what the "
                      "process's descriptor limit leaves room for).")
    loader.add_option("gateway_max_connections_per_address", int, 0,
                      "Client connections from one address at once; one more gets 503 (0: half of "
                      "gateway_max_connections; behind a load balancer every client has its address: "
                      "set it to the total).")
    loader.add_option("gateway_header_timeout", int, HEADER_TIMEOUT,
                      "Seconds a new connection has to send its first request's head (TLS and "
                      "CONNECT included); then it is closed (0: no bound).")
    loader.add_option("gateway_keepalive_timeout", int, KEEPALIVE_TIMEOUT,
                      "Seconds a connection may stay idle between an answer and its next request (0: "
                      "no bound).")
    loader.add_option("gateway_body_timeout", int, BODY_TIMEOUT,
                      "Seconds a request body may pause between two reads (0: no bound).")
    loader.add_option("gateway_max_head_bytes", int, MAX_HEAD_BYTES,
                      "Largest HTTP/1 request head (bytes); a bigger one gets 431.")
    loader.add_option("gateway_max_websocket_message_bytes", int, MAX_WEBSOCKET_MESSAGE_BYTES,
                      "Largest WebSocket message (bytes), either way, on a socket the gateway does not "
                      "serve; past it both ends are closed with 1009 (a client's message on a socket "
                      "it serves: gateway_max_request_bytes).")


def cut_note(dropped: int, kept: int, done: str) -> str:
    """What a saved copy cut at `gateway_max_kept_bytes` says where it was cut; `done`: what
    happened to the bytes not kept ("streamed", "sent", "read")."""
    return (f"gateway: cut here, {dropped} more bytes were {done} but not kept "
            f"(gateway_max_kept_bytes={kept})")


def keep_sent_request(request: Any, kept: int) -> None:
    """The upstream request, once sent, cut to `kept` bytes for the saved flow (and mitmweb's
    memory), with a note where it was cut; its headers stay as sent. mitmproxy writes a saved
    flow whole on the event loop (about 5 ms per MiB on the 2-core test machine), and keeps every
    flow in mitmweb."""
    raw = request.raw_content
    if raw is not None and len(raw) > kept:
        request.raw_content = raw[:kept] + b"\n" + cut_note(len(raw) - kept, kept, "sent").encode()

