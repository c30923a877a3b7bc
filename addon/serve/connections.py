"""Client connections: how many, for how long, how much at once (docs/reliability.md "Hostile
clients", docs/options.md "Connections").

mitmproxy bounds none of this (docs/mitmproxy.md "Descriptors"), so a stranger who reaches the
listener could hold descriptors until the process had none left. This addon (after the gateway in
the script's `addons`) keeps, for every client connection the listener accepts
(addon/patches/admission.py asks it first):

- **How many**: at most `gateway_max_connections` in all (0: from the process's descriptor limit,
  `FDS_PER_CONNECTION` each, `RESERVED_FDS` kept for the rest) and
  `gateway_max_connections_per_address` from one address (0: half the total, so one address never
  holds every place; behind a load balancer every client has the balancer's address: set it to the
  total). One more gets a `503` in Responses' shape with `retry-after` and is closed at once: no
  hook, no layer, no log line of mitmproxy's.
- **How long**: a connection must send its first request's head (TLS handshake and CONNECT
  included) within `gateway_header_timeout` seconds of connecting, and the next within
  `gateway_keepalive_timeout` of the last answer; a request body may pause for at most
  `gateway_body_timeout` seconds between two reads; a connection half-closed after an answer
  given before its body (addon/patches/early_answer.py) ends `limits.LINGER_SECONDS` later. A
  request in flight, a WebSocket or a TCP tunnel has none of these (mitmproxy's `tcp_timeout`
  still ends a silent one).
- **How much at once**: each WebSocket message is bounded as it arrives (`gateway_max_request_bytes`
  from a client on a socket the gateway serves, `gateway_max_websocket_message_bytes` either way
  on any other; addon/patches/websocket_bound.py); an HTTP/1 request head by
  `gateway_max_head_bytes` (addon/patches/head_bound.py).

What is refused or closed is said in one line per kind every `REPORT_SECONDS` at most, with counts
and the addresses: an attack writes a few lines, never one (or a traceback) per connection; the
asyncio loop's "out of file descriptors" errors, should the descriptors run out anyway, likewise.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import ipaddress
import logging
import resource
import time
from dataclasses import dataclass, field
from typing import Any

from mitmproxy import ctx, http

from addon.observe import flowinfo
from addon.patches import admission, early_answer, websocket_bound
from addon.work import limits
from translators import client_dialects
from translators.wire import wirejson

log = logging.getLogger(__name__)

FDS_PER_CONNECTION = 4
"""Descriptors one client connection may hold: its own, its upstream's, and for a WebSocket the
gateway endpoint's two (docs/reliability.md "Hostile clients")."""
RESERVED_FDS = 128
"""Descriptors kept for what is not a client connection: listeners, the store, workers, logs."""
SWEEP_SECONDS = 1.0
REPORT_SECONDS = 10.0


@dataclass(slots=True, eq=False)
class Watch:
    """One admitted client connection."""

    handler: Any
    address: str
    since: float
    """time.monotonic() when it last had nothing in flight (connected, or its last answer)."""
    served: bool = False
    """It has sent a request head: the next one is within the idle timeout."""
    reading: set[str] = field(default_factory=set)
    """Flows whose head arrived and whose body is being read."""
    busy: set[str] = field(default_factory=set)
    """Flows read whole and not answered yet, WebSockets and TCP tunnels."""


def address_of(peername: Any) -> str:
    """The client's address, an IPv4-mapped IPv6 address as IPv4."""
    host = str(peername[0]) if peername else "?"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


