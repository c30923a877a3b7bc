"""The upstream leg as one service of the gateway (docs/pools.md "The leg, for maintainers"): the
gateway's HTTP client, the runner of legs, the loopback server mitmproxy sends a gateway flow to,
the pools' balancers, and the limits the options set.

One per gateway (addon/gateway.py `chain`). The server starts at the first flow that needs it
(`ready`), on mitmproxy's event loop; `close` at `done`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from addon.routes.routing import Deployment, Route, pool_of
from addon.upstream import policy
from addon.upstream.client import Client
from addon.upstream.leg import Leg
from addon.upstream.pool import Balancer, Pools
from addon.upstream.runner import Reply, Runner
from addon.upstream.server import LoopbackServer


class UpstreamLeg:
    def __init__(self) -> None:
        self.client = Client()
        self.runner = Runner(self.client)
        self.server = LoopbackServer()
        self.pools = Pools()
        self.limits = policy.Limits()
        """The options' limits (`gateway_retries`, ...); a route's own keys win (`limits_of`)."""

    def configure(self, *, insecure: bool, cafile: str | None, limits: policy.Limits,
                  routes: Iterable[Route] | None = None) -> None:
        """mitmproxy's upstream TLS options, the leg's limits, and the pools of the routes now
        configured (balancers of pools no route has any more are forgotten)."""
        self.client.configure(insecure=insecure, cafile=cafile or None)
        self.limits = limits
        if routes is not None:
            self.pools.keep_only(pool_of(route) for route in _every(routes))

    def balancer(self, route: Route) -> Balancer:
        deployments, fallbacks = pool_of(route)
        return self.pools.balancer(deployments, fallbacks)

    def limits_for(self, route: Route) -> policy.Limits:
        return policy.limits_of(route, self.limits)

    async def ready(self) -> str:
        """The loopback server's base URL, started at first use."""
        await self.server.start()
        return self.server.base_url

    def issue(self, leg: Leg) -> str:
        """The path (`/<ticket>`) mitmproxy asks the loopback server for this leg's answer."""

        async def answer() -> Reply:
            return await self.runner.answer(leg)

        return self.server.issue(answer)

    def discard(self, path: str) -> None:
        """The flow was answered otherwise (a server replay): its ticket is forgotten."""
        self.server.tickets.discard(path.lstrip("/"))

    async def close(self) -> None:
        await self.server.close()
        await self.client.close()


def _every(routes: Iterable[Route]) -> Sequence[Route]:
    """The routes and their summarizers (a compaction goes to the summarizer's pool)."""
    out: list[Route] = []
    for route in routes:
        out.append(route)
        if route.summarizer is not None:
            out.append(route.summarizer)
    return out


def first(route: Route) -> Deployment:
    """The deployment a flow's request shows before any attempt (the pool's first)."""
    return pool_of(route)[0][0]
