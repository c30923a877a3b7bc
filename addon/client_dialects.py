"""Clients other than Responses (Claude Code and the anthropic SDK: the `messages` client dialect),
served through the same routes, reports, captures, limits and client keys as Codex
(docs/claude-code.md "Through the gateway").

What is particular to a client dialect comes from `translators/client_dialects.py` (its paths,
its own vendor's hosts, its credential headers, its decoder, encoder and error shape); this module
names no vendor. `addon/gateway.py` calls in at three places: `claim` (is this request such a
client's), `serve` (answer it or translate it), and the `Restyle` addon (the proxy's own
answers, written in Responses' shape, re-said in the client's).
"""

from __future__ import annotations

import asyncio
import fnmatch
import math
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ReverseMode

from addon import auth, bodies, credentials, flowinfo, limits
from addon.errors import answer, error_response, json_response
from addon.routing import Route, Router
from translators import TranslatorError, translate_request, wirejson
from translators import client_dialects as registry
from translators import dialect as dialects
from translators.api import translate_error
from translators.client_dialects import ClientDialect
from translators.messages_client.context import CHARS_PER_TOKEN

METADATA = "gateway.client_dialect"
"""The client dialect of a flow the gateway took on for a client other than Responses."""
CREATED_AT = "1970-01-01T00:00:00Z"
"""`created_at` of a listed model: a route has no release date (anthropic SDK `ModelInfo`)."""
COUNTING = "gateway.count_tokens"
"""The upstream dialect whose token count a flow was sent to (its answer is read by `Restyle`)."""


def _path(flow: http.HTTPFlow) -> str:
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
        return of(flow)
    path = _path(flow)
    host = flow.request.pretty_host
    for name in registry.names():
        speaks = registry.get(name)
        if not any(fnmatch.fnmatchcase(path, p) for p in speaks.paths):
            continue
        own = any(router.matches(h, path) for h in speaks.hosts) and _reverse(flow)
        if not (router.matches(host, path) or own):
            continue
        marked = any(h in flow.request.headers for h in speaks.marker_headers)
        if path in speaks.turn_paths or marked or host in speaks.hosts:
            flow.metadata[METADATA] = speaks.name
            return speaks
    return None


def of(flow: http.HTTPFlow) -> ClientDialect | None:
    name = flow.metadata.get(METADATA)
    return registry.get(name) if isinstance(name, str) else None


def viewed(flow_metadata: dict[str, Any]) -> tuple[str, str]:
    """(label, view dialect) of the client's side of a saved flow, for addon/views.py: the
    default client dialect's unless the flow names another."""
    name = flow_metadata.get(METADATA)
    speaks = registry.TABLE.get(name if isinstance(name, str) else registry.DEFAULT,
                                registry.TABLE[registry.DEFAULT])
    return speaks.label, speaks.view


async def serve(gateway: Any, flow: http.HTTPFlow, speaks: ClientDialect) -> None:
    """Answer a claimed request: the models list and entries, a token count, or a turn
    (translated and sent to its route's upstream); a model without a route is left untouched
    (it goes on to the client's own vendor)."""
    path, method = _path(flow), flow.request.method
    if method == "GET" and path.endswith("/models"):
        _answer_models(flow, gateway.router)
        return
    if method == "GET" and "/models/" in path:
        _answer_model(flow, gateway.router, speaks, path.rsplit("/", 1)[1])
        return
    if method != "POST":
        return
    counting = path not in speaks.turn_paths
    try:
        raw = flow.request.raw_content or b""
        limit = int(gateway._max_request())
        kept = int(_option("gateway_max_kept_bytes", limit))
        encoding = flow.request.headers.get("content-encoding")
        _data, body, text = await asyncio.to_thread(bodies.read, raw, encoding, limit, kept)
    except bodies.TooLarge as exc:
        _refuse(flow, speaks, 413, "request_too_large", str(exc))
        return
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        _refuse(flow, speaks, 400, "invalid_json", f"the request body is not JSON: {exc}")
        return
    await _turn(gateway, flow, speaks, body, text, counting=counting, large=len(raw) >= limits.INLINE_BYTES)


