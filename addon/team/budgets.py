"""A client's budgets and its usage (docs/team.md "Budgets", "Usage").

Whether a turn may go: its model among the client's patterns and its requests per rolling minute
(`admit`, before it is translated), then its budgets (`reserve`, once it is translated and its
worst case is known). A turn holds its worst case, its input estimate plus its output limit as it
is sent (`Translation.input_estimate`, `output_limit`), in tokens and in USD by the price table,
against its client's `tokens_per_day`, `usd_per_day` and `usd_per_month`; when it ends its holds
are let go of and what it spent, the upstream's own figures, is added (`settle`: its usage row of
the day, partial for a turn the client abandoned mid-answer; `release` when it never got an
answer). Every count lives in the store (addon/state/store/sql.py `reserve`, `settle`,
`take_request`), in one transaction each, so turns in flight at once, on every gateway process on
one store, never hold more than a budget together.

With client keys off there are no budgets, and no usage is kept: the store is never opened for them.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime
import math
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from addon.observe import costs, flowinfo
from addon.serve.refusal import Refusal
from addon.state.store import StoreError
from addon.state.store.records import Hold, Over
from addon.team import usage
from translators.core import pricing

if TYPE_CHECKING:
    from mitmproxy import http

    from addon.routes.routing import Route
    from addon.state.storage import Storage
    from addon.team.clients_file import Client
    from addon.team.keys import Keys
    from translators import Translation

UNKNOWN_OUTPUT = 4096
"""Output tokens a turn holds when neither its request nor its model says a limit."""
HELD_RETRY = 5
"""`retry-after` of a turn refused only because turns in flight hold the budget: they end, and
let go of what they did not spend, within seconds."""
BUDGETS = (("tokens_per_day", "tokens", "day"), ("usd_per_day", "usd", "day"),
           ("usd_per_month", "usd", "month"))
"""Each budget: its client field, what it counts, its period."""


@dataclass(frozen=True, slots=True)
class Held:
    """What one turn in flight holds: its client and one hold per budget (amount 0 where the
    client has no such limit: what it spends is counted all the same)."""

    client: str
    holds: tuple[Hold, ...]
    id: str = ""
    """Its `gw_holds` row, "" when it holds nothing."""


class Budgets:
    def __init__(self, storage: Storage, clients: Keys) -> None:
        self.storage = storage
        self.clients = clients
        self._held: dict[str, Held] = {}
        """flow.id -> what it holds, from `reserve` to `settle` or `release`."""

    def refusal(self, client: Client, model: str) -> Refusal | None:
        """A model outside the client's patterns (403)."""
        if not client.allows(model):
            return Refusal(403, "model_not_allowed", f"client {client.name!r} may not use model {model!r} "
                           f"(allowed: {', '.join(client.models)})")
        return None

    async def admit(self, flow: http.HTTPFlow, fields: dict[str, Any]) -> Refusal | None:
        """None when the client may send this turn on to be translated: its model is one of its
        patterns, and it is within its requests per minute (counted in the store: every gateway
        process on it counts one window); else why not (403, 429 with `retry-after`, 503)."""
        if not self.clients.on:
            return None
        client = self.clients.client_of(flow)
        model = fields.get("model")
        if refused := self.refusal(client, model if isinstance(model, str) else ""):
            return refused
        if client.requests_per_minute <= 0:
            return None
        try:
            wait = await self.storage.call(lambda store: store.take_request(client.name,
                                                                            client.requests_per_minute))
        except StoreError as exc:
            return Refusal(503, "store_unavailable", str(exc))
        if wait:
            return Refusal(429, "rate_limit_exceeded", f"client {client.name!r} is past its "
                           f"{client.requests_per_minute} requests per minute; retry in "
                           f"{retry_after(wait)} s", headers={"retry-after": retry_after(wait)})
        return None

    async def reserve(self, flow: http.HTTPFlow, translation: Translation,
                      route: Route | None) -> Refusal | None:
        """Hold the turn's worst case against its client's budgets (with client keys on): None
        when held (or the client has none), else 429 with `retry-after` (503: no store)."""
        if not self.clients.on:
            return None
        client = self.clients.client_of(flow)
        output = translation.output_limit if translation.output_limit is not None else UNKNOWN_OUTPUT
        tokens = translation.input_estimate + output
        priced = costs.price_of(route, translation.target, translation.model)
        usd = pricing.cost(pricing.TokenUsage(input=translation.input_estimate, output=output),
                           priced.price) if priced is not None else 0.0
        now = datetime.datetime.now(datetime.UTC)
        holds = tuple(Hold(period(now, per), kind, tokens if kind == "tokens" else usd, float(limit))
                      for field, kind, per in BUDGETS if (limit := getattr(client, field)))
        info = flow.metadata.get(flowinfo.KEY)
        if client.limited and priced is None and (client.usd_per_day or client.usd_per_month) \
                and isinstance(info, dict):
            info["notes"].append(f"budgets: no price for {translation.model}: its cost is not counted "
                                 "against usd_per_day / usd_per_month")
        hold_id = uuid.uuid4().hex
        if holds:
            try:
                over = await self.storage.call(lambda store: store.reserve(client.name, holds, hold_id))
            except StoreError as exc:
                return Refusal(503, "store_unavailable", str(exc))
            if over is not None:
                return _over(client, over, translation.input_estimate, output)
        self._held[flow.id] = Held(client.name, _every(holds, now), hold_id if holds else "")
        return None

    def settle(self, flow: http.HTTPFlow, used: dict[str, Any] | None, *, partial: bool = False) -> None:
        """A turn that was answered (or abandoned mid-answer: `partial`, counted from the usage
        the upstream had reported so far): its usage added to its client's row of the day, its
        holds let go of and what it spent counted against its budgets. Once per turn: a turn
        with nothing held (settled already, or never reserved) is not counted again. Queued in
        the store's thread; a failure is a note on the flow."""
        held = self._held.pop(flow.id, None)
        if held is None:
            return
        info = flow.metadata.get(flowinfo.KEY) or {}
        counts = usage.counts(used, info.get("cost_usd"), partial=partial)
        route, model = str(info.get("upstream") or "-"), str(info.get("model") or "-")
        day = held.holds[0].period  # the day the turn was admitted: its holds' day
        spent = [float(counts["input_tokens"] + counts["output_tokens"]) if hold.kind == "tokens"
                 else float(counts["cost_usd"]) for hold in held.holds]
        storage = self.storage

        def write() -> None:
            try:
                store = storage.store()
                store.add_usage(held.client, day, route, model, counts)
                store.settle(held.client, held.holds, spent, held.id)
            except StoreError as exc:
                notes = info.get("notes")
                if isinstance(notes, list):
                    notes.append(f"usage: not recorded: {exc}")

        storage.submit(write)

    def release(self, flow: http.HTTPFlow) -> None:
        """A turn that ends without an answer (refused after its reservation, failed before
        the upstream said anything): its holds let go of, nothing spent. A no-op once settled."""
        held = self._held.pop(flow.id, None)
        if held is None:
            return
        storage = self.storage

        def write() -> None:
            # on a store failure what it held stays held until its period ends (docs/team.md "Budgets")
            with contextlib.suppress(StoreError):
                storage.store().settle(held.client, held.holds, [0.0] * len(held.holds), held.id)

        storage.submit(write)

    def holding(self, flow: http.HTTPFlow) -> bool:
        return flow.id in self._held


