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

import base64
import contextlib
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mitmproxy import connection, http
from mitmproxy import ctx as mitm
from mitmproxy.net.http import url as mitm_url
from mitmproxy.proxy import mode_specs

from addon.observe import flowinfo
from addon.routes.routing import Deployment, Route, pool_of
from addon.serve.flow import FlowCtx, Stage, context_of
from addon.serve.streaming import StreamHook
from addon.upstream import auth, credentials
from addon.upstream.connect import Proxy
from addon.upstream.leg import Leg, Prepared
from translators import Translation, stream_translator
from translators.wire import wirejson

if TYPE_CHECKING:
    from addon.serve.services import Services
    from addon.upstream.service import UpstreamLeg

Address = Callable[[str], str]
"""A deployment's base URL -> the URL its request goes to."""
Retranslate = Callable[[Route], Awaitable[tuple[Translation, bytes, Address]]]

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


def build(services: Services, fc: FlowCtx, route: Route, fields: dict[str, Any], translation: Translation,
          content: bytes | None, address: Address | None, retranslate: Retranslate) -> None:
    """The flow goes upstream through the gateway's own leg: a `Leg`
    over the route's pool, whose `prepare(deployment)` is the request for that deployment (the
    deployment's base URL + the translation's path, or `address`: a count the route's server
    takes elsewhere, `dialects.count_url`; the client's headers cut to what may go on; the
    dialect's content type and accept; the deployment's credentials). The flow's request shows
    the first deployment's, credentials `<redacted>`; `Retarget` sends it to the loopback
    server. `fields`: the client request's top-level members (its conversation's keys);
    `retranslate`: the request for a deployment of another dialect or model."""
    flow = fc.flow
    if content is None:
        content = wirejson.dumps(translation.body)
    address = address or (lambda base: base + translation.path)
    client_headers = header_dict(flow.request.headers)
    upstream = services.upstream
    first = pool_of(route)[0][0]
    target = first.route if same_translation(route, first.route) else route
    url = address(target.base_url)
    headers, secret, note = _upstream_request(services, target, translation, content, url, client_headers)
    notes = fc.info["notes"]
    if note:
        notes.append(note)
    made: dict[str, tuple[Translation, bytes, Address]] = {}
    if target is first.route:
        made[first.name] = (translation, content, address)
    # what the leg's callables fill in and read, held by the `Sending` too: they hold neither it nor
    # the flow's context, whose `sending` it is, so a finished turn is freed as soon as it is let
    # go of, not by a pass of the cyclic collector (docs/benchmarks.md "The fixed cost of a turn")
    translations: dict[str, Translation] = {}
    deployments: dict[str, Deployment] = {}
    shows: dict[str, Shown] = {}
    turn, speaks = fc.turn, fc.speaks

    async def prepare(deployment: Deployment) -> Prepared:
        d_route = deployment.route
        found = made.get(deployment.name)
        if found is None:
            if same_translation(route, d_route):
                found = (translation, content, address)
            else:
                found = await retranslate(d_route)
            made[deployment.name] = found
        d_translation, body, d_address = found
        d_url = d_address(d_route.base_url)
        d_headers, d_secret, d_note = _upstream_request(services, d_route, d_translation, body, d_url,
                                                        client_headers)
        if d_note and d_note not in notes:
            notes.append(d_note)
        secrets = credentials.secret_values(d_secret)
        credentials.add_secrets(flow, secrets)
        translations[deployment.name] = d_translation
        deployments[deployment.name] = deployment
        shows[deployment.name] = shown_of(d_url, d_headers, d_secret, body)
        return Prepared(d_url, [*d_headers.items(), *d_secret.items()], body, secrets)

    def hook(deployment: Deployment, prepared: Prepared) -> StreamHook:
        d_translation = translations.get(deployment.name, translation)
        translator = services.turns.recorder(flow, turn,
                                             stream_translator(d_translation.target, d_translation))
        return StreamHook(translator, secrets=prepared.secrets,
                          max_kept=int(mitm.options.gateway_max_kept_bytes), speaks=speaks)

    leg = Leg(balancer=upstream.balancer(route), prepare=prepare, hook=hook, speaks=speaks,
              limits=upstream.limits_for(route), stream=translation.stream and not fc.counting,
              affinity=affinity_of(fields, flow))
    out = Sending(leg, upstream, shown_of(url, headers, secret, content),
                  Prepared(url, [*headers.items(), *secret.items()], content,
                           credentials.secret_values(secret)),
                  translations=translations, deployments=deployments, shows=shows)
    show(flow, out.shown)
    credentials.attach(flow, secret)
    out.path = upstream.issue(leg)
    fc.sending = out
    fc.at(Stage.SENT)


def _upstream_request(services: Services, route: Route, translation: Translation, content: bytes, url: str,
                      client_headers: dict[str, str]) -> tuple[dict[str, str], dict[str, str], str | None]:
    """One deployment's request headers (credentials apart) and credential headers, and a note
    when its key is missing."""
    dialect = route.dialect
    if auth.takes_client_credentials(dialect, route.base_url):
        # the client's own vendor: the client's own headers go along (its credentials unless
        # the route names a key: auth.upstream_credentials)
        headers = {k: v for k, v in client_headers.items() if k.lower() not in FRAMING_HEADERS}
    else:
        headers = auth.clean_headers(dict(client_headers))
    headers.update(translation.headers)
    headers["content-type"] = dialect.vendor.request_content_type
    headers["accept"] = dialect.vendor.stream_content_type if translation.stream else "application/json"
    headers["accept-encoding"] = "identity"  # the stream hook reads raw bytes
    secret, note = auth.upstream_credentials(route, headers, url, content, services.settings)
    return headers, secret, note


