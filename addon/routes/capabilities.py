"""What each routed model accepts, asked of the vendor's models endpoint once and kept
(docs/models.md). The dialect's shipped table answers until the vendor has, and whenever the
vendor cannot be asked (offline, a key that may not read models, a dialect without an endpoint).

Vendor-neutral: the dialect names its endpoint and reads the answer (`ModelsEndpoint`); this
module only fetches, caches and waits. A fetch runs in a daemon thread of its own, never on the
event loop (`offload.background`, docs/concurrency.md); a request waits for one in flight at most
`timeout` seconds (`offload.wait`), then goes on with the table while the fetch fills the cache
for later requests.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any

import certifi

from addon.routes.routing import Route, model_name_problem, stated, states
from addon.upstream import auth
from addon.work import offload
from translators import dialect as dialects
from translators.core.capabilities import ModelCapabilities

MODES = ("vendor", "table")
"""`vendor`: ask the models endpoint; `table`: never ask (offline use), the shipped table only."""
FETCH_TIMEOUT = 10.0
"""Seconds one fetch may wait to connect, and for each read."""
MAX_ANSWER = 1 << 20
"""A model description is a few KiB; a larger answer is not one."""
KEEP_ANSWER = 6 * 3600.0
"""Seconds a vendor answer is used before it is asked again (lifecycles change); the old answer
serves while the new one is fetched."""
KEEP_FAILURE = 600.0
"""Seconds a failure is remembered, so a refused key does not cost a fetch per request."""
MAX_MODELS = 256
"""Models remembered at once: a wildcard route takes any client model name, and ever new names
must not make the gateway fetch without end."""

Key = tuple[str, str, str, str]
"""(dialect, base URL, upstream model, key variable)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """One fetch: the vendor's capabilities, or why there are none (one short phrase)."""

    capabilities: ModelCapabilities | None
    failure: str | None
    at: float


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a request is translated with, and the flow note when the vendor could not be read."""

    capabilities: ModelCapabilities
    note: str | None = None


@dataclass(slots=True)
class _Entry:
    future: Future[Outcome]
    previous: ModelCapabilities | None = None
    """The last vendor answer while a newer one is fetched."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises HTTPError with the 3xx status


class Capabilities:
    """The cache of vendor answers, one per (dialect, base URL, model, key variable). Used from
    the event loop's thread; fetch threads only complete futures (`offload.background`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.mode = "vendor"
        self.timeout = 2.0
        self._clock = clock
        self._entries: dict[Key, _Entry] = {}
        self._lock = threading.Lock()
        self._proxy: str | None = None
        self._opener = _opener()

    def configure(self, routes: Iterable[Route], *, mode: str, timeout: float,
                  proxy: str | None = None) -> None:
        """Take the options; warn about route models on their way out, and start fetching each
        fixed route model now when an event loop runs (else on its first request). `proxy`: the
        `upstream:` mode's proxy URL (credentials in it), which every fetch goes through."""
        self.mode, self.timeout = mode, timeout
        if proxy != self._proxy:
            self._proxy, self._opener = proxy, _opener(proxy)
        try:
            asyncio.get_running_loop()
            running = True
        except RuntimeError:
            running = False
        for route in routes:
            if route.model is None or (table := _table(route.dialect, route.model)) is None:
                continue
            _warn_lifecycle(route, table, "the shipped table")
            if running and self._asks(route):
                entry = self._entry(route, route.model)
                if entry is not None:
                    entry.future.add_done_callback(lambda done, r=route, t=table: _warn_vendor(r, t, done))

    def best(self, route: Route, model: str) -> ModelCapabilities | None:
        """The best answer known now, without waiting: the vendor's when it came, else the
        table's. None for a dialect without capabilities (a Responses upstream)."""
        table = _table(route.dialect, model)
        if table is None:
            return None
        with self._lock:
            entry = self._entries.get(_key(route, model))
        if entry is not None:
            if entry.future.done() and (caps := entry.future.result().capabilities) is not None:
                return caps
            if entry.previous is not None:
                return entry.previous
        return table

    async def resolve(self, route: Route, model: str) -> Resolved | None:
        """What to translate a request with: the vendor's answer, waiting for a fetch in flight
        at most `timeout` seconds, else the table with a note saying why; with what the route
        states on top (`routing.stated`: its server, its model's window and output limit). None
        for a dialect without capabilities (a Responses upstream), unless the route states a
        figure: then that alone (docs/models.md "Output limits")."""
        found = await self._resolve(route, model)
        if found is None:
            return Resolved(stated(ModelCapabilities(model=model), route)) if states(route) else None
        if not states(route):
            return found
        return Resolved(stated(found.capabilities, route), found.note)

    async def _resolve(self, route: Route, model: str) -> Resolved | None:
        table = _table(route.dialect, model)
        if table is None:
            return None
        if not self._asks(route):
            return Resolved(table)
        entry = self._entry(route, model)
        if entry is None:
            why = f"not asked ({MAX_MODELS} models are being fetched)"
        else:
            if not entry.future.done():
                if entry.previous is not None:
                    return Resolved(entry.previous)
                await offload.wait(entry.future, self.timeout)
            if entry.future.done():
                outcome = entry.future.result()
                if outcome.capabilities is not None:
                    return Resolved(outcome.capabilities)
                why = outcome.failure or "failed"
            else:
                why = f"did not answer within {self.timeout:g} s (still asking)"
        used = "the shipped table" if table.source == "table" else "the dialect's defaults"
        return Resolved(table, f"capabilities: {route.dialect.name} models endpoint {why}; used {used}")

    # -- the cache ---------------------------------------------------------------------------
    def _asks(self, route: Route) -> bool:
        return self.mode == "vendor" and _endpoint(route.dialect) is not None

    def _entry(self, route: Route, model: str) -> _Entry | None:
        """The entry for (route, model), a fetch started when there is none or it is too old;
        None when the cache is full of fetches in flight."""
        key = _key(route, model)
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not _expired(entry, now):
                return entry
            previous = entry.previous if entry is not None else None
            if entry is not None and entry.future.done():
                previous = entry.future.result().capabilities or previous
            if entry is None and len(self._entries) >= MAX_MODELS and not self._evict_one():
                return None
            entry = _Entry(offload.background(self._outcome, route, model,
                                              name=f"capabilities {route.dialect.name} {model}"), previous)
            self._entries[key] = entry
        return entry

    def _evict_one(self) -> bool:
        for key, entry in self._entries.items():  # oldest first
            if entry.future.done():
                del self._entries[key]
                return True
        return False

    def _outcome(self, route: Route, model: str) -> Outcome:
        """In the fetch thread: the fetch's outcome, a bug in it a failure like any other."""
        try:
            return self._fetch(route, model)
        except Exception as exc:
            return Outcome(None, f"could not be read ({type(exc).__name__})", self._clock())

    def _fetch(self, route: Route, model: str) -> Outcome:
        endpoint = _endpoint(route.dialect)
        assert endpoint is not None
        if problem := model_name_problem(model):  # refused before, in the pipeline; never asked here
            return Outcome(None, problem, self._clock())
        key = auth.read_key(route.key_env) if route.key_env else None  # the route's key rule: routing.py
        headers = {**endpoint.headers, **auth.key_headers(route.dialect, key), "accept": "application/json"}
        request = urllib.request.Request(route.base_url + endpoint.path(model), headers=headers, method="GET")

        def failed(why: str) -> Outcome:
            return Outcome(None, _scrub(why, key), self._clock())

        try:
            with self._opener.open(request, timeout=FETCH_TIMEOUT) as answer:
                raw = answer.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            exc.close()
            return failed(f"answered {exc.code}")
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ConnectionRefusedError):
                return failed("refused the connection")
            if isinstance(reason, TimeoutError):
                return failed(f"did not answer within {FETCH_TIMEOUT:g} s")
            return failed(f"could not be reached ({reason})")
        except TimeoutError:
            return failed(f"did not answer within {FETCH_TIMEOUT:g} s")
        except (OSError, HTTPException, ValueError) as exc:
            return failed(f"could not be read ({exc})")
        if len(raw) > MAX_ANSWER:
            return failed(f"answered more than {MAX_ANSWER >> 20} MiB")
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):
            return failed("answered something other than JSON")
        try:
            caps = endpoint.parse(payload, model)
        except ValueError as exc:
            return failed(f"answered something other than a model ({exc})")
        return Outcome(caps.with_source("vendor"), None, self._clock())


