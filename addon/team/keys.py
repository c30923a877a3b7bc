"""Who is calling: the gateway's own client keys (docs/team.md).

With `gateway_clients=clients.toml`, every request the gateway takes on (a translated turn, a store
endpoint, the model catalog, `/gateway/usage`) must carry one of the keys that file names: as
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

`python -m addon clients add NAME --file clients.toml` makes a key, prints it once and appends its
hash; `rotate NAME`, `remove NAME` and `list` too. A running proxy re-reads the file within a
second of a change: a removed or rotated key is refused from then on.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import collections
import fnmatch
import hashlib
import hmac
import logging
import math
import re
import secrets
import sys
import threading
import time
import tomllib
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions
from mitmproxy.proxy.mode_specs import ProxyMode

from addon.observe import flowinfo
from addon.routes.routing import is_loopback
from addon.serve.answers import answer, error_response
from addon.serve.flow import speaks_of

KEY_PREFIX = "gwk-"
"""Gateway keys start with this, so a leaked one is recognised (and told apart from a vendor's)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
_HASH = re.compile(r"^[0-9a-f]{64}$")
_FIELDS = {"name", "key_sha256", "models", "tokens_per_day", "requests_per_minute"}
log = logging.getLogger(__name__)
METADATA = "gateway.client"
"""flow.metadata key: the name of the client a flow belongs to."""


class ClientsError(ValueError):
    """A clients file that cannot be used; the message says what to change."""


@dataclass(frozen=True, slots=True)
class Client:
    name: str
    key_sha256: str
    models: tuple[str, ...] = ()
    """fnmatch patterns of the client model names this client may ask for; empty: any."""
    tokens_per_day: int = 0
    """Input + output tokens per UTC day (usage recorded in the store); 0: no limit."""
    requests_per_minute: int = 0
    """Requests per rolling minute in this gateway process; 0: no limit."""

    def allows(self, model: str) -> bool:
        return not self.models or any(fnmatch.fnmatchcase(model, p) for p in self.models)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def parse(text: str, where: str = "clients file") -> tuple[Client, ...]:
    """The `[[client]]` tables of a clients file, checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClientsError(f"{where} is not TOML: {exc}") from None
    tables = data.get("client", [])
    if set(data) - {"client"} or not isinstance(tables, list):
        raise ClientsError(f"{where}: write [[client]] tables only")
    found: list[Client] = []
    for n, table in enumerate(tables):
        at = f"{where}: client[{n}]"
        if not isinstance(table, dict):
            raise ClientsError(f"{at} is not a table")
        if unknown := set(table) - _FIELDS:
            raise ClientsError(f"{at}: unknown field(s) {', '.join(sorted(unknown))}; known: "
                               f"{', '.join(sorted(_FIELDS))}")
        name, digest = table.get("name"), table.get("key_sha256")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ClientsError(f"{at}: name must be 1-64 letters, digits, '.', '_', '@' or '-'")
        if not isinstance(digest, str) or not _HASH.match(digest.lower()):
            raise ClientsError(f"{at} ({name}): key_sha256 must be 64 hex digits "
                               "(python -m addon clients add)")
        models = table.get("models", [])
        if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
            raise ClientsError(f"{at} ({name}): models must be a list of patterns, e.g. [\"gpt-5*\"]")
        limits = {}
        for field in ("tokens_per_day", "requests_per_minute"):
            value = table.get(field, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ClientsError(f"{at} ({name}): {field} must be a whole number >= 0 (0: no limit)")
            limits[field] = value
        found.append(Client(name, digest.lower(), tuple(models), **limits))
    names = [c.name for c in found]
    if dup := {n for n in names if names.count(n) > 1}:
        raise ClientsError(f"{where}: client name(s) used twice: {', '.join(sorted(dup))}")
    hashes = [c.key_sha256 for c in found]
    if len(set(hashes)) != len(hashes):
        raise ClientsError(f"{where}: two clients have the same key_sha256")
    return tuple(found)


def load(path: str) -> tuple[Client, ...]:
    where = Path(path).expanduser()
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClientsError(f"clients file {str(where)!r} cannot be read: {exc.strerror or exc}") from None
    return parse(text, f"clients file {str(where)!r}")


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


# -- budgets ----------------------------------------------------------------------------------
class RateWindow:
    """Requests per rolling minute per client, in this process (docs/team.md "Budgets"): the
    times of the last minute's requests, oldest first, at most the limit kept."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._seen: dict[str, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, name: str, per_minute: int) -> float:
        """0 when the request may go (and it is counted), else the seconds until it may."""
        if per_minute <= 0:
            return 0.0
        now = self.clock()
        with self._lock:
            seen = self._seen.setdefault(name, collections.deque())
            while seen and seen[0] <= now - 60.0:
                seen.popleft()
            if len(seen) >= per_minute:
                return max(seen[0] + 60.0 - now, 0.001)
            seen.append(now)
            return 0.0


def retry_after(seconds: float) -> str:
    """`retry-after` in whole seconds, never 0 (a client would retry at once)."""
    return str(max(1, math.ceil(seconds)))


# -- the proxy's side -------------------------------------------------------------------------
_RELOAD_EVERY = 1.0
"""Seconds between two looks at the clients file: a key removed is refused from then on."""


class Gate:
    """The addon's side: `gateway_clients`, who each request is (`identify`), what it may do
    (`refusal`), and the start-up warning for a listener others can reach (`running`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clients: tuple[Client, ...] | None = None
        """None: client keys are off (every request is the one anonymous client "")."""
        self.rate = RateWindow(clock)
        self.clock = clock
        self._path = ""
        self._stamp: tuple[int, int] | None = None
        self._looked = 0.0
        self._lock = threading.Lock()
        self._connections: weakref.WeakKeyDictionary[Any, Client] = weakref.WeakKeyDictionary()
        """Regular mode: the client a CONNECT's proxy password named, for the requests inside it."""

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

    def identify(self, flow: Any) -> Client | None:
        """Who sent a request the gateway takes on: its client (named in the flow's metadata), or
        None after answering it `401 invalid_api_key`. The key never stays in the flow: the header
        that carried it is removed, so it reaches no upstream, saved flow or capture. Off: the
        anonymous client."""
        if not self.on:
            return ANONYMOUS
        if flow.is_replay == "request" and flow.metadata.get(METADATA):
            return self.client_of(flow)  # the operator's Replay of a client's saved flow: its client
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
            _refuse(flow, 401, "invalid_api_key",
                    "Incorrect API key provided: this gateway wants one of its client keys as "
                    "`Authorization: Bearer <key>` (or the proxy password)" if key else
                    "Missing gateway client key: send `Authorization: Bearer <key>` (the OpenAI SDKs' "
                    "api_key, Codex's env_key), or the proxy password in regular mode")
            return None
        flow.metadata[METADATA] = found.name
        return found

    def client_of(self, flow: Any) -> Client:
        """The client `identify` found for the flow (the anonymous one when keys are off)."""
        name = flow.metadata.get(METADATA, "")
        if not self.on or not name:
            return ANONYMOUS
        return next((c for c in self.clients or () if c.name == name), Client(name, "0" * 64))

    @staticmethod
    def named(flow: Any) -> dict[str, str]:
        """`{"client": name}` for the flow's metadata (`flowinfo`: its comment and log line), or {}."""
        name = flow.metadata.get(METADATA)
        return {"client": name} if name else {}

    def refusal(self, client: Client, model: str) -> tuple[int, str, str, dict[str, str]] | None:
        """Status, code, message and headers refusing a turn for `model`, before the store or the
        upstream is asked: a model outside the client's patterns, or its requests per minute."""
        if not client.allows(model):
            return (403, "model_not_allowed", f"client {client.name!r} may not use model {model!r} "
                    f"(allowed: {', '.join(client.models)})", {})
        wait = self.rate.take(client.name, client.requests_per_minute)
        if wait:
            return (429, "rate_limit_exceeded", f"client {client.name!r} is past its "
                    f"{client.requests_per_minute} requests per minute; retry in {retry_after(wait)} s",
                    {"retry-after": retry_after(wait)})
        return None


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


def _refuse(flow: Any, status: int, code: str, message: str,
            headers: Mapping[str, str] | None = None) -> None:
    flow.metadata[flowinfo.KEY] = {"upstream": "-", "model": None, "dropped": [], "notes": [],
                                   "refused": message, **Gate.named(flow)}
    answer(flow, error_response(speaks_of(flow.metadata), status, code, message, headers=dict(headers or {})))


# -- the file, for the command ----------------------------------------------------------------
def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def table(client: Client) -> str:
    lines = ["[[client]]", f"name = {_toml_string(client.name)}",
             f"key_sha256 = {_toml_string(client.key_sha256)}"]
    if client.models:
        lines.append("models = [" + ", ".join(_toml_string(m) for m in client.models) + "]")
    if client.tokens_per_day:
        lines.append(f"tokens_per_day = {client.tokens_per_day}")
    if client.requests_per_minute:
        lines.append(f"requests_per_minute = {client.requests_per_minute}")
    return "\n".join(lines) + "\n"


def _write(path: Path, clients: Iterable[Client]) -> None:
    text = "\n".join(table(c) for c in clients)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(0o600)
    temporary.replace(path)  # atomic: a proxy reading the file never sees half of it


def main(argv: Sequence[str] | None = None, out: Any = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m addon clients",
                                     description="Issue, list and revoke the gateway's client keys "
                                                 "(the file gateway_clients names).")
    parser.add_argument("--file", default="clients.toml", help="the clients file (default: clients.toml)")
    # `--file` also after the command (`add ana --file clients.toml`, as docs/team.md writes it);
    # SUPPRESS keeps a subcommand from resetting a `--file` given before it
    either = argparse.ArgumentParser(add_help=False)
    either.add_argument("--file", default=argparse.SUPPRESS, help="the clients file")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", parents=[either],
                              help="make a new key for NAME, print it once, store its hash")
    add.add_argument("name")
    add.add_argument("--models", default="", help="comma-separated patterns, e.g. gpt-5*,o4*")
    add.add_argument("--tokens-per-day", type=int, default=0)
    add.add_argument("--requests-per-minute", type=int, default=0)
    rotate = commands.add_parser("rotate", parents=[either], help="give NAME a new key (printed once)")
    rotate.add_argument("name")
    commands.add_parser("list", parents=[either], help="the clients and their limits (never a key)")
    remove = commands.add_parser("remove", parents=[either], help="revoke NAME's key")
    remove.add_argument("name")
    args = parser.parse_args(argv)
    path = Path(args.file).expanduser()
    try:
        clients = load(str(path)) if path.exists() else ()
        if args.command == "add":
            if any(c.name == args.name for c in clients):
                raise ClientsError(f"{args.name!r} is in {str(path)!r} already: `rotate` gives it a new key")
            key = new_key()
            models = tuple(m.strip() for m in args.models.split(",") if m.strip())
            added = Client(args.name, hash_key(key), models, args.tokens_per_day, args.requests_per_minute)
            parse(table(added))  # the same checks as the proxy's
            _write(path, (*clients, added))
            print(f"client {args.name!r} added to {path}; its key (shown once, not stored):\n{key}", file=out)
        elif args.command == "rotate":
            old = next((c for c in clients if c.name == args.name), None)
            if old is None:
                raise ClientsError(f"no client {args.name!r} in {str(path)!r}")
            key = new_key()
            _write(path, (replace(c, key_sha256=hash_key(key)) if c is old else c for c in clients))
            print(f"client {args.name!r} has a new key (shown once, not stored); the old one is refused "
                  f"from now on:\n{key}", file=out)
        elif args.command == "list":
            for c in clients:
                limits = [f"models={','.join(c.models)}" if c.models else "models=any",
                          f"tokens_per_day={c.tokens_per_day or 'unlimited'}",
                          f"requests_per_minute={c.requests_per_minute or 'unlimited'}"]
                print(f"{c.name}\t{c.key_sha256[:12]}...\t" + "\t".join(limits), file=out)
        else:
            if not any(c.name == args.name for c in clients):
                raise ClientsError(f"no client {args.name!r} in {str(path)!r}")
            _write(path, (c for c in clients if c.name != args.name))
            print(f"client {args.name!r} removed from {path}; its key is refused from now on", file=out)
    except ClientsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
