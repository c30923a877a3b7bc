"""What the answer adds to the flow's record for the console, the usage report, the metrics and
the traces (docs/metrics.md "The record"): its cost and its finish reason, written once, as the
answer is translated (addon/serve/pipeline.py `answer`), before its usage is counted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from addon.observe import costs

if TYPE_CHECKING:
    from addon.routes.routing import Route

_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "apply_patch_call", "mcp_call")
"""Responses output items that hand the turn back to the client's tools."""


def answered(info: dict[str, Any], route: Route | None, final: dict[str, Any] | None) -> None:
    """`cost_usd` and `price` (addon/observe/costs.py), `finish_reason` (`finish_reason`)."""
    costs.stamp(info, route)
    if (reason := finish_reason(final)) is not None:
        info["finish_reason"] = reason


def finish_reason(final: dict[str, Any] | None) -> str | None:
    """Why the answer the client got ended, in the client's own words: a Messages `stop_reason`
    (`end_turn`, `tool_use`, `max_tokens`, ...); for a Responses object `stop` or `tool_calls`
    when completed, the `incomplete_details.reason` (`max_output_tokens`, `content_filter`) when
    incomplete, `error` when failed. None when the answer says neither."""
    if not isinstance(final, dict):
        return None
    if final.get("type") == "message":
        reason = final.get("stop_reason")
        return reason if isinstance(reason, str) and reason else None
    status = final.get("status")
    if status == "completed":
        output = final.get("output")
        calls = isinstance(output, list) and any(isinstance(item, dict) and item.get("type") in _CALLS
                                                 for item in output)
        return "tool_calls" if calls else "stop"
    if status == "incomplete":
        details = final.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return reason if isinstance(reason, str) and reason else "incomplete"
    if status == "failed":
        return "error"
    return None
