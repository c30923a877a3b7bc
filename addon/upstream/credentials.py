"""Upstream credentials live beside a flow, never in it.

A flow can be saved, dumped or shown at any moment: `mitmdump -w` writes the flows in flight when
it stops (`addons/save.py`, `done`), mitmweb serialises `flow.request.headers` for `/flows` and
`/flows/dump` while a stream is open. So the headers that carry a credential (the route's key,
a Bedrock signature, the client's own login on a `responses` route to OpenAI) are never written
into `flow.request.headers`: the flow holds `<redacted>` under each name. The real values go on
the wire only with the upstream leg's own requests (addon/upstream/leg.py `Prepared`, sent by
addon/upstream/pump.py); what is kept here, in a table keyed by the flow object (weakly: it goes
when the flow goes), is every value sent for the flow, by any attempt.

Every value sent is what `scrub` removes from anything that quotes the upstream (an error
message that repeats the key, a note, a capture).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from mitmproxy import http

from addon.observe import flowinfo

PLACEHOLDER = "<redacted>"
_MIN_SECRET = 6
"""Shorter values are not scrubbed out of text (they would cut ordinary words)."""


_SENT: weakref.WeakKeyDictionary[http.HTTPFlow, tuple[str, ...]] = weakref.WeakKeyDictionary()


def attach(flow: http.HTTPFlow, headers: Mapping[str, str], secrets: Iterable[str] = ()) -> None:
    """`headers` are credentials sent for this flow: the flow shows `<redacted>` under each name,
    and their values are scrubbed from what it keeps (`secret_values`)."""
    for name in headers:
        flow.request.headers[name] = PLACEHOLDER
    add_secrets(flow, secret_values(headers, secrets))


def add_secrets(flow: http.HTTPFlow, secrets: Iterable[str]) -> None:
    """More values sent for this flow (another attempt's credentials)."""
    _SENT[flow] = _unique([*_SENT.get(flow, ()), *secrets])


def secret_values(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> tuple[str, ...]:
    """The values to scrub of credential `headers`: each whole, and the token of a bearer or basic
    one."""
    values = [*secrets]
    for value in headers.values():
        values.append(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic"):
            values.append(token)
    return _unique(values)


def secrets_of(flow: http.HTTPFlow) -> tuple[str, ...]:
    return _SENT.get(flow, ())


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


def _may_hold(value: dict[Any, Any] | list[Any], secrets: tuple[str, ...]) -> bool:
    """False only when no string in `value` can hold a secret: its JSON, written in one C pass,
    holds none of them as a JSON string writes it (orjson escapes character by character, so a
    string that holds a secret holds its escaped form). What orjson does not write (bytes, an
    object) is walked, as is anything that holds a secret anywhere, a key included. A turn's
    record and its translation (the request's tools and instructions echoed, ~500 values) are
    read in ~30 us instead of ~120 us walked."""
    try:
        blob = orjson.dumps(value)
        written = [orjson.dumps(secret)[1:-1] for secret in secrets]
    except TypeError:  # orjson.JSONEncodeError is one
        return True
    return any(secret in blob for secret in written)


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
            if isinstance(value, dict | list) and not _may_hold(value, secrets):
                continue
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
