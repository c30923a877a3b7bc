"""Clients other than Responses (Claude Code and the anthropic SDK: the `messages` client dialect),
served through the same routes, reports, captures, limits and client keys as Codex
(docs/claude-code.md "Through the gateway").

What is particular to a client dialect comes from `translators/client_dialects.py` (its paths,
its own vendor's hosts, its credential headers, its decoder, encoder and error shape); this module
names no vendor. `addon/gateway.py` asks `claim` (is this request such a client's), the pipeline
(addon/serve/pipeline.py) answers its models endpoints and token counts with the functions here, and
`restyle` re-says the proxy's own answers, written in Responses' shape, in the client's.

Client dialects defined outside the package: a module `$GATEWAY_DIALECTS` names may define a
`CLIENT_DIALECT` (addon/routes/plugins.py `load_extra`), registered as the shipped ones are.
"""

from __future__ import annotations

import fnmatch
import math
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ReverseMode

from addon.observe import flowinfo
from addon.routes.routing import Route, Router
from addon.serve import paths
from addon.serve.answers import answer, json_response
from addon.serve.flow import FlowCtx, speaks_of
from addon.upstream import auth, credentials
from translators import client_dialects as registry
from translators.api import translate_error
from translators.client_dialects import ClientDialect
from translators.messages_client.context import CHARS_PER_TOKEN
from translators.wire import wirejson

METADATA = flowinfo.CLIENT_DIALECT
CREATED_AT = "1970-01-01T00:00:00Z"
"""`created_at` of a listed model: a route has no release date (anthropic SDK `ModelInfo`)."""


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


def answer_count(flow: http.HTTPFlow, route: Route, translation: Any, info: dict[str, Any]) -> None:
    """An estimate of the input tokens: the upstream body's characters at CHARS_PER_TOKEN a token
    (docs/claude-code.md "Token counts"); the flow's notes say so."""
    chars = len(wirejson.dumps(translation.body))
    flowinfo.merge(info, translation)
    info["notes"].append(f"count_tokens: estimated at {CHARS_PER_TOKEN} characters a token of the "
                         f"{route.dialect.name} request; the upstream was not asked")
    answer(flow, json_response(200, {"input_tokens": max(1, math.ceil(chars / CHARS_PER_TOKEN))}))


def read_count(fc: FlowCtx) -> None:
    """The upstream's answer to a count sent to it: its tokens as `{"input_tokens": N}`, its
    error in the client's error shape (status and retry headers kept)."""
    flow, speaks = fc.flow, fc.speaks
    assert flow.response is not None and fc.route is not None
    target = fc.route.dialect.name
    fc.mark_done()
    info = fc.info
    raw = credentials.scrub_bytes(flow.response.get_content(strict=False) or b"",
                                  credentials.secrets_of(flow))
    fc.keep_upstream_response(raw)
    codec = fc.route.dialect.codec
    counter = codec.count_tokens if codec is not None else None
    status = flow.response.status_code
    if status >= 400 or counter is None:
        error = translate_error(target, status, raw, dict(flow.response.headers), client=speaks.name)
        message = error.body["error"].get("message", "") if isinstance(error.body.get("error"), dict) else ""
        info["error"] = f"upstream {error.status}: {message}"[:300]
        flow.response = json_response(error.status, error.body, error.headers)
    else:
        try:
            tokens = counter.parse(wirejson.loads(raw))
        except (ValueError, RecursionError) as exc:
            info["error"] = f"gateway could not read the upstream's count: {exc}"[:300]
            body = speaks.error_body(502, "upstream_protocol_error", info["error"])
            flow.response = json_response(speaks.error_status(502, body), body)
        else:
            info.setdefault("notes", []).append(f"count_tokens: counted by the {target} upstream")
            flow.response = json_response(200, {"input_tokens": tokens})
    auth.redact_request(flow.request.headers)
    credentials.scrub_flow(flow)
    flowinfo.describe(flow)


def _listed(router: Router) -> list[dict[str, Any]]:
    """The routed model names a client can send: every route pattern with no wildcard."""
    out = []
    for route in router.routes:
        if any(c in route.pattern for c in "*?["):
            continue
        out.append({"type": "model", "id": route.pattern, "created_at": CREATED_AT, "display_name":
                    f"{route.pattern} ({route.dialect.name}: {route.model or route.pattern})"})
    return out


def answer_models(flow: http.HTTPFlow, router: Router) -> None:
    data = _listed(router)
    page = {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}
    flow.response = json_response(200, page)
    flow.metadata[flowinfo.DONE] = True


def answer_model(flow: http.HTTPFlow, router: Router, speaks: ClientDialect, model: str) -> None:
    """One routed model; a model no route takes goes on to the client's own vendor untouched."""
    route = router.route(model)
    if route is None:
        pass_on(flow, speaks, model)
        return
    shown = f"{model} ({route.dialect.name}: {route.model or model})"
    flow.response = json_response(200, {"type": "model", "id": model, "created_at": CREATED_AT,
                                        "display_name": shown})
    flow.metadata[flowinfo.DONE] = True


def restyle(flow: http.HTTPFlow, speaks: ClientDialect) -> None:
    """The proxy's own answers to a claimed flow (a client key refused, a body too large, an
    unreachable upstream, a gateway error), written in Responses' shape by the shared code, are
    re-said in the client dialect's shape; a whole answer that failed gets the status of its
    error. The last step of the gateway's `response` hook."""
    if speaks.name == registry.DEFAULT or flow.response is None or flow.response.stream:
        return
    try:
        body = wirejson.loads(flow.response.content or b"")
    except (ValueError, RecursionError):
        return
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return
    status = flow.response.status_code
    if body.get("type") == "error":  # already the client's shape: a failed whole answer's status
        if status == 200:
            flow.response.status_code = speaks.answer_status(body)
        return
    error = body["error"]
    restyled = speaks.error_body(status, str(error.get("code") or ""), str(error.get("message") or ""))
    if restyled == body:
        return
    flow.response.status_code = speaks.error_status(status, restyled)
    flow.response.content = wirejson.dumps(restyled)
