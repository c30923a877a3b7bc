"""Which upstream response headers reach the client of a translated answer: the one table.

An upstream's headers describe the vendor's answer to the operator's key: its cookies
(`set-cookie` for the vendor's domain), the operator's organization and project ids
(`anthropic-organization-id`, `openai-organization`), the vendor's own rate-limit scheme, its
servers and CDN. The client (Codex, the openai SDK) needs none of that; it reads only what the
Responses API itself sends (docs/responses.md): the body's content type, `retry-after` /
`retry-after-ms` for its retries (docs/codex.md, Errors and retries), the `x-ratelimit-*` family,
and `x-request-id`, which the SDK shows with every error. Everything else stays behind.

The vendor's request id is renamed `x-request-id` (Anthropic `request-id`, Bedrock
`x-amzn-requestid`): the client shows it under the name it knows, and the operator can quote it
to the vendor. A dialect may keep more of its own (`Vendor.client_headers`): a `responses` route
keeps what OpenAI sends Codex about its own service (`openai-model`, `x-codex-*`: plan usage, turn
state).
"""

from __future__ import annotations

from collections.abc import Iterable

from translators import dialect as dialects

FRAMING = ("content-type", "content-length", "transfer-encoding", "content-encoding", "connection")
"""How the body is framed and encoded: the proxy needs these to pass the body on (the addon
rewrites them when it rewrites the body)."""
KEEP = ("retry-after", "retry-after-ms")
KEEP_PREFIXES = ("x-ratelimit-",)
REQUEST_IDS = ("x-request-id", "request-id", "x-amzn-requestid", "x-amz-request-id")
"""The first of these the upstream sends reaches the client as `x-request-id`."""

MAX_BYTES = 64 * 1024
"""Header bytes (names and values) an upstream answer may have; a real API sends 1-4 KB."""
MAX_COUNT = 256


def for_client(headers: Iterable[tuple[str, str]], target: str, *,
               framing: bool = True) -> list[tuple[str, str]]:
    """The upstream's (name, value) pairs the client gets, in order; `framing=False` for a body
    the proxy writes itself (an error), which has its own framing."""
    out: list[tuple[str, str]] = []
    own = dialects.find(target)
    own_keep = own.vendor.client_headers if own else ()
    own_prefixes = own.vendor.client_header_prefixes if own else ()
    request_id: str | None = None
    request_id_rank = len(REQUEST_IDS)
    for name, value in headers:
        lower = name.lower()
        if lower in REQUEST_IDS:
            rank = REQUEST_IDS.index(lower)
            if rank < request_id_rank:
                request_id, request_id_rank = value, rank
        elif ((framing and lower in FRAMING) or lower in KEEP or lower.startswith(KEEP_PREFIXES)
              or lower in own_keep or (own_prefixes and lower.startswith(own_prefixes))):
            out.append((lower, value))
    if request_id is not None:
        out.append(("x-request-id", request_id))
    return out


def oversized(headers: Iterable[tuple[str, str]]) -> str | None:
    """Why these headers are too big to handle (None when they are not)."""
    count = size = 0
    for name, value in headers:
        count += 1
        size += len(name) + len(value) + 4  # ": " and CRLF, as on the wire
    if size > MAX_BYTES or count > MAX_COUNT:
        return (f"{count} headers, {size} bytes; the gateway takes at most {MAX_COUNT} headers and "
                f"{MAX_BYTES} bytes")
    return None
