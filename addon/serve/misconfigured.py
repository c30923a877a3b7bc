"""Answers for a setup that is wrong, each in the client's own error shape with the fix in its
message, and one console line (docs/console.md "When a setup is wrong"):

- a request sent to the proxy as if it were the API, in regular mode (`Misdirected`, an addon):
  mitmproxy would forward it to itself and answer `Request destination unknown`; the client's
  `--mode reverse:<its API>` is named;
- a model no route takes, passed on untranslated, whose destination cannot be reached
  (`unrouted_unreachable`, from addon/patches/unrouted.py): mitmproxy would answer its HTML 502; the
  route to add is named;
- a route whose key variable is unset or empty (`key_missing`): the request would go without a
  credential and come back as the vendor's 401; it is refused 400, naming the variable and the option.

The client's own API (for the mode to name) comes from its client dialect's entry
(translators/client_dialects.py `hosts`; the default client's is OpenAI's, addon/serve/client_facts.py).
"""

from __future__ import annotations

import fnmatch
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, http
from mitmproxy.proxy.mode_specs import RegularMode

from addon.observe import flowinfo
from addon.routes.routing import Route
from addon.serve import client_facts
from addon.serve.answers import answer, error_response
from addon.serve.flow import FlowCtx, Flows
from addon.serve.refusal import Refusal
from addon.upstream import auth
from translators import client_dialects as registry
from translators.client_dialects import ClientDialect

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""Names of this machine a request's host may use for the proxy's own address (as mitmproxy's
`proxyserver` tells a request to itself, `server_connect`)."""


# -- a request to the proxy itself, in regular mode ----------------------------------------------
class Misdirected:
    """Placed after the claims (addon/serve/claim.py): a request the gateway takes on (its usage,
    its catalog, a `gateway_match` of any host) is served as it is; any other one that names the
    proxy's own address as its destination, in regular mode, is answered 421 here."""

    name = "gateway-misdirected"

    def __init__(self, flows: Flows) -> None:
        self.flows = flows

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or self.flows.live(flow) is not None or flow.is_replay:
            return
        if to_itself(flow):
            speaks = speaker(flow)
            message = not_a_proxy_request(flow, speaks)
            flow.metadata[flowinfo.KEY] = flowinfo.record("-", refused=message)
            if speaks.name != registry.DEFAULT:
                flow.metadata[flowinfo.CLIENT_DIALECT] = speaks.name
            # an upgrade gets 426, on which Codex tries its WebSocket once and then POSTs (docs/codex.md)
            upgrade = flow.request.headers.get("upgrade", "").lower() == "websocket"
            answer(flow, error_response(speaks, 426 if upgrade else 421, "misdirected_request", message))


def to_itself(flow: http.HTTPFlow) -> bool:
    """A regular-mode request whose destination is the proxy's own listening address: sent to the
    proxy as if it were the API (a relative URL, e.g. a client whose base URL is the proxy)."""
    client = flow.client_conn
    if not isinstance(getattr(client, "proxy_mode", None), RegularMode) or not client.sockname:
        return False
    own_host, own_port = client.sockname[0], client.sockname[1]
    host = flow.request.host.strip("[]").lower()
    return flow.request.port == own_port and (host in LOOPBACK_NAMES or host == own_host)


def speaker(flow: http.HTTPFlow) -> ClientDialect:
    """The client dialect a request's path (and marker headers) says it is, else the default's."""
    path = flow.request.path.split("?", 1)[0].rstrip("/") or "/"
    for name in registry.names():
        speaks = registry.get(name)
        if name == registry.DEFAULT or not any(fnmatch.fnmatchcase(path, p) for p in speaks.paths):
            continue
        if path in speaks.turn_paths or any(h in flow.request.headers for h in speaks.marker_headers):
            return speaks
    return registry.get(registry.DEFAULT)


def own_api(speaks: ClientDialect) -> str:
    """The origin of the client's own API: its entry's first host, the default client's OpenAI."""
    if speaks.hosts:
        return f"https://{speaks.hosts[0]}"
    parts = urlsplit(client_facts.RESPONSES_URL)
    return f"{parts.scheme}://{parts.netloc}"


def not_a_proxy_request(flow: http.HTTPFlow, speaks: ClientDialect) -> str:
    here = f"{flow.request.host}:{flow.request.port}"
    return (f"the gateway runs as a regular proxy (no --mode) and was sent a request as if it were the API: "
            f"start mitmdump with --mode reverse:{own_api(speaks)} for a client whose base URL is "
            f"http://{here}, or send the client through it as a proxy (HTTPS_PROXY=http://{here})")