async def replay(gateway: Any, flow: http.HTTPFlow, speaks: ClientDialect, body: dict[str, Any],
                 text: str) -> None:
    """A saved flow of this client sent again (mitmweb's Replay, `mitmdump -C`): translated afresh
    from the client's saved request with the current options (`Gateway._replay`)."""
    flow.metadata[METADATA] = speaks.name
    flow.metadata.pop(COUNTING, None)  # sent again as a turn: its answer is no count
    await _turn(gateway, flow, speaks, body, text, counting=False, large=len(text) >= limits.INLINE_BYTES,
                replay=True)


async def _turn(gateway: Any, flow: http.HTTPFlow, speaks: ClientDialect, body: Any, text: str, *,
                counting: bool, large: bool, replay: bool = False) -> None:
    """Route, admit and translate one request body; `counting`: a token count, answered here."""
    fields = body if isinstance(body, dict) else {}
    model = fields.get("model")
    route = gateway.router.route(model if isinstance(model, str) else "")
    if route is None:
        if replay:
            gateway._refuse_replay(flow, model, f"no gateway route for model {model!r} under the "
                                                "current options")
        else:
            _pass_on(flow, speaks, model)
        return
    if not await gateway.state._admit(flow, fields):  # the client's models and budgets (addon/state.py)
        return
    info: dict[str, Any] = {"upstream": route.dialect, "model": route.model or model, "client_model": model,
                            "dropped": [], "notes": [], "client_dialect": speaks.name,
                            **gateway.clients.named(flow)}
    if replay:
        info["notes"].append("replayed: translated again from the saved client request")
    flow.metadata[flowinfo.KEY] = info
    flow.metadata["gateway.client_request"] = text
    upstream_model = route.model or model
    caps = (await gateway.capabilities.resolve(route, upstream_model)
            if isinstance(upstream_model, str) else None)
    if caps is not None:
        info["capabilities"] = caps.capabilities.source
        info["notes"] += [caps.note] if caps.note else []
    if counting:  # count_tokens has no max_tokens; the translation needs one
        body = {**fields, "max_tokens": fields.get("max_tokens", 1), "stream": False}
    web_search = _option("gateway_web_search", "follow")

    def translate() -> Any:
        return translate_request(body, route.dialect, route.model,
                                 capabilities=caps.capabilities if caps else None,
                                 web_search=web_search, client=speaks.name)

    try:
        # a long conversation is translated beside the proxy's loop, which keeps serving the others
        translation = await asyncio.to_thread(translate) if large else translate()
    except TranslatorError as exc:
        info["refused"] = exc.message
        status, error = speaks.refusal(exc)
        answer(flow, json_response(status, error))
        return
    if counting:
        counter = dialects.get(route.dialect).count_tokens
        if counter is None:
            _answer_count(flow, route, translation, info)
        else:
            _send_count(gateway, flow, route, translation, counter, info)
        return
    gateway._retarget_translated(flow, route, translation, None,
                                 translation.model_dump(mode="json", exclude={"body"}), info)


def _pass_on(flow: http.HTTPFlow, speaks: ClientDialect, model: object) -> None:
    """A model no route takes goes on untouched (the console says so), to the client's own vendor;
    to any other host (a reverse target that is not the client's API) without the client's own
    credentials, which belong to its vendor alone."""
    flow.metadata[flowinfo.UNROUTED] = model
    if flow.request.scheme == "https" and flow.request.pretty_host in speaks.hosts:
        return
    for name in speaks.credentials:
        flow.request.headers.pop(name, None)


def _option(name: str, default: Any) -> Any:
    from mitmproxy import ctx

    return getattr(ctx.options, name, default)


def _refuse(flow: http.HTTPFlow, speaks: ClientDialect, status: int, code: str, message: str) -> None:
    flow.metadata[flowinfo.KEY] = {"upstream": "-", "model": None, "dropped": [], "notes": [],
                                   "refused": message}
    error = speaks.error_body(status, code, message)
    answer(flow, json_response(speaks.error_status(status, error), error))


