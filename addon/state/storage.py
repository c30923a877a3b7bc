"""The response store as a mitmproxy addon: its options (`gateway_store*`), opened at first use,
every call in its one thread, closed when the proxy stops (docs/state.md, docs/concurrency.md
"The store's thread").

Stored turns (addon/state/turns.py), the store's endpoints (addon/state/rest.py) and the clients'
budgets and usage (addon/team/budgets.py) all go through `call` and `submit`, in the order made.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions

from addon.observe import console
from addon.state.store import Store, open_store
from addon.work import offload

_DAY = 86400.0


class Storage:
    name = "gateway-storage"
    """mitmproxy names addons by class; this one must not meet another `storage`."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self._location = ""
        self._worker: offload.SerialThread | None = None
        self._worker_lock = threading.Lock()

    # -- options ----------------------------------------------------------------------------
    def load(self, loader: Any) -> None:
        loader.add_option("gateway_store", bool, True,
                          "Keep Responses state (previous_response_id, conversations, GET /responses/{id}); "
                          "requests with store:false (Codex) are never stored.")
        loader.add_option("gateway_store_path", str, "",
                          "SQLite file of the response store; empty: gateway-store.sqlite in the confdir.")
        loader.add_option("gateway_store_url", str, "",
                          "postgresql:// URL of a shared response store (several gateway processes); "
                          "wins over gateway_store_path.")
        # int, not float: `--set` parses str, int, bool and lists only (docs/team.md "Options")
        loader.add_option("gateway_store_ttl", int, int(30 * _DAY),
                          "Seconds a stored response or conversation is kept after its last use; 0: forever.")
        loader.add_option("gateway_store_max_bytes", int, 1 << 30,
                          "Size limit of each client's stored JSON, in bytes, held at every write; past "
                          "it that client's least recently used go first; 0: none.")

    def configure(self, updated: set[str]) -> None:
        if not any(name.startswith("gateway_store") or name == "confdir" for name in updated):
            return
        with console.option_errors():
            self._configure()

    def _configure(self) -> None:
        o = ctx.options
        url = o.gateway_store_url.strip()
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise exceptions.OptionsError("gateway_store_url must be a postgresql:// URL, e.g. "
                                          "postgresql://gateway@db.internal/gateway")
        if o.gateway_store_ttl < 0 or o.gateway_store_max_bytes < 0:
            raise exceptions.OptionsError("gateway_store_ttl and gateway_store_max_bytes must be >= 0 "
                                          "(0: no limit)")
        self.close()
        confdir = os.path.expanduser(o.confdir) if "confdir" in o else "~/.mitmproxy"
        self._location = url or o.gateway_store_path.strip() or str(Path(confdir) / "gateway-store.sqlite")

    def done(self) -> None:
        self.close()  # the turns queued are written, then the store is closed

    def close(self) -> None:
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)  # the turns already recorded are written first
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def enabled(self) -> bool:
        return "gateway_store" not in ctx.options or bool(ctx.options.gateway_store)

    def store(self) -> Store:
        """Opened at first use, so a proxy that never needs state never creates the file."""
        if self._store is None:
            o = ctx.options
            location = self._location or str(Path(os.path.expanduser(o.confdir)) / "gateway-store.sqlite")
            self._store = open_store(location, ttl=o.gateway_store_ttl, max_bytes=o.gateway_store_max_bytes)
        return self._store

    # -- the store's thread -----------------------------------------------------------------
    def _thread(self) -> offload.SerialThread:
        """The one thread every store call runs in, in the order they were made: a turn's write
        is queued before the client can send the request that reads it, so that read finds it
        (`offload.SerialThread`, docs/concurrency.md)."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = offload.SerialThread("gateway-store")
            return self._worker

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(store, *args)` in the store's thread, where the store is opened at first use too
        (a new SQLite file and its schema: 10-20 ms of disk work the event loop must not wait for)."""
        return await self._thread().call(lambda: fn(self.store(), *args))

    def submit(self, fn: Callable[[], None]) -> Future[None]:
        """`fn()` queued in the store's thread, after every call made before it."""
        return self._thread().submit(fn)
