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
import functools
from typing import TYPE_CHECKING

from mitmproxy import http

from addon.observe import flowinfo
from addon.routes import catalog
from addon.serve import client_side, paths
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
    flows = services.flows
    if flowinfo.KEY in flow.metadata:
        if flow.is_replay == "request" and flow.live:
            return flows.open(flow, speaks_of(flow.metadata), replay=True)
        return None
    # a variant of a path the gateway serves (`//v1/responses`, `/v1/Responses`) is served as it,
    # read as the upstream's server would read it (addon/serve/paths.py)
    paths.settle(flow, gateway_literals(services.router.match), lambda f: _claimed(services, f) is not None)
    found = _claimed(services, flow)
    if found is None:
        return None
    speaks, kind, endpoint = found
    return flows.open(flow, speaks, kind=kind, endpoint=endpoint)


@functools.lru_cache(maxsize=16)
def gateway_literals(match: tuple[str, ...]) -> frozenset[str]:
    """The route literals of every path the gateway serves under `gateway_match` (`match`): those
    patterns, each client dialect's paths, the store's endpoints, the model catalog and
    `/gateway/usage` (addon/serve/paths.py `literals`)."""
    dialect_paths = [p for name in client_registry.names() for p in client_registry.get(name).paths]
    return paths.literals((*match, *dialect_paths, *rest.PATHS, catalog.GATEWAY_PATH, catalog.CHATGPT_PATH))


def _claimed(services: Services, flow: http.HTTPFlow) -> tuple[ClientDialect, Kind, str | None] | None:
    """What the gateway takes this request on as (its client dialect, its kind, its store endpoint),
    from its method, host and path alone; None when it does not. Reads the flow, changes nothing."""
    router, request = services.router, flow.request
    path, method = client_side.path_of(flow), request.method
    speaks = client_side.claim(flow, router)
    if speaks is not None:
        return speaks, _client_kind(speaks, method, path), None
    host = request.pretty_host  # read only past a client dialect's claim: it parses the Host header
    default = client_registry.get(client_registry.DEFAULT)
    if catalog.catalog_request(method, host, request.path) is not None:
        return default, "catalog", None
    if rest.is_usage(request.path):
        return default, "usage", None
    matched = router.matches(host, request.path)
    if matched and request.headers.get("upgrade", "").lower() == "websocket":
        return default, "websocket", None
    endpoint = rest.endpoint(router.match, host, request.path)
    if endpoint == "responses/compact":
        return default, "compaction_endpoint" if method == "POST" else "other", endpoint
    if endpoint is not None:
        return default, "store", endpoint
    if matched:
        return default, "turn" if method == "POST" else "other", None
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
