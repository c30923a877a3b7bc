"""A flow sent upstream through the gateway's own upstream leg (docs/pools.md, docs/architecture.md
"The upstream leg"): what the pipeline hands the runner, and how the flow's request is shown.

`pipeline.send` builds one `Sending` per flow it sends upstream (a turn, a token count): a `Leg`
over the route's pool whose `prepare(deployment)` is the request for that deployment (translated
for its dialect and model, its URL, headers and real credentials) and whose hook factory is the
stream hook of that deployment's translation. The flow's own request shows the request of the
pool's first deployment, its credentials `<redacted>`: what `--server-replay` matches and what a
capture or mitmweb shows. `Retarget`, the last addon of mitmproxy's chain, points the flow at the
loopback server (addon/upstream/server.py) once every other addon had its `request` hook; at the
answer's head the request shown is the one of the deployment that answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mitmproxy import http

from addon.observe import flowinfo
from addon.routes.routing import Deployment, Route
from addon.serve.flow import context_of
from addon.upstream import credentials
from addon.upstream.leg import Leg, Prepared

if TYPE_CHECKING:
    from addon.upstream.service import UpstreamLeg
    from translators import Translation

FRAMING_HEADERS = ("content-length", "host", "content-encoding", "transfer-encoding")
"""Client headers that describe the client's own body and connection, never the one re-sent."""


@dataclass(slots=True)
class Shown:
    """A request as the flow shows it: its URL, headers (credentials `<redacted>`) and body."""

    url: str
    headers: list[tuple[str, str]]
    content: bytes


@dataclass(slots=True, eq=False)
class Sending:
    leg: Leg
    service: UpstreamLeg
    shown: Shown
    """The request of the pool's first deployment, as the flow shows it before any attempt."""
    first: Prepared
    """That request with its real credentials (never in the flow)."""
    translations: dict[str, Translation] = field(default_factory=dict)
    """Each deployment's translation, by name, once prepared."""
    deployments: dict[str, Deployment] = field(default_factory=dict)
    """Each prepared deployment, by name."""
    shows: dict[str, Shown] = field(default_factory=dict)
    """Each prepared deployment's request as the flow shows it, by name."""
    path: str | None = None
    """The ticket's path on the loopback server, once issued."""
    retargeted: bool = False
    on_close: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """The flow is let go of: a ticket never used forgotten, what the leg held released."""
        if self.path is not None and not self.retargeted:
            self.service.discard(self.path)
        for done in self.on_close:
            with contextlib.suppress(Exception):
                done()
        self.on_close.clear()


def shown_of(url: str, headers: dict[str, str], secret: dict[str, str], content: bytes) -> Shown:
    names = {name.lower() for name in secret}
    kept = [(k, v) for k, v in headers.items() if k.lower() not in names]
    return Shown(url, [*kept, *((name, credentials.PLACEHOLDER) for name in secret)], content)


def show(flow: http.HTTPFlow, shown: Shown) -> None:
    """The flow's request becomes `shown` (its Host header follows the URL)."""
    request = flow.request
    request.url = shown.url
    host = request.headers.get("host")
    request.headers.clear()
    if host is not None:
        request.headers["host"] = request.host_header or host
    for name, value in shown.headers:
        request.headers[name] = value
    request.content = shown.content


def answered_request(sending: Sending) -> Shown:
    """The request of the deployment whose answer the client got, as the flow shows it; before
    any answer, the first deployment's."""
    name = answering(sending.leg)
    found = sending.shows.get(name) if name is not None else None
    return found or sending.shown


def answering(leg: Leg) -> str | None:
    """The deployment whose answer the client gets: the one that answered, else (a stream whose
    head went out) the attempt in flight; None before any attempt."""
    if leg.answered is not None:
        return leg.answered.name
    return leg.attempts[-1].deployment if leg.attempts else None


def affinity_of(fields: dict[str, Any], flow: http.HTTPFlow) -> tuple[str, ...]:
    """The conversation's keys, strongest first (docs/pools.md "Which deployment"): the response a
    `previous_response_id` names, Codex's `prompt_cache_key`, Claude Code's session (from
    `metadata.user_id`), the WebSocket connection."""
    keys: list[str] = []
    previous = fields.get("previous_response_id")
    if isinstance(previous, str) and previous:
        keys.append(f"resp:{previous}")
    cache_key = fields.get("prompt_cache_key")
    if isinstance(cache_key, str) and cache_key:
        keys.append(f"pck:{cache_key[:200]}")
    metadata = fields.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(user, str) and user:
        _, found, session = user.partition("session_")
        keys.append(f"session:{(session if found else user)[:200]}")
    socket = flow.metadata.get(flowinfo.WEBSOCKET)
    if isinstance(socket, str) and socket:
        keys.append(f"ws:{socket}")
    return tuple(keys)


def same_translation(a: Route, b: Route) -> bool:
    """A request translated for route `a` serves route `b` as it is (only its address and key differ)."""
    return (a.dialect.name == b.dialect.name and a.model == b.model and a.server == b.server
            and a.context_window == b.context_window and a.max_output_tokens == b.max_output_tokens)


# -- the last addon of mitmproxy's chain --------------------------------------------------------
class Retarget:
    """Appended at the end of mitmproxy's addon chain (after `serverplayback`, `mapremote`, ...):
    a flow the gateway sends upstream goes to the loopback server at its ticket, unless an addon
    already answered it (a server replay). mitmproxy sends the loopback server no body: the leg
    holds what goes upstream; the flow shows it again at the answer's head (`restore`)."""

    name = "gateway-retarget"

    def __init__(self, base_url: Callable[[], str | None]) -> None:
        self._base_url = base_url

    def request(self, flow: http.HTTPFlow) -> None:
        fc = context_of(flow)
        sending = fc.sending if fc is not None else None
        if not isinstance(sending, Sending) or sending.path is None or sending.retargeted:
            return
        if flow.response is not None or flow.error is not None:
            sending.service.discard(sending.path)  # answered otherwise (server replay)
            sending.path = None
            return
        base = self._base_url()
        if base is None:
            return
        sending.retargeted = True
        flow.request.url = base + sending.path
        flow.request.content = b""


def restore(flow: http.HTTPFlow, sending: Sending) -> None:
    """The flow shows the request of the deployment that answered (or the first one's), not the
    loopback server's."""
    if sending.retargeted:
        show(flow, answered_request(sending))

