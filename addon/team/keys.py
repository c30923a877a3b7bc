"""Who is calling: the gateway's own client keys, as a mitmproxy addon shaped like mitmproxy's
`proxyauth` (`http_connect`, `requestheaders` -> 401; docs/team.md).

With `gateway_clients=clients.toml`, every request the gateway takes on (a translated turn, a store
endpoint, the model catalog, `/gateway/usage`: the flows addon/serve/claim.py claimed, which runs
before this addon) must carry one of the keys that file names: as
`Authorization: Bearer <key>` (what Codex's `env_key`, `CODEX_API_KEY` and the OpenAI SDKs' `api_key`
send), or in regular proxy mode as the proxy password (`HTTPS_PROXY=http://NAME:KEY@host:port`). The
file keeps each key's SHA-256 only, never the key; comparison is constant-time (`hmac.compare_digest`)
against every client's hash.

    [[client]]
    name = "ana"
    key_sha256 = "9f86d081..."
    models = ["gpt-5*"]          # optional: patterns of the client models this client may use
    tokens_per_day = 2000000     # optional: input + output tokens per UTC day (0: no limit)
    requests_per_minute = 60     # optional (0: no limit)

The file and its command (`python -m addon clients`): addon/team/clients_file.py. A running proxy
re-reads the file within a second of a change: a removed or rotated key is refused from then on.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions
from mitmproxy.proxy.mode_specs import ProxyMode

from addon.observe import console, flowinfo
from addon.routes.routing import is_loopback
from addon.serve.answers import answer, error_response
from addon.serve.flow import Flows, speaks_of
from addon.team import sockets
from addon.team.clients_file import Client, ClientsError, hash_key, load

log = logging.getLogger(__name__)


def match(clients: Sequence[Client], key: str) -> Client | None:
    """The client whose hash is `key`'s. Every hash is compared, each in constant time, so the
    time taken says nothing about which prefix matched, or whether any did."""
    digest = hash_key(key)
    found = None
    for client in clients:
        if hmac.compare_digest(client.key_sha256, digest):
            found = client
    return found


def presented(headers: Mapping[str, str]) -> tuple[str | None, str]:
    """The key a request presents and where: the proxy password of a `Proxy-Authorization: Basic`
    header first (regular mode: a ChatGPT-login Codex keeps its own `Authorization`), else a
    `Bearer` token in `Authorization`, else `x-api-key` (a Messages client, Claude Code's
    `ANTHROPIC_API_KEY`: docs/claude-code.md "Through the gateway")."""
    proxy = headers.get("proxy-authorization", "")
    scheme, _, token = proxy.partition(" ")
    if scheme.lower() == "basic" and token:
        try:
            _user, _, password = base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            password = ""
        if password:
            return password, "proxy-authorization"
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip(), "authorization"
    if key := headers.get("x-api-key", "").strip():
        return key, "x-api-key"
    return None, ""


# -- the proxy's side -------------------------------------------------------------------------
_RELOAD_EVERY = 1.0
"""Seconds between two looks at the clients file: a key removed is refused from then on."""


class Keys:
    """The addon: `gateway_clients`, who each claimed request is (`identify`, in
    `requestheaders`), the client of a regular-mode tunnel (`http_connect`), and the start-up
    warning for a listener others can reach (`running`). What a client may do: addon/team/budgets.py."""

    name = "gateway-keys"
    """mitmproxy names addons by class; this one must not meet another `keys`."""

    def __init__(self, flows: Flows | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.flows = flows if flows is not None else Flows()
        """The flows the gateway took on (addon/serve/claim.py): the ones whose client is asked."""
        self.clients: tuple[Client, ...] | None = None
        """None: client keys are off (every request is the one anonymous client "")."""
        self.clock = clock
        self._path = ""
        self._stamp: tuple[int, int] | None = None
        self._looked = 0.0
        self._lock = threading.Lock()
        self._connections: weakref.WeakKeyDictionary[Any, Client] = weakref.WeakKeyDictionary()
        """Regular mode: the client a CONNECT's proxy password named, for the requests inside it."""
        self.sockets = sockets.SOCKETS
        """The open WebSockets and their clients' keys (addon/team/sockets.py)."""

    @property
    def on(self) -> bool:
        return self.clients is not None

    def load(self, loader: Any) -> None:
        loader.add_option("gateway_clients", str, "",
                          "TOML file of [[client]] tables (name, key_sha256, models, tokens_per_day, "
                          "requests_per_minute): every request needs one of their keys "
                          "(python -m addon clients add NAME); empty: no client keys.")

    def configure(self, updated: set[str]) -> None:
        if "gateway_clients" not in updated:
            return
        with console.option_errors():
            self._configure()

    def _configure(self) -> None:
        path = ctx.options.gateway_clients.strip()
        if not path:
            self.clients, self._path, self._stamp = None, "", None
            return
        try:
            self._read(path)
        except ClientsError as exc:
            raise exceptions.OptionsError(str(exc)) from None

    def _read(self, path: str) -> None:
        where = Path(path).expanduser()
        try:
            stat = where.stat()
        except OSError as exc:
            raise ClientsError(f"clients file {str(where)!r} cannot be read: {exc.strerror or exc}") from None
        clients = load(path)
        self.clients, self._path, self._stamp = clients, path, (stat.st_mtime_ns, stat.st_ino)
        self._looked = self.clock()

    def _fresh(self) -> tuple[Client, ...]:
        """The clients, the file re-read when it changed (a key added or removed applies at once;
        a file that became unreadable keeps the last good list, and says so)."""
        assert self.clients is not None
        now = self.clock()
        if now - self._looked < _RELOAD_EVERY:
            return self.clients
        with self._lock:
            self._looked = now
            try:
                stat = Path(self._path).expanduser().stat()
                if (stat.st_mtime_ns, stat.st_ino) != self._stamp:
                    self._read(self._path)
                    log.info("gateway_clients: %d client(s) read from %s", len(self.clients), self._path)
            except (OSError, ClientsError) as exc:
                log.warning("gateway_clients: keeping the clients read before: %s", exc)
        return self.clients

    def running(self) -> None:
        if self.on:
            return
        exposed = exposed_listeners(ctx.options.mode, ctx.options.listen_host)
        if exposed:
            log.warning(EXPOSED_WARNING, ", ".join(exposed))

    def http_connect(self, flow: Any) -> None:
        """Regular mode: the CONNECT's proxy password names the client of every request inside
        the tunnel (the CONNECT itself goes nowhere; its header is blanked all the same)."""
        if not self.on or "proxy-authorization" not in flow.request.headers:
            return
        key, _ = presented(flow.request.headers)
        flow.request.headers["proxy-authorization"] = "<redacted>"
        found = match(self._fresh(), key) if key else None
        if found is not None:
            self._connections[flow.client_conn] = found

    def key_of(self, name: str) -> str | None:
        """The key hash client `name` holds now (the file re-read when it changed); None when no
        client has that name, or client keys are off."""
        if not self.on:
            return None
        return next((c.key_sha256 for c in self._fresh() if c.name == name), None)

    def tunnel_client(self, client_conn: Any) -> Client | None:
        """Regular mode: the client the CONNECT of this client connection named, if any."""
        return self._connections.get(client_conn)

    def knows(self, key: str) -> bool:
        """`key` is one of the clients' keys (compared as `match` compares)."""
        return self.on and bool(key) and match(self._fresh(), key) is not None

    def key_holder(self, flow: Any) -> Client | None:
        """The client a request names, without refusing it nor touching its headers: by the key
        it presents (proxy password, bearer, `x-api-key`), else by its tunnel's CONNECT."""
        if not self.on:
            return ANONYMOUS
        key, _ = presented(flow.request.headers)
        found = match(self._fresh(), key) if key else None
        return found if found is not None else self._connections.get(flow.client_conn)

    def requestheaders(self, flow: Any) -> None:
        """A claimed request's client, or 401 before anything is served or sent for it."""
        if flow.response or flow.error or self.flows.live(flow) is None:
            return
        self.identify(flow)

    def identify(self, flow: Any) -> Client | None:
        """Who sent a request the gateway takes on: its client (named in the flow's metadata), or
        None after answering it `401 invalid_api_key`. The key never stays in the flow: the header
        that carried it is removed, so it reaches no upstream, saved flow or capture. Off: the
        anonymous client."""
        if not self.on:
            return ANONYMOUS
        if flow.is_replay == "request" and flow.metadata.get(flowinfo.CLIENT):
            if self.sockets.revoked(flow.metadata.get(flowinfo.WEBSOCKET)):
                refuse(flow, 401, "invalid_api_key", "the client key this WebSocket was opened with was "
                       "revoked: connect again with a valid key")
                return None
            # a request of a socket (its upgrade's client), or the operator's Replay of a saved flow
            return self.client_of(flow)
        headers = flow.request.headers
        key, where = presented(headers)
        found = match(self._fresh(), key) if key else None
        if found is not None or where == "proxy-authorization":
            headers.pop(where, None)  # a gateway key: it goes no further
        else:
            # regular mode: the tunnel's proxy password names the client, and a bearer token is
            # the client's own login (ChatGPT), which a route to OpenAI itself may still need
            found = self._connections.get(flow.client_conn)
            if found is None and where:
                headers.pop(where, None)  # an unknown key, maybe a mistyped gateway key: not kept
        headers.pop("proxy-authorization", None)
        if found is None:
            # `connection: close`: a stranger keeps no connection open between refusals
            refuse(flow, 401, "invalid_api_key",
                   "Incorrect API key provided: this gateway takes only its own client keys "
                   "(gateway_clients), as the client's API key (`Authorization: Bearer`, `x-api-key`) "
                   "or the proxy password" if key else
                   "Missing gateway client key: send one of this gateway's client keys as the client's "
                   "API key (`Authorization: Bearer`, `x-api-key`: the SDKs' api_key, Codex's env_key, "
                   "Claude Code's ANTHROPIC_API_KEY), or as the proxy password in regular mode",
                   {"connection": "close"})
            return None
        flow.metadata[flowinfo.CLIENT] = found.name
        return found

    def client_of(self, flow: Any) -> Client:
        """The client `identify` found for the flow (the anonymous one when keys are off)."""
        name = flow.metadata.get(flowinfo.CLIENT, "")
        if not self.on or not name:
            return ANONYMOUS
        return next((c for c in self.clients or () if c.name == name), Client(name, "0" * 64))

    @staticmethod
    def named(flow: Any) -> dict[str, str]:
        """`{"client": name}` for the flow's metadata (`flowinfo`: its comment and log line), or {}."""
        name = flow.metadata.get(flowinfo.CLIENT)
        return {"client": name} if name else {}


