"""Clients other than Responses (Claude Code and the anthropic SDK: the `messages` client dialect),
served through the same routes, reports, captures, limits and client keys as Codex
(docs/claude-code.md "Through the gateway").

What is particular to a client dialect comes from its entry in `translators/client_dialects.py`
(its paths, its own vendor's hosts, its credential headers, its models page and entry, its count
answer and estimate); this module names no client and no vendor. addon/serve/claim.py asks `claim`
(is this request such a client's), the pipeline (addon/serve/pipeline.py) answers its models
endpoints and estimated token counts with the functions here, each in the client's own shape
(the upstream's own count is read in addon/serve/upstream_answer.py).

Client dialects defined outside the package: a module `$GATEWAY_DIALECTS` names may define a
`CLIENT_DIALECT` (addon/routes/plugins.py `load_extra`), registered as the shipped ones are.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ReverseMode

from addon.observe import flowinfo
from addon.routes.routing import Route, Router
from addon.serve import paths
from addon.serve.answers import answer, json_response
from addon.serve.flow import speaks_of
from translators import client_dialects as registry
from translators.client_dialects import ClientDialect, ListedModel, TokenCount

METADATA = flowinfo.CLIENT_DIALECT


def path_of(flow: http.HTTPFlow) -> str:
    """The request's path, its query cut (what an entry's `paths` are matched against)."""
    return flow.request.path.split("?", 1)[0].rstrip("/") or "/"


def _reverse(flow: http.HTTPFlow) -> bool:
    return isinstance(getattr(flow.client_conn, "proxy_mode", None), ReverseMode)


def claim(flow: http.HTTPFlow, router: Router) -> ClientDialect | None:
    """The client dialect (other than the default) whose request this is: its path is one of the
    dialect's, matched by `gateway_match` on the request's host, or in reverse mode on any host
    the listener serves (tested as if on the dialect's own host). A path another client shares
    (`/v1/models`) is the dialect's only with one of its marker headers or on its own host.
    A saved gateway flow sent again keeps the client dialect it was recorded with: its request is
    the rewritten upstream one (e.g. Anthropic's `/v1/messages` for a Codex turn), not the client's."""
    if flowinfo.KEY in flow.metadata:
        saved = speaks_of(flow.metadata)
        return saved if saved.name != registry.DEFAULT else None
    path = path_of(flow)
    host = paths.host(flow.request.pretty_host)
    for name in registry.names():
        speaks = registry.get(name)
        if not any(fnmatch.fnmatchcase(path, p) for p in speaks.paths):
            continue
        own = any(router.matches(h, path) for h in speaks.hosts) and _reverse(flow)
        if not (router.matches(host, path) or own):
            continue
        marked = any(h in flow.request.headers for h in speaks.marker_headers)
        if path in speaks.turn_paths or marked or host in speaks.hosts:
            return speaks
    return None


def viewed(flow_metadata: dict[str, Any]) -> tuple[str, str]:
    """(label, view dialect) of the client's side of a saved flow, for addon/observe/views.py: the
    default client dialect's unless the flow names another."""
    speaks = speaks_of(flow_metadata)
    return speaks.label, speaks.view


def pass_on(flow: http.HTTPFlow, speaks: ClientDialect, model: object) -> None:
    """A model no route takes goes on untouched (the console says so), to the client's own vendor;
    to any other host (a reverse target that is not the client's API) without the client's own
    credentials, which belong to its vendor alone."""
    flow.metadata[flowinfo.UNROUTED] = model
    if flow.request.scheme == "https" and flow.request.pretty_host in speaks.hosts:
        return
    for name in speaks.credentials:
        flow.request.headers.pop(name, None)


def answer_count(flow: http.HTTPFlow, counts: TokenCount, route: Route, translation: Any,
                 info: dict[str, Any]) -> None:
    """An estimate of the input tokens of the request the upstream would have been sent, by the
    client dialect's own rule (docs/claude-code.md "Token counts"); the flow's notes say so."""
    flowinfo.merge(info, translation)
    info["notes"].append(f"count_tokens: estimated {counts.estimated} of the {route.dialect.name} "
                         "request; the upstream was not asked")
    answer(flow, json_response(200, counts.answer(counts.estimate(translation.body))))


def listed(router: Router, names: tuple[str, ...]) -> list[ListedModel]:
    """The model names a client can send that a route takes, in the order of the routes, each with
    the route that takes it (the first whose pattern matches it, as `Router.route` picks): every
    route pattern that is a plain name, and the names the client sends by default (`names`: for
    Claude Code its default, small and fast models) that a pattern with a wildcard takes, so a
    client that picks only from the list can pick them (docs/claude-code.md "Models")."""
    out: dict[str, ListedModel] = {}
    for route in router.routes:
        wild = any(c in route.pattern for c in "*?[")
        for name in [n for n in names if fnmatch.fnmatchcase(n, route.pattern)] if wild else [route.pattern]:
            taken = router.route(name)
            if taken is not None and name not in out:
                out[name] = ListedModel(name, taken.dialect.name, taken.model or name)
    return list(out.values())


def answer_models(flow: http.HTTPFlow, router: Router, speaks: ClientDialect) -> None:
    assert speaks.models is not None
    answer(flow, json_response(200, speaks.models.page(listed(router, speaks.models.names))))


def answer_model(flow: http.HTTPFlow, router: Router, speaks: ClientDialect, model: str) -> None:
    """One routed model; a model no route takes goes on to the client's own vendor untouched."""
    assert speaks.models is not None
    route = router.route(model)
    if route is None:
        pass_on(flow, speaks, model)
        return
    answer(flow, json_response(200, speaks.models.entry(ListedModel(model, route.dialect.name,
                                                                    route.model or model))))