def _key(route: Route, model: str) -> Key:
    return (route.dialect.name, route.base_url, model, route.key_env)


def _expired(entry: _Entry, now: float) -> bool:
    if not entry.future.done():
        return False
    outcome = entry.future.result()
    keep = KEEP_ANSWER if outcome.capabilities is not None else KEEP_FAILURE
    return now - outcome.at > keep


def _table(dialect: dialects.Dialect, model: str) -> ModelCapabilities | None:
    """The shipped table's answer; None for a dialect without one (the client's own: nothing to plan)."""
    codec = dialect.codec
    if codec is None or codec.capabilities is None:
        return None
    try:
        return _shipped(codec.capabilities, model)
    except TypeError:  # a plugin's table that cannot be hashed: read every time
        return codec.capabilities(model)


@functools.lru_cache(maxsize=512)
def _shipped(table: Callable[[str], ModelCapabilities], model: str) -> ModelCapabilities:
    """A dialect's table read for `model`, kept: every turn asks for its model's row, a table is a
    function of the name alone, and its rows are frozen (docs/benchmarks.md "The fixed cost of a turn")."""
    return table(model)


def _endpoint(dialect: dialects.Dialect) -> dialects.ModelsEndpoint | None:
    codec = dialect.codec
    return codec.models_endpoint if codec is not None else None


def _opener(proxy: str | None = None) -> urllib.request.OpenerDirector:
    """No proxy from the environment (the gateway's own upstream connections take none either)
    but the `upstream:` mode's, no redirects, TLS verified against the CA bundle mitmproxy itself
    trusts by default."""
    tls = ssl.create_default_context(cafile=certifi.where())
    proxies = {"http": proxy, "https": proxy} if proxy else {}
    return urllib.request.build_opener(urllib.request.ProxyHandler(proxies), _NoRedirect(),
                                       urllib.request.HTTPSHandler(context=tls))


def _scrub(text: str, key: str | None) -> str:
    return text.replace(key, "<key>") if key else text


def _warn_lifecycle(route: Route, caps: ModelCapabilities, said_by: str) -> None:
    if (note := caps.lifecycle_note()) is None:
        return
    retired = f" (retired {caps.retires})" if caps.lifecycle == "retired" and caps.retires else ""
    logging.warning(f"gateway route {route.pattern}: {note}{retired} (says {said_by})")


def _warn_vendor(route: Route, table: ModelCapabilities, done: Future[Outcome]) -> None:
    """Runs in the fetch thread (mitmproxy's log handlers hand records to the event loop)."""
    caps = done.result().capabilities
    if caps is not None and (caps.lifecycle, caps.retires) != (table.lifecycle, table.retires):
        _warn_lifecycle(route, caps, "the vendor")