def _answer_count(flow: http.HTTPFlow, route: Route, translation: Any, info: dict[str, Any]) -> None:
    """An estimate of the input tokens: the upstream body's characters at CHARS_PER_TOKEN a token
    (docs/claude-code.md "Token counts"); the flow's notes say so."""
    chars = len(wirejson.dumps(translation.body))
    flowinfo.merge(info, translation)
    info["notes"].append(f"count_tokens: estimated at {CHARS_PER_TOKEN} characters a token of the "
                         f"{route.dialect} request; the upstream was not asked")
    answer(flow, json_response(200, {"input_tokens": max(1, math.ceil(chars / CHARS_PER_TOKEN))}))


def _send_count(gateway: Any, flow: http.HTTPFlow, route: Route, translation: Any,
                counter: dialects.CountEndpoint, info: dict[str, Any]) -> None:
    """The upstream's own count: the turn as the dialect encoded it, re-shaped by its counter and
    sent to its count endpoint with the route's credentials, by the same retarget a turn takes
    (docs/claude-code.md "Token counts"); `Restyle` reads the answer."""
    path, body = counter.encode(translation.body, translation.model)
    counted = translation.model_copy(update={"path": path, "body": body, "stream": False})
    flowinfo.merge(info, translation)
    info.update(model=translation.model, url=route.base_url + path, kind="count_tokens")
    flow.metadata[COUNTING] = route.dialect
    try:
        gateway._retarget(flow, route, counted)
    except TranslatorError as exc:  # e.g. no credentials for a signed dialect
        info["error"] = exc.message
        answer(flow, json_response(exc.status, exc.to_body()))
    except Exception as exc:  # a half-rewritten request is answered here, never sent
        info["error"] = f"gateway could not address the upstream: {exc!r}"
        answer(flow, error_response(500, "server_error", info["error"]))


def _read_count(flow: http.HTTPFlow, speaks: ClientDialect, target: str) -> None:
    """The upstream's answer to a count: its tokens as `{"input_tokens": N}`, its error in the
    client's error shape (status and retry headers kept)."""
    assert flow.response is not None
    flow.metadata["gateway.done"] = True
    info = flow.metadata.setdefault(flowinfo.KEY, {"dropped": [], "notes": []})
    raw = credentials.scrub_bytes(flow.response.get_content(strict=False) or b"",
                                  credentials.secrets_of(flow))
    flow.metadata["gateway.upstream_response"] = raw
    counter = dialects.get(target).count_tokens
    status = flow.response.status_code
    if status >= 400 or counter is None:
        error = translate_error(target, status, raw, dict(flow.response.headers), client=speaks.name)
        info["error"] = f"upstream {error.status}: {error.body.get('error', {}).get('message', '')}"[:300]
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
        out.append({"type": "model", "id": route.pattern, "created_at": CREATED_AT,
                    "display_name": f"{route.pattern} ({route.dialect}: {route.model or route.pattern})"})
    return out


def _answer_models(flow: http.HTTPFlow, router: Router) -> None:
    data = _listed(router)
    page = {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}
    flow.response = json_response(200, page)
    flow.metadata["gateway.done"] = True


def _answer_model(flow: http.HTTPFlow, router: Router, speaks: ClientDialect, model: str) -> None:
    """One routed model; a model no route takes goes on to the client's own vendor untouched."""
    route = router.route(model)
    if route is None:
        _pass_on(flow, speaks, model)
        return
    flow.response = json_response(200, {"type": "model", "id": model, "created_at": CREATED_AT,
                                        "display_name": f"{model} ({route.dialect}: {route.model or model})"})
    flow.metadata["gateway.done"] = True


class Restyle:
    """The proxy's own answers to a claimed flow (a client key refused, a body too large, an
    unreachable upstream, a gateway error), written in Responses' shape by the shared code, are
    re-said in the client dialect's shape; a whole answer that failed gets the status of its
    error. Runs after the gateway's `response` hook."""

    def response(self, flow: http.HTTPFlow) -> None:
        speaks = of(flow)
        if speaks is None or flow.response is None or flow.response.stream:
            return
        target = flow.metadata.get(COUNTING)
        if isinstance(target, str) and "gateway.done" not in flow.metadata:
            _read_count(flow, speaks, target)
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
