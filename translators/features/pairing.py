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


def _assistant_side(item: Item) -> bool:
    return (item.type in ("tool_call", "reasoning", "web_search")
            or (item.type == "message" and item.role == "assistant"))


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

    seen: set[str] = set()
    for item in items:
        if item.type == "tool_result":
            # A result of the open run ends that assistant turn: the next call was made after the
            # model saw this result, so the two turns must not be merged into one.
            if any(call.call_id == item.call_id for call in run):
                close_run()
            continue
        if item.type == "tool_call":
            if item.call_id in seen:
                report.drop(item.origin)  # a repeated call id would answer one result twice
                continue
            seen.add(item.call_id)
            run.append(item)
        elif not _assistant_side(item):
            close_run()
        out.append(item)
    close_run()
    return out
