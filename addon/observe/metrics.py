"""Prometheus metrics of the gateway's turns (docs/metrics.md), on a port of their own.

An addon placed after the gateway in the script's `addons` (addon/gateway.py): mitmproxy runs its
`response` and `error` hooks once the gateway's have finished, so it reads the finished flow's
record (addon/observe/facts.py) and changes nothing. `gateway_metrics` names where the scrape
endpoint listens (`PORT` or `HOST:PORT`; the host defaults to 127.0.0.1); prometheus_client serves
it from a thread of its own, so a scrape never waits for the event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from mitmproxy import ctx, exceptions, http
from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, start_http_server

from addon.observe import console, facts, labels
from addon.routes.routing import Router

log = logging.getLogger(__name__)

OPTION = "gateway_metrics"
TURN_LABELS = ("client", "route", "model", "upstream")
TTFT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
DURATION_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
TOKEN_KINDS = ("input", "cached_read", "cache_write", "output", "reasoning")
"""`input` counts every input token (cache reads and writes among them) and `output` every output
token (reasoning among them), as the usage report does; the other three say how many of those."""


def parse_listen(value: str) -> tuple[str, int] | None:
    """`9464` -> (127.0.0.1, 9464); `0.0.0.0:9464`, `[::1]:9464`; port 0: any free one (the
    start-up line names it); empty -> None (off). Raises ValueError saying what to write."""
    text = value.strip()
    if not text:
        return None
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"{OPTION} {value!r}: write a port (9464) or HOST:PORT (127.0.0.1:9464)")
    return host, int(port)


class Families:
    """The metric families, in a registry of their own (one per addon: tests run several)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.turns = Counter("gateway_turns", "Turns by client, route, model, upstream and outcome.",
                             (*TURN_LABELS, "outcome"), registry=r)
        self.tokens = Counter("gateway_tokens", "Tokens of answered turns, by kind: input and output "
                              "(all), and of those cached_read, cache_write and reasoning.",
                              (*TURN_LABELS, "kind"), registry=r)
        self.cost = Counter("gateway_cost_usd", "Cost of answered turns in USD (docs/prices.md).",
                            TURN_LABELS, registry=r)
        self.unpriced = Counter("gateway_unpriced_turns", "Answered turns with usage but no price: "
                                "their cost is missing from gateway_cost_usd_total.",
                                ("route", "model", "upstream"), registry=r)
        self.ttft = Histogram("gateway_time_to_first_token_seconds", "From the client's request to "
                              "the first streamed bytes carrying content.", ("route", "model", "upstream"),
                              buckets=TTFT_BUCKETS, registry=r)
        self.duration = Histogram("gateway_turn_duration_seconds", "From the client's request to the "
                                  "end of its answer.", ("route", "model", "upstream", "outcome"),
                                  buckets=DURATION_BUCKETS, registry=r)
        self.attempts = Counter("gateway_upstream_attempts", "Upstream attempts by route, deployment, "
                                "fallback and outcome.", ("route", "deployment", "fallback", "outcome"),
                                registry=r)
        self.dropped = Counter("gateway_dropped_fields", "Request fields dropped by the translation, by "
                               "path (indices as [*]), kind (lossy, cosmetic) and upstream.",
                               ("path", "kind", "upstream"), registry=r)
        ProcessCollector(registry=r)