def shown_of(url: str, headers: dict[str, str], secret: dict[str, str], content: bytes) -> Shown:
    names = {name.lower() for name in secret}
    kept = [(k, v) for k, v in headers.items() if k.lower() not in names]
    return Shown(url, [*kept, *((name, credentials.PLACEHOLDER) for name in secret)], content)


def show(flow: http.HTTPFlow, shown: Shown) -> None:
    """The flow's request becomes `shown` (its Host header follows the URL)."""
    request = flow.request
    point(request, shown.url)
    host = request.headers.get("host")
    closing = "close" in request.headers.get("connection", "").lower()
    pairs = [("host", request.host_header or host)] if host is not None else []
    pairs += shown.headers
    if closing:
        # mitmproxy's client side reads the client's wish from this very request object: without
        # it, a client that asked to close and reads to the end of the connection waits forever
        # (RFC 9112 9.6); the hop to the loopback server closes too, which is all it changes there
        pairs.append(("connection", "close"))
    request.headers.fields = header_fields(pairs)
    request.content = shown.content


def point(request: http.Request, url: str, path: str | None = None) -> None:
    """`request.url = url` (with `path`: `url` an origin, `path` its path), as mitmproxy's setter
    does it, from a parse kept per URL: a turn sets its request's URL two or three times, always
    to one of its routes' few URLs or the loopback server's, and each parse (urllib, then IDNA both
    ways) cost about 1% of a turn (docs/benchmarks.md "The fixed cost of a turn")."""
    scheme, host, port, own_path = _parts(url)
    request.scheme = scheme
    request.host = host
    request.port = port
    request.path = own_path if path is None else path


@functools.lru_cache(maxsize=256)
def _parts(url: str) -> tuple[bytes, str, int, bytes]:
    """mitmproxy's own parse of `url` (`mitmproxy.net.http.url.parse`: it raises `ValueError` as
    the setter would), the host decoded as the setter decodes it."""
    scheme, host, port, path = mitm_url.parse(url)
    return scheme, host.decode("idna"), port, path


def header_dict(headers: http.Headers) -> dict[str, str]:
    """`dict(headers)`: each name as first written, its values joined by ", " (RFC 9110 5.3), read
    from the fields in one pass (`dict()` looks each name up again through every field)."""
    found: dict[bytes, tuple[bytes, list[bytes]]] = {}
    for name, value in headers.fields:
        lower = name.lower()
        if (seen := found.get(lower)) is None:
            found[lower] = (name, [value])
        else:
            seen[1].append(value)
    return {name.decode("utf-8", "surrogateescape"): b", ".join(values).decode("utf-8", "surrogateescape")
            for name, values in found.values()}


def header_fields(pairs: list[tuple[str, str]]) -> tuple[tuple[bytes, bytes], ...]:
    """The fields `Headers` holds once each pair was set in turn (`headers[name] = value`): one
    field per name, case-insensitive, where the name was first set, with the value set last.
    Built at once: each `__setitem__` rebuilds the whole tuple (a request's ~20 headers, ~150 µs)."""
    out: dict[bytes, tuple[bytes, bytes]] = {}
    for name, value in pairs:
        key = name.encode("utf-8", "surrogateescape")
        lower = key.lower()
        first = out.get(lower)
        out[lower] = (first[0] if first is not None else key, value.encode("utf-8", "surrogateescape"))
    return tuple(out.values())


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
        via = flow.server_conn.via
        if via is not None:
            # the flow's mode sends upstream traffic through a proxy (`upstream:`): the leg's
            # attempts go through it; mitmproxy's own request goes to the loopback server in the
            # process, never to the proxy (docs/pools.md "Through an upstream proxy")
            sending.leg.via = proxy_of(via, getattr(mitm.options, "upstream_auth", None))
            if sending.leg.via.authorization:
                sending.leg.secrets.add(sending.leg.via.authorization)
            flow.server_conn = connection.Server(address=flow.server_conn.address)
        point(flow.request, base, sending.path)
        flow.request.content = b""


def upstream_proxy_url(options: Any) -> str | None:
    """The proxy of the first `upstream:` mode mitmproxy runs, as a URL with the `upstream_auth`
    credentials in it: what the gateway's own requests outside a flow (the capabilities fetch)
    go through. None when no mode sends upstream traffic through a proxy."""
    for spec in getattr(options, "mode", None) or ():
        try:
            mode = mode_specs.ProxyMode.parse(spec)
        except ValueError:
            continue
        if isinstance(mode, mode_specs.UpstreamMode):
            host, port = mode.address
            auth = getattr(options, "upstream_auth", None) or ""
            user, _, password = auth.partition(":")
            userinfo = f"{quote(user, safe='')}:{quote(password, safe='')}@" if auth else ""
            return f"{mode.scheme}://{userinfo}{host}:{port}"
    return None


def proxy_of(via: Any, upstream_auth: str | None) -> Proxy:
    """mitmproxy's `via` (a `ServerSpec`: scheme, (host, port)) and its `upstream_auth` option
    (`user:password`, sent as Basic, as mitmproxy's own UpstreamAuth addon does)."""
    scheme, (host, port) = via
    authorization = None
    if upstream_auth:
        authorization = "Basic " + base64.b64encode(upstream_auth.encode()).decode("ascii")
    return Proxy(scheme, host, port, authorization)


def restore(flow: http.HTTPFlow, sending: Sending) -> None:
    """The flow shows the request of the deployment that answered (or the first one's), not the
    loopback server's."""
    if sending.retargeted:
        show(flow, answered_request(sending))