def refusal(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 answer, written before the client sent anything and then closed."""
    # nothing was read yet: the default client dialect's shape (Codex's, the OpenAI SDKs')
    body = wirejson.dumps(client_dialects.get(client_dialects.DEFAULT).error_body(status, code, message))
    reason = {503: "Service Unavailable"}.get(status, "Error")
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: "
            f"{len(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n").encode() + body


def connection_limit(configured: int) -> int:
    """`gateway_max_connections`, or (0) what the descriptor limit leaves room for."""
    if configured > 0:
        return configured
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(16, (soft - RESERVED_FDS) // FDS_PER_CONNECTION)


class Connections:
    name = "gateway-connections"

    def __init__(self) -> None:
        self.watches: dict[Any, Watch] = {}
        """Admitted client connections by their `Client`."""
        self.per_address: collections.Counter[str] = collections.Counter()
        self.refused: collections.Counter[tuple[str, str]] = collections.Counter()
        self.closed: collections.Counter[tuple[str, str]] = collections.Counter()
        self._reported = time.monotonic()
        self._sweeper: asyncio.Task[None] | None = None
        self._total = 0
        self._per_address = 0
        self._timeouts = (30.0, 120.0, 60.0)

    # -- options --------------------------------------------------------------------------------
    def configure(self, updated: set[str]) -> None:
        o = ctx.options
        if "gateway_max_connections" not in o:
            return
        self._total = int(o.gateway_max_connections)
        self._per_address = int(o.gateway_max_connections_per_address)
        self._timeouts = (float(o.gateway_header_timeout), float(o.gateway_keepalive_timeout),
                          float(o.gateway_body_timeout))
        websocket_bound.limits = self.message_limit

    @staticmethod
    def message_limit(flow: http.HTTPFlow, from_client: bool) -> int | None:
        """The bound of one WebSocket message on `flow`'s socket, in one direction. On a socket the
        gateway serves, a client's message is a request; the server is the gateway's own endpoint,
        whose events the translators bound (docs/design.md "Limits")."""
        if flowinfo.WEBSOCKET in flow.metadata:
            return int(ctx.options.gateway_max_request_bytes) if from_client else None
        return int(ctx.options.gateway_max_websocket_message_bytes) or None

    def running(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no proxy running (a test context): nothing to admit or sweep
            return
        admission.door = self
        if self._sweeper is None:
            self._sweeper = loop.create_task(self._sweep())
        previous = loop.get_exception_handler()
        if not getattr(previous, "_gateway_quiet", False):
            loop.set_exception_handler(_quiet(previous, self))

    def done(self) -> None:
        if admission.door is self:
            admission.door = None
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    # -- admission (addon/patches/admission.py) -----------------------------------------------------
    def admit(self, handler: Any) -> bytes | None:
        address = address_of(handler.client.peername)
        total = connection_limit(self._total)
        if len(self.watches) >= total:
            self.refused[("gateway_max_connections", address)] += 1
            return refusal(503, "too_many_connections", f"the gateway serves {total} connections at "
                           "most (gateway_max_connections) and has no room now: retry in a second")
        per_address = self._per_address or max(1, total // 2)
        if self.per_address[address] >= per_address:
            self.refused[("gateway_max_connections_per_address", address)] += 1
            return refusal(503, "too_many_connections", f"{address} has {per_address} connections "
                           "open, the most one address may (gateway_max_connections_per_address)")
        self.watches[handler.client] = Watch(handler, address, time.monotonic())
        self.per_address[address] += 1
        return None

    def leave(self, handler: Any) -> None:
        watch = self.watches.pop(handler.client, None)
        if watch is None:
            return
        self.per_address[watch.address] -= 1
        if self.per_address[watch.address] <= 0:
            del self.per_address[watch.address]

    # -- what each connection is doing: mitmproxy's hooks -------------------------------------------
    def _watch(self, flow: Any) -> Watch | None:
        return self.watches.get(getattr(flow, "client_conn", None))

    def http_connect(self, flow: http.HTTPFlow) -> None:
        if (watch := self._watch(flow)) is not None:
            watch.since = time.monotonic()  # the tunnel's first request gets a head timeout of its own

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if (watch := self._watch(flow)) is not None:
            watch.served = True
            watch.reading.add(flow.id)

    def request(self, flow: http.HTTPFlow) -> None:
        if (watch := self._watch(flow)) is not None:
            watch.reading.discard(flow.id)
            watch.busy.add(flow.id)

    def response(self, flow: http.HTTPFlow) -> None:
        if flow.websocket is None:  # a WebSocket follows its 101: busy until it ends
            self._over(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._over(flow)

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        self._over(flow)

    def tcp_start(self, flow: Any) -> None:
        if (watch := self._watch(flow)) is not None:
            watch.busy.add(flow.id)

    def tcp_end(self, flow: Any) -> None:
        self._over(flow)

    def tcp_error(self, flow: Any) -> None:
        self._over(flow)

    def _over(self, flow: Any) -> None:
        if (watch := self._watch(flow)) is None:
            return
        watch.reading.discard(flow.id)
        watch.busy.discard(flow.id)
        if not watch.reading and not watch.busy:
            watch.since = time.monotonic()

    # -- timeouts ---------------------------------------------------------------------------------
    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            try:
                self.sweep(time.monotonic(), time.time())
                self.report(time.monotonic())
            except Exception:  # never let the sweeper die: the timeouts would stop
                log.exception("gateway: the connection sweep failed")

    def sweep(self, now: float, wall: float) -> None:
        """Close every connection past its timeout (module docstring)."""
        header, idle, body = self._timeouts
        for client, watch in list(self.watches.items()):
            lingering = early_answer.lingering.get(client)
            if lingering is not None:
                if now - lingering > limits.LINGER_SECONDS:
                    self._close(watch, "lingered after an answer given before its body")
                continue
            if watch.busy:
                continue
            if watch.reading:
                last = watch.handler.timeout_watchdog.last_activity  # time.time() of its last event
                if body > 0 and wall - last > body:
                    self._close(watch, f"paused its request body for {body:g} s (gateway_body_timeout)")
            elif watch.served:
                if idle > 0 and now - watch.since > idle:
                    self._close(watch, f"sent no request for {idle:g} s (gateway_keepalive_timeout)")
            elif header > 0 and now - watch.since > header:
                self._close(watch, f"sent no whole request head within {header:g} s (gateway_header_timeout)")

    def _close(self, watch: Watch, why: str) -> None:
        self.closed[(why, watch.address)] += 1
        self.leave(watch.handler)
        io = watch.handler.transports.get(watch.handler.client)
        if io is not None and io.handler is not None:
            io.handler.cancel(f"gateway: {why}")
        elif io is not None and io.writer is not None:
            io.writer.close()

    def report(self, now: float) -> None:
        """At most one line per kind every `REPORT_SECONDS`: how many, why, from where."""
        if now - self._reported < REPORT_SECONDS:
            return
        self._reported = now
        for what, counted in (("refused", self.refused), ("closed", self.closed)):
            by_reason: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
            for (reason, address), n in counted.items():
                by_reason[reason][address] += n
            for reason, addresses in by_reason.items():
                top = ", ".join(f"{a} ({n})" for a, n in addresses.most_common(5))
                more = f" and {len(addresses) - 5} more addresses" if len(addresses) > 5 else ""
                log.warning("gateway: %s %d connection(s) in %g s: %s; from %s%s", what,
                            sum(addresses.values()), REPORT_SECONDS, reason if what == "closed" else
                            f"past {reason}", top, more)
            counted.clear()


def _quiet(previous: Any, connections: Connections) -> Any:
    """The loop's exception handler, with asyncio's "out of file descriptors" errors (one per
    failed accept, with a traceback) counted and said by the connections' report instead."""
    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            connections.refused[("the process's descriptor limit (accept failed)", "?")] += 1
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler._gateway_quiet = True  # type: ignore[attr-defined]
    return handler