class Metrics:
    """The metrics addon: families fed from finished turns, served on `gateway_metrics`."""

    name = "gateway-metrics"

    def __init__(self, router: Callable[[], Router], clock: Callable[[], float] = time.time) -> None:
        self._router = router
        self.clock = clock
        self.families = Families()
        self.names = labels.Names()
        self.clients = labels.Bounded()
        self.paths = labels.Bounded()
        self._server: Any = None
        self._listening: tuple[str, int] | None = None

    # -- options and the endpoint -------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option(OPTION, str, "",
                          "Serve Prometheus metrics on this port (PORT, or HOST:PORT; the host defaults "
                          "to 127.0.0.1); empty: off (docs/metrics.md).")

    def configure(self, updated: set[str]) -> None:
        if OPTION not in updated:
            return
        with console.option_errors():
            try:
                listen = parse_listen(getattr(ctx.options, OPTION))
            except ValueError as exc:
                raise exceptions.OptionsError(str(exc)) from None
            if listen == self._listening:
                return
            self._stop()
            if listen is None:
                return
            try:
                self._server, _ = start_http_server(listen[1], addr=listen[0],
                                                    registry=self.families.registry)
            except OSError as exc:
                raise exceptions.OptionsError(f"{OPTION}: cannot listen on {listen[0]}:{listen[1]}: "
                                              f"{exc.strerror or exc}") from None
            self._listening = listen
            host, port = listen[0], self._server.server_address[1]
            log.info(f"metrics: http://{host}:{port}/metrics" if ":" not in host
                     else f"metrics: http://[{host}]:{port}/metrics")
            if host not in ("127.0.0.1", "::1", "localhost"):
                log.warning(f"metrics listen on {host}: anyone who reaches it reads client names, "
                            "models and spend (docs/metrics.md \"The endpoint\")")

    @property
    def port(self) -> int | None:
        return None if self._server is None else int(self._server.server_address[1])

    def _stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        self._server, self._listening = None, None

    def done(self) -> None:
        self._stop()

    # -- turns ---------------------------------------------------------------------------------
    def response(self, flow: http.HTTPFlow) -> None:
        self.observe(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self.observe(flow)

    def observe(self, flow: http.HTTPFlow) -> None:
        """Counts a finished turn once (a flow may see `response` and then `error`); a flow loaded
        from a file is no new turn. With no endpoint nothing is counted: no one could read it,
        and reading a turn's record into labels cost ~1% of a paced turn (docs/metrics.md "The
        endpoint")."""
        if self._server is None or not flow.live or flow.metadata.get(OBSERVED):
            return
        try:
            turn = facts.read(flow, self.clock())
            if turn is None:
                return
            flow.metadata[OBSERVED] = True
            self._count(turn)
        except Exception as exc:  # a metric must never fail the flow
            log.warning(f"metrics: turn not counted: {exc!r}")

    def _count(self, turn: facts.Turn) -> None:
        f, router = self.families, self._router()
        route = self.names.route(router, turn.client_model)
        where = {"route": route.pattern if route is not None else labels.NONE,
                 "model": self.names.model(router, route, turn.model),
                 "upstream": self.names.upstream(turn.upstream)}
        who = {"client": self.clients(turn.client) if turn.client else labels.NONE, **where}
        outcome = labels.outcome(turn.outcome, facts.OUTCOMES)
        f.turns.labels(**who, outcome=outcome).inc()
        f.duration.labels(**where, outcome=outcome).observe(turn.duration)
        if turn.stream and (ttft := turn.time_to_first_token) is not None:
            f.ttft.labels(**where).observe(ttft)
        if (tokens := turn.tokens) is not None:
            counted = {"input": tokens.input_total, "cached_read": tokens.cache_read,
                       "cache_write": tokens.cache_write_5m + tokens.cache_write_1h,
                       "output": tokens.output, "reasoning": tokens.reasoning}
            for kind, value in counted.items():
                f.tokens.labels(**who, kind=kind).inc(value)
            if turn.cost_usd is not None:
                f.cost.labels(**who).inc(max(0.0, turn.cost_usd))
            else:
                f.unpriced.labels(**where).inc()
        for attempt in turn.attempts:
            deployment = self.names.deployment(route, attempt.deployment)
            f.attempts.labels(route=where["route"], deployment=deployment,
                              fallback="true" if attempt.fallback else "false",
                              outcome=labels.outcome(attempt.outcome, facts.ATTEMPT_OUTCOMES)).inc()
        for kind, paths in (("lossy", turn.lossy), ("cosmetic", turn.cosmetic)):
            for dropped in paths:
                f.dropped.labels(path=self.paths(labels.path(dropped)), kind=kind,
                                 upstream=where["upstream"]).inc()


OBSERVED = "gateway.observed"
"""Set on a flow once the metrics counted it."""
