"""What goes through a team gateway without being taken on (docs/team.md "What passes").

With client keys on, a request the gateway does not take on (not a turn, store endpoint, catalog
or usage path, addon/serve/paths.py having read its path as the server would) is not the
gateway's to serve, but it still arrives with whatever credentials the client holds, the gateway
key among them, and mitmproxy would carry it anywhere the client names. So:

- In reverse mode it is refused (404 `not_served`), key or not: the one host behind the listener
  gets only what the gateway serves, unless `gateway_pass` lists the path.
- Where the client names the host (regular and upstream modes, and the others but reverse), it
  passes with a client key (the proxy password, on the request or on the CONNECT of its tunnel,
  or a key as a bearer token or `x-api-key`), or when `gateway_pass` lists it; otherwise it is
  `407` with `Proxy-Authenticate`, which an HTTP client answers with the proxy password.
- A CONNECT passes with the proxy password, to a host the gateway serves (each request inside is
  then checked, a turn by its key, anything else by this rule), or to a host `gateway_pass`
  lists; otherwise 407, and no tunnel is opened.
- What passes never carries a gateway key onward: the proxy password and any bearer or
  `x-api-key` holding a client key (or anything shaped as one, `gwk-...`) are removed first.

Without client keys nothing changes: every request the gateway does not take on passes as it
would without the gateway (a personal gateway listens on loopback: docs/team.md).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Sequence
from typing import Any

from mitmproxy import ctx, exceptions, http
from mitmproxy.proxy.mode_specs import ProxyMode, RegularMode, ReverseMode, UpstreamMode

from addon.observe import flowinfo
from addon.serve import paths
from addon.serve.flow import Flows
from addon.team import keys
from addon.team.clients_file import KEY_PREFIX

log = logging.getLogger(__name__)

REALM = 'Basic realm="dialect-gateway"'
"""`Proxy-Authenticate` of a 407: the client answers with its proxy password (RFC 9110 11.7.1)."""
_KEY_HEADERS = ("authorization", "x-api-key")


def parse(entries: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    """`host`, `host/path` or `/path` (fnmatch patterns) -> (host pattern, path pattern or None:
    every path); a host is read as DNS reads it."""
    found = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        if entry.startswith("/"):
            found.append(("*", entry))
            continue
        host, slash, path = entry.partition("/")
        if not host or any(c in host for c in ":@ "):
            raise exceptions.OptionsError(f"gateway_pass entry {entry!r}: write a host (pypi.org, "
                                          "*.example.com), host/path or /path, without a port")
        found.append((paths.host(host), "/" + path if slash else None))
    return tuple(found)


class Passing:
    """An addon after the client keys (addon/gateway.py `chain`): it reads who a request is from
    them, and sees only what the gateway did not claim (addon/serve/claim.py)."""

    name = "gateway-passing"

    def __init__(self, gate: keys.Keys, flows: Flows, gateway_hosts: Callable[[], tuple[str, ...]]) -> None:
        self.gate = gate
        self.flows = flows
        self.gateway_hosts = gateway_hosts
        """Host patterns the gateway serves paths on (gateway_match, client dialects' hosts)."""
        self.listed: tuple[tuple[str, str | None], ...] = ()

    def load(self, loader: Any) -> None:
        loader.add_option("gateway_pass", Sequence[str], [],
                          "With gateway_clients: what passes without a client key, though the "
                          "gateway does not serve it: host, host/path or /path patterns (fnmatch). "
                          "Anything else the gateway does not serve is refused (reverse mode) or "
                          "needs a client key (407; regular mode).")

    def configure(self, updated: set[str]) -> None:
        if "gateway_pass" in updated:
            self.listed = parse(ctx.options.gateway_pass)

    def running(self) -> None:
        if not self.gate.on:
            return
        modes = [ProxyMode.parse(spec) for spec in ctx.options.mode]
        listed = ", ".join(ctx.options.gateway_pass) or "nothing"
        if any(isinstance(m, ReverseMode) for m in modes):
            log.info("gateway_clients: requests the gateway does not serve are refused; passing "
                     "through to the reverse target: %s", listed)
        if any(not isinstance(m, ReverseMode) for m in modes):
            log.info("gateway_clients: requests and tunnels without a client key get 407; tunnels to "
                     "%s are opened for the requests inside, each checked; passing without a key: %s",
                     ", ".join(self.gateway_hosts()) or "no host", listed)
        if any(host == "*" and path in (None, "/*", "*") for host, path in self.listed):
            log.warning("gateway_pass lets everything through without a client key: anyone who reaches "
                        "the gateway uses it as an open proxy")

    # -- checks --------------------------------------------------------------------------------
    def passes(self, host: str, path: str | None) -> bool:
        """`gateway_pass` lists `host` and `path`. A tunnel (`path` None) is opened to a host an
        entry names (its requests are checked inside, path and all); a `/path` entry, which names
        no host, opens none."""
        host = paths.host(host)
        for host_pattern, path_pattern in self.listed:
            if not fnmatch.fnmatchcase(host, host_pattern):
                continue
            if path is None:
                if path_pattern is None or host_pattern != "*":
                    return True
            elif path_pattern is None or fnmatch.fnmatchcase(path, path_pattern):
                return True
        return False

    def serves(self, host: str) -> bool:
        host = paths.host(host)
        return any(fnmatch.fnmatchcase(host, pattern) for pattern in self.gateway_hosts())

    def http_connect(self, flow: http.HTTPFlow) -> None:
        """A CONNECT with no client key, to a host neither the gateway serves nor `gateway_pass`
        lists, is 407: no tunnel is opened (after `Keys.http_connect`, which named its client)."""
        if not self.gate.on or flow.response is not None:
            return
        if self.gate.tunnel_client(flow.client_conn) is not None:
            return
        host = flow.request.host
        if self.serves(host) or self.passes(host, None):
            return
        _refuse_unknown(flow, 407)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response or flow.error or self.flows.live(flow) is not None:
            return  # answered, or claimed: the gateway serves it
        self.check(flow)

    def check(self, flow: http.HTTPFlow) -> bool:
        """A request the gateway does not take on: refused (True: answered), or passed on without
        any gateway key. Nothing happens without client keys, or for the operator's replays."""
        if not self.gate.on or flow.is_replay:
            return False
        request = flow.request
        path = paths.canonical(request.path).partition("?")[0]
        listed = self.passes(request.host, path)
        mode = getattr(flow.client_conn, "proxy_mode", None)
        client = self.gate.key_holder(flow)
        _strip_keys(request.headers, self.gate)
        if listed:
            return False
        if isinstance(mode, ReverseMode):
            if client is not None:  # the console's line names who was refused
                flow.metadata[flowinfo.CLIENT] = client.name
            keys.refuse(flow, 404, "not_served", f"the gateway does not serve {request.method} "
                        f"{_shown(path)} (its turns, store, catalog and usage only); gateway_pass lists "
                        "what passes to the reverse target")
            return True
        if client is not None:
            return False
        _refuse_unknown(flow, 407 if isinstance(mode, (RegularMode, UpstreamMode)) else 403)
        return True


def _shown(path: str) -> str:
    return path if len(path) <= 200 else path[:200] + "…"


def _refuse_unknown(flow: http.HTTPFlow, status: int) -> None:
    message = ("this gateway passes requests for its clients only: send a client key as the proxy "
               "password (HTTPS_PROXY=http://NAME:KEY@host:port)")
    headers = {"connection": "close"}
    if status == 407:
        headers["proxy-authenticate"] = REALM
    keys.refuse(flow, status, "proxy_authentication_required" if status == 407 else "not_served",
                message, headers)


def _strip_keys(headers: Any, gate: keys.Keys) -> None:
    """No gateway key goes onward: the proxy password (blanked on a CONNECT already), and a bearer
    or `x-api-key` that is a client's key or shaped as one."""
    headers.pop("proxy-authorization", None)
    for name in _KEY_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        scheme, _, token = value.partition(" ")
        key = token.strip() if name == "authorization" and scheme.lower() == "bearer" else value.strip()
        if key.startswith(KEY_PREFIX) or gate.knows(key):
            headers.pop(name, None)


def gateway_hosts(match: Sequence[str]) -> tuple[str, ...]:
    """The host patterns of `gateway_match` (`match`) and of each client dialect's own hosts: the
    hosts a tunnel may be opened to without a key, its requests checked one by one."""
    from translators import client_dialects  # the registry, as client_side.py reads it

    hosts = {paths.host(p.partition("/")[0]) for p in match if not p.startswith("/")}
    hosts.update(h for name in client_dialects.names() for h in client_dialects.get(name).hosts)
    return tuple(sorted(hosts))
