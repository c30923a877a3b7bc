"""Which requests the gateway takes on, and as what: decided once, in the first of its addons'
`requestheaders` (addon/gateway.py `chain`), from the request's method, host and path alone.

A claimed request gets its context (addon/serve/flow.py) of one kind, which every later addon
and step reads: Keys asks its client (addon/team/keys.py), the gateway answers a declared body too
large and hands an upgrade to the WebSocket endpoint, the catalog answers Codex's catalog
(addon/routes/catalog.py), the store's endpoints and `/gateway/usage` are answered in `request`
(addon/state/rest.py), and the pipeline serves the turns, counts and models (addon/serve/pipeline.py).
A request no one claims goes on untouched, with no hook of the gateway's doing anything to it.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING

from mitmproxy import http

from addon.observe import flowinfo
from addon.routes import catalog
from addon.serve import client_side
from addon.serve.flow import FlowCtx, Kind, speaks_of
from addon.state import rest
from translators import client_dialects as client_registry
from translators.client_dialects import ClientDialect

if TYPE_CHECKING:
    from addon.serve.services import Services


class Claims:
    name = "gateway-claims"

    def __init__(self, services: Services) -> None:
        self.services = services

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error:
            return
        claim(self.services, flow)


def claim(services: Services, flow: http.HTTPFlow) -> FlowCtx | None:
    """The flow's context if the gateway takes it on: a client dialect's own path (e.g. Claude
    Code's), an intercepted Responses path (`gateway_match`), a state endpoint next to one, Codex's
    catalog, `/gateway/usage`, or a saved gateway flow sent again (mitmweb's Replay, `mitmdump
    -C`); else None. A saved flow loaded with its answer is not claimed: its context is restored
    from its metadata by whichever hook asks (`Flows.get`)."""
    flows, router, request = services.flows, services.router, flow.request
    if flowinfo.KEY in flow.metadata:
        if flow.is_replay == "request" and flow.live:
            return flows.open(flow, speaks_of(flow.metadata), replay=True)
        return None
    path, host, method = client_side.path_of(flow), request.pretty_host, request.method
    speaks = client_side.claim(flow, router)
    if speaks is not None:
        return flows.open(flow, speaks, kind=_client_kind(speaks, method, path))
    default = client_registry.get(client_registry.DEFAULT)
    if catalog.catalog_request(method, host, request.path) is not None:
        return flows.open(flow, default, kind="catalog")
    if rest.is_usage(request.path):
        return flows.open(flow, default, kind="usage")
    matched = router.matches(host, request.path)
    if matched and request.headers.get("upgrade", "").lower() == "websocket":
        return flows.open(flow, default, kind="websocket")
    endpoint = rest.endpoint(router.match, host, request.path)
    if endpoint == "responses/compact":
        kind: Kind = "compaction_endpoint" if method == "POST" else "other"
        return flows.open(flow, default, kind=kind, endpoint=endpoint)
    if endpoint is not None:
        return flows.open(flow, default, kind="store", endpoint=endpoint)
    if matched:
        return flows.open(flow, default, kind="turn" if method == "POST" else "other")
    return None


def _client_kind(speaks: ClientDialect, method: str, path: str) -> Kind:
    """A client dialect's request by its path: its models list or entry, a turn on its turn paths,
    a token count on any other of its paths (docs/claude-code.md "Token counts")."""
    if method == "GET" and speaks.models is not None and any(
            fnmatch.fnmatchcase(path, p) for p in speaks.paths if "/models" in p):
        return "models"
    if method != "POST":
        return "other"
    if speaks.count is not None and path not in speaks.turn_paths:
        return "count"
    return "turn"
