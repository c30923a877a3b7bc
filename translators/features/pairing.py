"""Every tool call followed by its result, and no result without its call.

Anthropic wants each `tool_use` answered by a `tool_result` in the very next user turn, results
first (docs/anthropic.md "Conversation rules"); Chat Completions wants a `tool` message per call right after
the
assistant message; Bedrock and Gemini alike. So the IR is normalised once, for every target:
results move to just after the run of assistant items that holds their calls, in call order (a
result already there ends the run, so consecutive tool turns stay apart);
a result whose call is absent is dropped (an orphan is a 400 upstream, docs/field-notes.md "Orphan tool
items"); a call
without a result gets "aborted", as Codex itself fills in interrupted calls.
"""

from __future__ import annotations

from dataclasses import replace

from translators.core.report import Report
from translators.ir.request import Item, Text, ToolCall, ToolResult

ABORTED = "aborted"


_ASSISTANT_SIDE = frozenset({"tool_call", "reasoning", "web_search"})
"""Item types the model produced (with assistant messages): they continue an assistant turn."""


def pair(items: list[Item], report: Report) -> list[Item]:
    calls = {item.call_id: item for item in items if item.type == "tool_call"}
    results: dict[str, ToolResult] = {}
    for item in items:
        if item.type != "tool_result":
            continue
        if item.call_id not in calls or item.call_id in results:
            report.drop(item.origin)
            continue
        results[item.call_id] = item

    out: list[Item] = []
    run: list[ToolCall] = []
    running: set[str] = set()
    """The call ids of `run`."""

    def close_run() -> None:
        for call in run:
            result = results.get(call.call_id)
            if result is None:
                report.note(f"{call.origin}: call {call.call_id} had no output; sent as '{ABORTED}'")
                result = ToolResult(kind=call.kind, call_id=call.call_id, parts=[Text(text=ABORTED)],
                                    origin=call.origin)
            elif result.kind != call.kind:
                result = replace(result, kind=call.kind)
            out.append(result)
        run.clear()
        running.clear()

    seen: set[str] = set()
    for item in items:
        kind = item.type
        if kind == "tool_result":
            # A result of the open run ends that assistant turn: the next call was made after the
            # model saw this result, so the two turns must not be merged into one.
            if item.call_id in running:
                close_run()
            continue
        if kind == "tool_call":
            if item.call_id in seen:
                report.drop(item.origin)  # a repeated call id would answer one result twice
                continue
            seen.add(item.call_id)
            run.append(item)
            running.add(item.call_id)
        elif run and kind not in _ASSISTANT_SIDE and not (kind == "message" and item.role == "assistant"):
            close_run()  # a user-side item ends the assistant turn
        out.append(item)
    close_run()
    return out
