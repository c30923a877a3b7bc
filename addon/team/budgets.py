"""A client's budgets and its usage (docs/team.md "Budgets", "Usage"): whether a turn may go (its
model among the client's patterns, its requests per rolling minute in this process, its tokens per
UTC day in the store), and what an answered turn cost, added to its client's row of the day.

With client keys off there are no budgets, and no usage is kept: the store is never opened for them.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from addon.observe import flowinfo
from addon.serve.refusal import Refusal
from addon.state.store import StoreError
from addon.team import usage

if TYPE_CHECKING:
    from mitmproxy import http

    from addon.state.storage import Storage
    from addon.team.clients_file import Client
    from addon.team.keys import Keys

_DAY = 86400.0


class Budgets:
    def __init__(self, storage: Storage, clients: Keys) -> None:
        self.storage = storage
        self.clients = clients
        self.rate = RateWindow(clients.clock)

    def refusal(self, client: Client, model: str) -> Refusal | None:
        """Why a turn for `model` is refused before the store or the upstream is asked: a model
        outside the client's patterns, or its requests per minute."""
        if not client.allows(model):
            return Refusal(403, "model_not_allowed", f"client {client.name!r} may not use model {model!r} "
                           f"(allowed: {', '.join(client.models)})")
        wait = self.rate.take(client.name, client.requests_per_minute)
        if wait:
            return Refusal(429, "rate_limit_exceeded", f"client {client.name!r} is past its "
                           f"{client.requests_per_minute} requests per minute; retry in "
                           f"{retry_after(wait)} s", headers={"retry-after": retry_after(wait)})
        return None

    async def admit(self, flow: http.HTTPFlow, fields: dict[str, Any]) -> Refusal | None:
        """None when the client may send this turn: its model is one of its patterns, it is within
        its requests per minute and its tokens per day (usage in the store); else why not (403,
        429 with `retry-after`, 503)."""
        if not self.clients.on:
            return None
        client = self.clients.client_of(flow)
        model = fields.get("model")
        refused = self.refusal(client, model if isinstance(model, str) else "")
        if refused is None and client.tokens_per_day:
            try:
                used = await self.storage.call(lambda store: store.tokens_on(client.name, usage.today()))
            except StoreError as exc:
                return Refusal(503, "store_unavailable", str(exc))
            if used >= client.tokens_per_day:
                wait = retry_after(_seconds_to_midnight())
                refused = Refusal(429, "rate_limit_exceeded", f"client {client.name!r} has used {used} "
                                  f"of its {client.tokens_per_day} tokens today (UTC); retry in {wait} s",
                                  headers={"retry-after": wait})
        return refused

    def count(self, flow: http.HTTPFlow, used: dict[str, Any] | None) -> None:
        """Add an answered turn's upstream usage to its client's row of the day (with client keys
        on). Queued in the store's thread; a failure is a note on the flow. Called once per flow,
        as its answer ends (addon/serve/upstream_answer.py)."""
        if not self.clients.on:
            return
        info = flow.metadata.get(flowinfo.KEY) or {}
        counts = usage.counts(used, info.get("cost_usd"))
        client = self.clients.client_of(flow).name
        route, model = str(info.get("upstream") or "-"), str(info.get("model") or "-")
        day = usage.today()
        storage = self.storage

        def write() -> None:
            try:
                storage.store().add_usage(client, day, route, model, counts)
            except StoreError as exc:
                notes = info.get("notes")
                if isinstance(notes, list):
                    notes.append(f"usage: not recorded: {exc}")

        storage.submit(write)


class RateWindow:
    """Requests per rolling minute per client, in this process: the times of the last minute's
    requests, oldest first, at most the limit kept."""

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


def _seconds_to_midnight() -> float:
    """Until the next UTC day, when `tokens_per_day` counts afresh."""
    now = time.time()
    return _DAY - now % _DAY
