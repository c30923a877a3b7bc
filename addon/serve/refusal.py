"""A request the gateway will not take, said as data by the side that decides it (a client's
budgets, addon/team/budgets.py; the store's lookup, addon/state/turns.py) and answered by the
pipeline (addon/serve/pipeline.py `refuse_early`), so no side answers a flow it was only asked
about."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str
    message: str
    param: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    """E.g. `retry-after` of a budget's 429."""
