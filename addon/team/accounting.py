"""When a turn counts, and as what (docs/team.md "Usage"): the one place that decides it for a
streamed answer whose flow failed before its end was read (mitmproxy's `error`: the client closed
its connection, or the upstream broke off).

- The client's stream got its terminal event (`StreamHook.delivered_whole`): the answer reached
  the client whole, and whoever closed first, the turn is a success: its usage, the upstream's own
  figures as the terminal event carried them, counted once, no error on the flow.
- Otherwise the client abandoned the turn mid-answer (or the upstream broke): what the upstream had
  reported of its usage by then is counted, marked partial (`usage_partial` in the flow's record,
  `partial_requests` in the usage rows, the report and `GET /gateway/usage`).

A turn whose answer ended normally is counted by the answer's end (addon/serve/upstream_answer.py
`_answer`); either way `Budgets.settle` counts a turn once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from addon.observe import costs, flowinfo, stamp

if TYPE_CHECKING:
    from mitmproxy import http

    from addon.routes.routing import Route
    from addon.serve.streaming import StreamHook
    from addon.team.budgets import Budgets


def ended_early(budgets: Budgets, flow: http.HTTPFlow, route: Route | None, hook: StreamHook,
                error: str) -> str | None:
    """Count the turn of a streamed flow that failed (`error`); the error its record keeps: None
    when the client had its whole answer (a success)."""
    info = flow.metadata[flowinfo.KEY]
    if hook.delivered_whole:
        final = hook.final_response()
        used = flowinfo.usage_of(final)
        if used:
            info["usage"] = used
        stamp.answered(info, route, final)
        info["notes"].append(f"the client closed its connection after the answer's end ({error})")
        budgets.settle(flow, used)
        return None
    used = hook.usage_so_far()
    if used:
        info["usage"] = used
        costs.stamp(info, route)
    info["usage_partial"] = True
    budgets.settle(flow, used, partial=True)
    return error