def _every(holds: tuple[Hold, ...], now: datetime.datetime) -> tuple[Hold, ...]:
    """The turn's holds, and a hold of 0 for each budget it has none of: the first is always its
    day's tokens (`settle` reads the day from it)."""
    found = {(h.period, h.kind): h for h in holds}
    out = []
    for _field, kind, per in BUDGETS:
        key = (period(now, per), kind)
        out.append(found.get(key) or Hold(key[0], kind, 0.0, 0.0))
    return tuple(out)


def period(now: datetime.datetime, per: str) -> str:
    """The UTC day (YYYY-MM-DD) or month (YYYY-MM) `now` falls in."""
    return now.strftime("%Y-%m-%d" if per == "day" else "%Y-%m")


def _period_end(hold: Hold) -> float:
    """Seconds until the period of `hold` is over (UTC midnight, or the month's last one)."""
    now = datetime.datetime.now(datetime.UTC)
    month = len(hold.period) == 7
    day = calendar.monthrange(now.year, now.month)[1] if month else now.day  # a month: its last day
    end = datetime.datetime(now.year, now.month, day, tzinfo=datetime.UTC) + datetime.timedelta(days=1)
    return (end - now).total_seconds()


def _over(client: Client, over: Over, estimate: int, output: int) -> Refusal:
    """The 429 of a turn whose worst case does not fit: retry when its period ends, or after a few
    seconds when only turns in flight stand in its way."""
    hold = over.hold
    wait = _period_end(hold) if over.spent + hold.amount > hold.limit else float(HELD_RETRY)
    per = "today (UTC)" if len(hold.period) == 10 else "this month (UTC)"
    if hold.kind == "tokens":
        what = (f"this turn may take {int(hold.amount)} tokens (input about {estimate} + output limit "
                f"{output}), and {int(over.spent)} of its {int(hold.limit)} tokens_per_day were spent "
                f"{per}, {int(over.held)} held by its turns in flight")
    else:
        name = "usd_per_day" if len(hold.period) == 10 else "usd_per_month"
        what = (f"this turn may cost {costs.dollars(hold.amount)} (input about {estimate} + output limit "
                f"{output} tokens), and {costs.dollars(over.spent)} of its {costs.dollars(hold.limit)} "
                f"{name} were spent {per}, {costs.dollars(over.held)} held by its turns in flight")
    return Refusal(429, "rate_limit_exceeded", f"client {client.name!r} is over budget: {what}; retry in "
                   f"{retry_after(wait)} s (or ask for fewer output tokens)",
                   headers={"retry-after": retry_after(wait)})


def retry_after(seconds: float) -> str:
    """`retry-after` in whole seconds, never 0 (a client would retry at once)."""
    return str(max(1, math.ceil(seconds)))