ANONYMOUS = Client("", "0" * 64)
"""Every request when client keys are off: the store's rows of an install without them."""

EXPOSED_WARNING = ("the gateway listens on %s without gateway_clients: anyone who can reach it spends "
                   "your upstream keys and reads every stored conversation. Listen on 127.0.0.1 "
                   "(--listen-host 127.0.0.1) or set gateway_clients (docs/team.md)")


def exposed_listeners(modes: Sequence[str], listen_host: str) -> list[str]:
    """The listen addresses of `modes` that other machines can reach ("" is every interface)."""
    exposed = []
    for spec in modes:
        try:
            host = ProxyMode.parse(spec).listen_host(listen_host)
        except ValueError:
            continue
        if not is_loopback(host.strip("[]")):
            exposed.append(host or "every interface")
    return exposed


def refuse(flow: Any, status: int, code: str, message: str,
           headers: Mapping[str, str] | None = None) -> None:
    """Answer a request the gateway will not serve, in its client's shape; the flow's record says
    why."""
    flow.metadata[flowinfo.KEY] = {"upstream": "-", "model": None, "dropped": [], "notes": [],
                                   "refused": message, **Keys.named(flow)}
    answer(flow, error_response(speaks_of(flow.metadata), status, code, message, headers=dict(headers or {})))


