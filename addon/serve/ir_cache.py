"""Each client's cache of decoded request items (translators/core/item_cache.py), for the pipeline
to pass to `translate_request(..., items=)` (docs/benchmarks.md "Request translation over a
session").

A Codex conversation resends its whole history every turn; the client's cache holds what the
gateway decoded of it, so a turn decodes only its new items. A cache is never shared by two
clients: one per gateway client (its key's name, `gateway_clients`, addon/team/keys.py), else one
per WebSocket connection (a connection is one client, addon/serve/websocket/), else none: plain
HTTP without client keys is anyone who reaches the proxy. `gateway_item_cache=shared` says the
gateway has one client (a proxy on the user's own machine): its anonymous HTTP requests then share
one cache; `off` keeps none. Bounded: `MAX_CACHES` caches, the least recently used going first,
each bounded in entries and bytes by its own class. A request a worker process translates
(addon/work/workers.py) takes none: the caches live in this process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from mitmproxy import ctx, exceptions

from addon.observe import flowinfo
from translators import ItemCache

MODES = ("clients", "shared", "off")
MAX_CACHES = 16
"""Caches kept at once (clients and connections): at most `MAX_CACHES` times
translators/core/item_cache.py `MAX_BYTES` of memory (16 x 16 MiB)."""


def parse_mode(value: str) -> str:
    if value not in MODES:
        raise ValueError(f"gateway_item_cache {value!r}: write one of {', '.join(MODES)}")
    return value


class ItemCaches:
    """The option `gateway_item_cache`, and the caches of the clients seen lately."""

    def __init__(self, max_caches: int = MAX_CACHES) -> None:
        self.mode = "clients"
        self.max_caches = max_caches
        self._caches: OrderedDict[tuple[str, str], ItemCache] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, loader: Any) -> None:
        loader.add_option("gateway_item_cache", str, "clients",
                          "Reuse what earlier requests of a conversation decoded: clients (one cache per "
                          "gateway client and per WebSocket connection), shared (also one for the proxy's "
                          "anonymous HTTP requests: a gateway with one user), off.")

    def configure(self, updated: set[str]) -> None:
        if "gateway_item_cache" not in updated:
            return
        try:
            self.mode = parse_mode(ctx.options.gateway_item_cache)
        except ValueError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        if self.mode == "off":
            self.clear()

    def of(self, flow: Any) -> ItemCache | None:
        """The cache of the client that sent `flow`, or None (see the module's docstring)."""
        if self.mode == "off":
            return None
        client = flow.metadata.get(flowinfo.CLIENT)
        connection = flow.metadata.get(flowinfo.WEBSOCKET)
        if client:
            owner = ("client", str(client))
        elif isinstance(connection, str) and connection.startswith("ws_"):
            owner = ("socket", connection)
        elif self.mode == "shared":
            owner = ("shared", "")
        else:
            return None
        with self._lock:
            cache = self._caches.get(owner)
            if cache is None:
                cache = self._caches[owner] = ItemCache()
                while len(self._caches) > self.max_caches:
                    self._caches.popitem(last=False)
            else:
                self._caches.move_to_end(owner)
            return cache

    def clear(self) -> None:
        with self._lock:
            self._caches.clear()

    def __len__(self) -> int:
        return len(self._caches)
