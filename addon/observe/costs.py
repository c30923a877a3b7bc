"""What an answered turn cost, written into the flow's record (docs/metrics.md "Cost").

The price is the route's own (`prices` in its `[[route]]`, for the route's own model) or the
shipped list price of the model on the dialect that answered (docs/prices.md); the cost is
`translators.core.pricing.cost` of the usage the client got. The record keeps the cost and
where its price came from, so the console line, the usage report, `GET /gateway/usage`, the
metrics and the traces all read one figure:

    info["cost_usd"] = 0.004215
    info["price"] = {"source": "https://...pricing", "taken": "2026-12-06"}   # or {"source": "route gpt-5*"}

A turn with no usage, or whose model has no price, gets neither key.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from translators import dialect as registry
from translators.core import pricing

if TYPE_CHECKING:
    from addon.routes.routing import Route

ROUND = 10
"""Decimals kept of a turn's cost: far below a cent, without float noise in the saved record."""


@dataclass(frozen=True, slots=True)
class Priced:
    price: pricing.Price
    source: str
    taken: str | None = None


def price_of(route: Route | None, upstream: str, model: object) -> Priced | None:
    """The price of `model` on the dialect `upstream`: the route's own when it is the route's
    model (or the route keeps the client's), else the dialect's shipped list price."""
    if not isinstance(model, str) or not model:
        return None
    if route is not None and route.prices is not None and route.model in (None, model):
        return Priced(route.prices, f"route {route.pattern}")
    if upstream not in registry.names():
        return None
    dialect = registry.get(upstream)
    price = registry.list_price(dialect, model)
    if price is None:
        return None
    taken, source = _provenance(dialect)
    return Priced(price, source, taken)


def _provenance(dialect: registry.Dialect) -> tuple[str | None, str]:
    """When and where the dialect's table was read. A dialect names its lookup (`Dialect.prices`),
    not its table: the table is the lookup's module's `table()` (translators/<dialect>/prices.py)."""
    module = sys.modules.get(getattr(dialect.prices, "__module__", "") or "")
    table = getattr(module, "table", None)
    read = table() if callable(table) else None
    if isinstance(read, pricing.PriceTable):
        return read.taken, read.source
    return None, f"the {dialect.name} price table"


def cost_of(usage: Any, priced: Priced | None) -> float | None:
    tokens = pricing.usage_of(usage)
    if tokens is None or priced is None:
        return None
    return round(pricing.cost(tokens, priced.price), ROUND)


def stamp(info: dict[str, Any], route: Route | None) -> None:
    """The turn's cost and its price's source into the record, from its `usage`, `upstream` and
    `model` (addon/serve/pipeline.py `answer`, once the usage is known)."""
    priced = price_of(route, str(info.get("upstream") or ""), info.get("model"))
    cost = cost_of(info.get("usage"), priced)
    if cost is None or priced is None:
        return
    info["cost_usd"] = cost
    info["price"] = {"source": priced.source, **({"taken": priced.taken} if priced.taken else {})}


def dollars(value: Any) -> str | None:
    """`$0.004215`, `$1.25`: four significant figures below a dollar, cents above; None for no cost."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        return None
    if value >= 1:
        return f"${value:,.2f}"
    if value == 0:
        return "$0"
    text = f"{value:.4g}"
    if "e" in text:  # below 0.0001: plain decimals, never 1.2e-05
        text = f"{value:.10f}".rstrip("0")
    return f"${text}"
