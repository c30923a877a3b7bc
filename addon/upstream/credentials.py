"""Upstream credentials live beside a flow, never in it.

A flow can be saved, dumped or shown at any moment: `mitmdump -w` writes the flows in flight when
it stops (`addons/save.py`, `done`), mitmweb serialises `flow.request.headers` for `/flows` and
`/flows/dump` while a stream is open. So the headers that carry a credential (the route's key,
a Bedrock signature, the client's own login on a `responses` route to OpenAI) are never written
into `flow.request.headers`: the flow holds `<redacted>` under each name, and the real values
are kept here, in a table keyed by the flow object (weakly: it goes when the flow goes).

mitmproxy 12 has no hook between the `request` hook and the moment the request head is
serialised (docs/mitmproxy.md): `HttpStream` sends `RequestHeaders(stream_id, flow.request, ...)`
to the server connection, which turns that request object into bytes at once
(`proxy/layers/http/_http1.py` `Http1Client.send`, `_http2.py` `Http2Client`). `install()` wraps
`HttpStream._handle_event` so that, for a flow with credentials here, that one command carries a
copy of the request with the real values instead; the flow's own request is never touched.
`tests/addon/upstream/test_credentials.py` fails, naming the attribute, if those internals change.

Every value sent is also what `scrub` removes from anything that quotes the upstream (an error
message that repeats the key, a note, a capture).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.layers import http as http_layer

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
        if key == "gateway" or key.startswith("gateway."):
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


# -- the request head on the wire ---------------------------------------------------------------

_WRAPS = "_gateway_wraps"
"""The attribute that marks a wrapper of ours and holds what it wraps (cutoff.py too)."""
_ORIGINAL = getattr(http_layer.HttpStream._handle_event, _WRAPS, http_layer.HttpStream._handle_event)
"""mitmproxy's own method, never a wrapper of ours left by another copy of this module (loaded by
path, or under another name: its `install` must replace that wrapper, not wrap it)."""


@functools.wraps(_ORIGINAL)
def _handle_event(self: Any, event: Any) -> Generator[Any, Any, None]:
    commands = _ORIGINAL(self, event)
    try:
        command = next(commands)
        while True:
            result = yield _with_credentials(self, command)
            command = commands.send(result)
    except StopIteration:
        return


def _with_credentials(stream: Any, command: Any) -> Any:
    event = getattr(command, "event", None)
    if not isinstance(command, http_layer.SendHttp) or not isinstance(event, http_layer.RequestHeaders):
        return command
    flow = getattr(stream, "flow", None)
    if flow is None or flow not in _SENT or command.event.request is not flow.request:
        return command
    return http_layer.SendHttp(
        http_layer.RequestHeaders(event.stream_id, wire_request(flow), event.end_stream, event.replay_flow),
        command.connection,
    )


def install() -> None:
    """Idempotent, and safe from the addon's `load` at every (re)load of the script: the method
    is set to this wrapper, which always wraps mitmproxy's own (`_ORIGINAL`), never a wrapper."""
    setattr(_handle_event, _WRAPS, _ORIGINAL)
    if http_layer.HttpStream._handle_event is not _handle_event:
        http_layer.HttpStream._handle_event = _handle_event  # type: ignore[method-assign]
