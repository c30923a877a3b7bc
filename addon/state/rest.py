"""The store's own REST endpoints and a client's `/gateway/usage`, as a mitmproxy addon (docs/state.md
"Endpoints", docs/team.md "Usage").

`GET`/`DELETE /responses/{id}[/input_items]` and the conversations endpoints sit next to an
intercepted `.../responses` path (`endpoint`); `GET /gateway/usage` on any host the gateway
serves. Both are claimed in `requestheaders` (addon/serve/claim.py, kinds `store` and `usage`)
and answered here in `request`, from the store's thread (addon/state/storage.py; the endpoints
themselves: addon/state/endpoints.py).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from mitmproxy import ctx, http

from addon.observe import flowinfo
from addon.routes import plugins
from addon.serve import bodies
from addon.serve.answers import answer, error_response, json_response
from addon.serve.flow import speaks_of
from addon.serve.guard import guarded
from addon.state import endpoints
from addon.state.store import StoreError
from addon.team import usage
from addon.work import offload
from translators.wire import wirejson

if TYPE_CHECKING:
    from addon.serve.services import Services

_COLLECTIONS = ("responses/", "conversations")


def endpoint(match: tuple[str, ...], host: str, path: str) -> str | None:
    """For a request to a state endpoint next to an intercepted `.../responses` path, the rest
    of its path from `responses/` or `conversations` on (`responses/compact`,
    `responses/resp_1/input_items`, `conversations/conv_1/items`); else None."""
    bare = path.split("?", 1)[0].rstrip("/")
    for pattern in match:
        if not pattern.endswith("/responses"):
            continue
        base = pattern[: -len("responses")]
        target = bare if pattern.startswith("/") else f"{host}{bare}"
        for collection in _COLLECTIONS:
            if fnmatch.fnmatchcase(target, f"{base}{collection}*"):
                at = bare.rfind("/" + collection)
                return bare[at + 1:]
    return None


PATHS = ("/responses/input_items/compact", "/conversations/items", usage.PATH)
"""The literal segments of the paths answered here (addon/serve/claim.py `gateway_literals`)."""


def is_usage(path: str) -> bool:
    return path.split("?", 1)[0].rstrip("/") == usage.PATH


class StoreEndpoints:
    name = "gateway-store-endpoints"

    def __init__(self, services: Services) -> None:
        self.services = services

    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        """An awaitable for mitmproxy to await only for a flow of its own: every other flow passes
        through this hook as a plain call."""
        fc = self.services.flows.live(flow)
        if fc is None or flow.response or flow.error or fc.kind not in ("store", "usage"):
            return None
        if fc.kind == "usage":
            return guarded(flow, self.usage(flow))
        return guarded(flow, self.serve(flow, fc.endpoint)) if fc.endpoint is not None else None

    # -- the store's endpoints --------------------------------------------------------------
    async def serve(self, flow: http.HTTPFlow, rest: str) -> None:
        """GET/DELETE /responses/{id}[/input_items], the conversations endpoints. When a route
        passes through to OpenAI itself, an id the store does not know is OpenAI's: the request
        goes on untouched."""
        storage = self.services.storage
        passthrough = any(plugins.passes_through(r.dialect) for r in self.services.router.routes)
        if not storage.enabled:
            answer(flow, error_response(speaks_of(flow.metadata), 404, "not_found",
                                        "the gateway keeps no state (gateway_store=false)"))
            return
        body = await _read_body(flow)
        if body is _ANSWERED:
            return
        query = dict(flow.request.query)
        client = self.services.clients.client_of(flow).name
        try:
            result = await storage.call(endpoints.handle, flow.request.method, rest, query, body, client)
        except StoreError as exc:
            _refuse(flow, error_response(speaks_of(flow.metadata), 503, "store_unavailable", str(exc)))
            return
        if result is None or (result[0] == 404 and passthrough):
            if not passthrough:
                answer(flow, error_response(speaks_of(flow.metadata), 404, "not_found",
                                            f"no such endpoint: {flow.request.method} /{rest}"))
            return
        status, payload = result
        flow.metadata[flowinfo.KEY] = flowinfo.record("store", kind="state", **_client_info(flow))
        answer(flow, json_response(status, payload))

    # -- usage ------------------------------------------------------------------------------
    async def usage(self, flow: http.HTTPFlow) -> None:
        """`GET /gateway/usage[?from=YYYY-MM-DD&to=YYYY-MM-DD]`: the calling client's own usage
        (addon/team/usage.py)."""
        if flow.request.method != "GET":
            return
        query = dict(flow.request.query)
        days = usage.days(query.get("from"), query.get("to"), usage.today())
        if isinstance(days, str):
            _refuse(flow, error_response(speaks_of(flow.metadata), 400, "invalid_request_error", days))
            return
        name = self.services.clients.client_of(flow).name
        try:
            rows = await self.services.storage.call(lambda store: store.usage(*days, client=name))
        except StoreError as exc:
            _refuse(flow, error_response(speaks_of(flow.metadata), 503, "store_unavailable", str(exc)))
            return
        flow.metadata[flowinfo.KEY] = flowinfo.record("store", kind="usage", **_client_info(flow))
        answer(flow, json_response(200, usage.document(name, days, rows)))


async def _read_body(flow: http.HTTPFlow) -> Any:
    """A store endpoint's JSON body, read as the /responses path reads one (addon/serve/bodies.py):
    decoded within `gateway_max_request_bytes`, in a thread (a 16 KB zstd body may decode to
    gigabytes; the decoder stops at the bound). `_ANSWERED` when the flow got a 413 or 400."""
    raw = flow.request.raw_content or b""
    if not raw:
        return {}
    limit = int(ctx.options.gateway_max_request_bytes)
    try:
        _data, body, _text = await offload.in_thread(bodies.read, raw, flow.request.headers.get(
            "content-encoding"), limit, 0)
    except bodies.TooLarge as exc:
        _refuse(flow, error_response(speaks_of(flow.metadata), 413, "request_too_large", str(exc)))
        return _ANSWERED
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        message = f"the request body is not JSON: {exc}"[:300]
        _refuse(flow, error_response(speaks_of(flow.metadata), 400, "invalid_json", message))
        return _ANSWERED
    return body


_ANSWERED: Any = object()


def _client_info(flow: http.HTTPFlow) -> dict[str, str]:
    """`{"client": name}` for the record, or {} (addon/team/keys.py `identify`)."""
    name = flow.metadata.get(flowinfo.CLIENT)
    return {"client": name} if name else {}


def _refuse(flow: http.HTTPFlow, response: http.Response) -> None:
    """Answer a request the store cannot serve; the flow says why."""
    message = wirejson.loads(response.content or b"{}")["error"]["message"]
    flow.metadata[flowinfo.KEY] = flowinfo.record("-", None, client_model=None, refused=message,
                                                  **_client_info(flow))
    answer(flow, response)