# -- a model no route takes, and its destination unreachable ---------------------------------------
def passed_unrouted(fc: FlowCtx) -> bool:
    """The flow went on untranslated (addon/serve/client_side.py `pass_on`), nothing answered yet."""
    return flowinfo.UNROUTED in fc.flow.metadata and fc.flow.response is None


def unrouted_unreachable(fc: FlowCtx, reason: str) -> None:
    """`fc`'s model matched no route and where it went cannot be reached: a 502 in the client's
    shape naming the model and the route to add, and the console's line (`flowinfo.UNROUTED_ERROR`)."""
    flow = fc.flow
    model = flow.metadata[flowinfo.UNROUTED]
    parts = urlsplit(flow.request.url)
    said = f"{parts.scheme}://{parts.netloc} cannot be reached ({reason}): {no_route_fix()}"
    flow.metadata[flowinfo.UNROUTED_ERROR] = said
    message = f"model {model!r} matches no gateway route, so it went on untranslated: {said}"
    # the anthropic SDK (Claude Code) would retry a 502 for minutes; it honours this header
    # (docs/claude-code.md "Errors"); Codex retries it still (docs/codex.md "Errors and retries")
    answer(flow, error_response(fc.speaks, 502, "no_route", message, headers={"x-should-retry": "false"}))


def no_route_fix() -> str:
    """What to write so every model has a route, in the words of the options in use."""
    config = _option("gateway_config")
    if config:
        return (f'add a [[route]] with model = "*" (or the model\'s name) at the end of {config} '
                "(gateway_config)")
    return "end gateway_model with *=MODEL (e.g. --set gateway_model='*=MODEL') to route every model"


# -- a key variable not set -----------------------------------------------------------------------
def key_missing(route: Route) -> Refusal | None:
    """A route that names a key variable (`key_env`) which is unset or empty, and would so send no
    credential at all (a signing dialect signs without it; docs/options.md "Credentials follow the
    route"): refused before anything is sent, naming the variable and where it is named. A 400,
    which neither Codex nor Claude Code retries: each shows the message at once, where a 401 is
    retried (Codex 6 times, Claude Code for minutes; docs/console.md "When a setup is wrong")."""
    if not route.key_env or auth.read_key(route.key_env) or route.dialect.signing is not None:
        return None
    if route.deployments or route.fallbacks:  # a pool: each deployment's key is its attempt's
        return None
    if _option("server_replay"):  # answered from saved flows (`--server-replay`, `./run demo`): no key needed
        return None
    return Refusal(400, "upstream_key_missing",
                   f"the gateway has no key for {route.base_url}: ${route.key_env} is not set or empty "
                   f"in the gateway's environment; export it before starting mitmdump, or name another "
                   f"variable with {key_option()}")


def key_option() -> str:
    config = _option("gateway_config")
    return f"key_env in {config} (gateway_config)" if config else "--set gateway_key_env=VARIABLE"


def _option(name: str) -> Any:
    try:
        return getattr(ctx.options, name) if name in ctx.options else None
    except AttributeError:  # no master (a unit test without one)
        return None


def unsent_key(route: Route) -> str | None:
    """A route that sends no key to its base URL while its dialect's own variable is set: the
    variable goes only to the dialect's own public host (docs/options.md "Credentials follow the
    route"), so this says how to send it here; None otherwise."""
    if route.key_env or route.dialect.signing is not None or auth.takes_client_credentials(route.dialect,
                                                                                          route.base_url):
        return None
    variable = route.dialect.vendor.key_env
    if not variable or not auth.read_key(variable):
        return None
    option = (f"key_env = \"{variable}\" in its [[route]]" if _option("gateway_config")
              else f"--set gateway_key_env={variable}")
    own = f"the {route.dialect.name} dialect's own host"
    return f"${variable} is set but goes only to {own}; {option} sends it here"


def with_unsent_key(route: Route | None, status: int, body: dict[str, Any], info: dict[str, Any]) -> None:
    """An upstream's 401 or 403 to a route that sent no key (`unsent_key`): the client's error and
    the flow's notes say what to set, after the upstream's own message."""
    if route is None or status not in (401, 403) or (hint := unsent_key(route)) is None:
        return
    info["notes"].append(f"the gateway sent no key: {hint}")
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        error["message"] += f" (the gateway sent no key: {hint})"
