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


def add_options(loader: Any) -> None:
    loader.add_option("gateway_max_request_bytes", int, MAX_REQUEST_BYTES,
                      "Largest request body the gateway reads, as sent and as decoded (bytes); "
                      "a bigger one gets 413.")
    loader.add_option("gateway_max_kept_bytes", int, MAX_KEPT_BYTES,
                      "Bytes kept for the saved flow of each side of one streamed answer, of the "
                      "client's request and of the upstream request once sent; the stream goes on, "
                      "the saved copy is cut and says so.")


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

