"""Upstream credentials live beside a flow, never in it.

A flow can be saved, dumped or shown at any moment: `mitmdump -w` writes the flows in flight when
it stops (`addons/save.py`, `done`), mitmweb serialises `flow.request.headers` for `/flows` and
`/flows/dump` while a stream is open. So the headers that carry a credential (the route's key,
a Bedrock signature, the client's own login on a `responses` route to OpenAI) are never written
into `flow.request.headers`: the flow holds `<redacted>` under each name, and the real values
are kept here, in a table keyed by the flow object (weakly: it goes when the flow goes).

The values go on the wire by addon/patches/wire_credentials.py, which asks `wire_request`.

Every value sent is also what `scrub` removes from anything that quotes the upstream (an error
message that repeats the key, a note, a capture).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mitmproxy import http

from addon.observe import flowinfo

PLACEHOLDER = "<redacted>"
_MIN_SECRET = 6
"""Shorter values are not scrubbed out of text (they would cut ordinary words)."""


@dataclass(frozen=True, slots=True)
class Sent:
    headers: tuple[tuple[str, str], ...]
    """The credential headers as they go on the wire, in order."""
    secrets: tuple[str, ...]
    """The exact values to scrub from anything that quotes the upstream."""


_SENT: weakref.WeakKeyDictionary[http.HTTPFlow, Sent] = weakref.WeakKeyDictionary()


def attach(flow: http.HTTPFlow, headers: Mapping[str, str], secrets: Iterable[str] = ()) -> None:
    """Send `headers` with this flow's request without storing them in it: the flow shows
    `<redacted>` under each name. Replaces what an earlier `attach` gave the flow (a replay)."""
    pairs = tuple((name, value) for name, value in headers.items())
    values = [*secrets]
    for _, value in pairs:
        values.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic"):
            values.append(token)
    _SENT[flow] = Sent(pairs, _unique(values))
    for name, _ in pairs:
        flow.request.headers[name] = PLACEHOLDER


def carries(flow: http.HTTPFlow) -> bool:
    """Credentials were attached to this flow (its request head goes out with them)."""
    return flow in _SENT


def forget(flow: http.HTTPFlow) -> None:
    _SENT.pop(flow, None)


def secrets_of(flow: http.HTTPFlow) -> tuple[str, ...]:
    sent = _SENT.get(flow)
    return sent.secrets if sent else ()


def wire_request(flow: http.HTTPFlow) -> http.Request:
    """The request as it goes upstream: the flow's own, with the real credential values."""
    sent = _SENT.get(flow)
    if sent is None:
        return flow.request
    request = flow.request.copy()
    for name, _ in sent.headers:
        request.headers.pop(name, None)
    for name, value in sent.headers:
        request.headers.add(name, value)
    return request


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for value in values:
        if len(value) >= _MIN_SECRET:
            out[value] = None
            escaped = value.replace("/", "\\/")  # as some JSON encoders write it
            out[escaped] = None
    # longest first, so a token inside a longer header value never leaves a remnant
    return tuple(sorted(out, key=len, reverse=True))


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, PLACEHOLDER)
    return text


def scrub_bytes(data: bytes, secrets: Iterable[str]) -> bytes:
    for secret in secrets:
        encoded = secret.encode("utf-8", "surrogateescape")
        if encoded in data:
            data = data.replace(encoded, PLACEHOLDER.encode())
    return data


def scrub_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """Strings, lists and dicts (a flow's `metadata["gateway"]`) with every secret removed."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, bytes):
        return scrub_bytes(value, secrets)
    if isinstance(value, list):
        return [scrub_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: scrub_value(v, secrets) for k, v in value.items()}
    return value


def scrub_flow(flow: http.HTTPFlow) -> None:
    """Everything of a flow that may quote the upstream, rid of every credential sent with it:
    the gateway's metadata (errors, notes, the upstream's raw answer), the comment, and a whole
    answer (what the client gets: called before it is sent). A streamed answer is scrubbed
    chunk by chunk (`addon/serve/streaming.py`)."""
    secrets = secrets_of(flow)
    if not secrets:
        return
    for key, value in list(flow.metadata.items()):
        if flowinfo.is_gateway_key(key):
            if isinstance(value, dict):  # in place: the hooks hold on to `metadata["gateway"]`
                value.update(scrub_value(value, secrets))
            else:
                flow.metadata[key] = scrub_value(value, secrets)
    flow.comment = scrub_text(flow.comment, secrets)
    response = flow.response
    if response is not None and not response.stream and response.raw_content:
        content = response.get_content(strict=False) or b""
        clean = scrub_bytes(content, secrets)
        if clean != content:
            response.content = clean
    if flow.error is not None:
        flow.error.msg = scrub_text(flow.error.msg, secrets)
