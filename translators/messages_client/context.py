"""`context_management` edits, applied to the history as the API applies them before the model
reads it (docs/claude-code.md "Context management"), each said in a note.

- `clear_thinking_20251015`: thinking of all but the last `keep` assistant turns is removed
  (`keep: "all"` or `{"type": "all"}` keeps every one).
- `clear_tool_uses_20250919`: once the trigger is passed (input tokens, estimated here at four
  characters a token, or a count of tool uses), the results of all but the last `keep` tool uses
  are replaced by a placeholder (their inputs too with `clear_tool_inputs`), skipping
  `exclude_tools`, and only when at least `clear_at_least` tokens go.
- `compact_20260112` needs a summary written by a model: not emulated, reported.
"""

from __future__ import annotations

import re
from typing import Any

from translators.core.errors import MalformedRequest
from translators.core.report import Report
from translators.ir.request import Item, Text, Tool, ToolCall, ToolResult

CLEARED = "[tool result cleared by context management]"
DEFAULT_TRIGGER = {"type": "input_tokens", "value": 100_000}
"""The API's trigger when an edit names none (anthropic SDK `BetaClearToolUses20250919EditParam`)."""
DEFAULT_KEEP_TOOL_USES = 3
DEFAULT_KEEP_THINKING_TURNS = 1
CHARS_PER_TOKEN = 4

_MESSAGE_INDEX = re.compile(r"messages\[(\d+)\]")
_CLEAR_TOOL_USES_KEYS = frozenset({"type", "trigger", "keep", "clear_at_least", "clear_tool_inputs",
                                   "exclude_tools"})


def apply(value: Any, items: list[Item], system: list[str], tools: list[Tool], report: Report) -> list[Item]:
    if value is None:
        return items
    if not isinstance(value, dict) or not isinstance(value.get("edits", []), list):
        raise MalformedRequest("context_management.edits must be an array", param="context_management")
    report.drop_unread(value, frozenset({"edits"}), "context_management")
    for i, edit in enumerate(value.get("edits", [])):
        path = f"context_management.edits[{i}]"
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind == "clear_thinking_20251015":
            items = _clear_thinking(edit, items, path, report)
        elif kind == "clear_tool_uses_20250919":
            items = _clear_tool_uses(edit, items, system, tools, path, report)
        else:  # compact_20260112 (a summary by a model) and edits of later betas
            report.drop(path)
    return items


def _turn(item: Item) -> int | None:
    match = _MESSAGE_INDEX.match(item.origin)
    return int(match.group(1)) if match else None


def _clear_thinking(edit: dict[str, Any], items: list[Item], path: str, report: Report) -> list[Item]:
    keep = edit.get("keep", {"type": "thinking_turns", "value": DEFAULT_KEEP_THINKING_TURNS})
    report.drop_unread(edit, frozenset({"type", "keep"}), path)
    if keep == "all" or (isinstance(keep, dict) and keep.get("type") == "all"):
        return items
    value = keep.get("value") if isinstance(keep, dict) and keep.get("type") == "thinking_turns" else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MalformedRequest(f"{path}.keep must be \"all\" or a number of thinking turns",
                               param=f"{path}.keep")
    turns = sorted({t for item in items if item.type == "reasoning" and (t := _turn(item)) is not None})
    kept = set(turns[len(turns) - value:]) if value else set()
    out = [item for item in items if item.type != "reasoning" or _turn(item) in kept]
    if cleared := len(items) - len(out):
        report.note(f"context management: thinking of {cleared} earlier block(s) cleared ({path})")
    return out


def estimate_tokens(items: list[Item], system: list[str], tools: list[Tool]) -> int:
    """Input tokens, roughly: the characters of every text the model reads, four to a token."""
    chars = sum(len(s) for s in system)
    for tool in tools:
        chars += len(getattr(tool, "description", "")) + len(str(getattr(tool, "parameters", "")))
    for item in items:
        if item.type in ("message", "tool_result"):
            chars += sum(len(p.text) if p.type == "text" else 1000 for p in item.parts)
        elif item.type == "tool_call":
            chars += len(item.arguments) + len(item.name)
        elif item.type == "reasoning":
            chars += sum(len(s) for s in item.summary)
    return chars // CHARS_PER_TOKEN


def _count_of(value: Any, kind: str, default: dict[str, Any], path: str) -> int:
    value = default if value is None else value
    if (not isinstance(value, dict) or value.get("type") != kind or not isinstance(value.get("value"), int)
            or isinstance(value.get("value"), bool)):
        raise MalformedRequest(f"{path} must be {{\"type\": \"{kind}\", \"value\": <integer>}}", param=path)
    return int(value["value"])


def _clear_tool_uses(edit: dict[str, Any], items: list[Item], system: list[str], tools: list[Tool],
                     path: str, report: Report) -> list[Item]:
    report.drop_unread(edit, _CLEAR_TOOL_USES_KEYS, path)
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    calls = [item for item in items if item.type == "tool_call"]
    if isinstance(trigger, dict) and trigger.get("type") == "tool_uses":
        passed = len(calls) > _count_of(trigger, "tool_uses", DEFAULT_TRIGGER, f"{path}.trigger")
    else:
        limit = _count_of(trigger, "input_tokens", DEFAULT_TRIGGER, f"{path}.trigger")
        passed = estimate_tokens(items, system, tools) > limit
    if not passed:
        return items
    keep = _count_of(edit.get("keep"), "tool_uses", {"type": "tool_uses", "value": DEFAULT_KEEP_TOOL_USES},
                     f"{path}.keep")
    exclude = edit.get("exclude_tools") or []
    inputs = edit.get("clear_tool_inputs") or False
    if not isinstance(exclude, list) or not isinstance(inputs, (bool, list)):
        raise MalformedRequest(f"{path}: exclude_tools must be an array, clear_tool_inputs a boolean or an "
                               "array", param=path)
    old = calls[: max(len(calls) - keep, 0)]
    cleared = {c.call_id: c for c in old if c.name not in set(map(str, exclude))}
    if not cleared:
        return items
    freed = 0
    out: list[Item] = []
    for item in items:
        if item.type == "tool_result" and item.call_id in cleared:
            freed += sum(len(p.text) if p.type == "text" else 1000 for p in item.parts)
            item = ToolResult(kind=item.kind, call_id=item.call_id, parts=[Text(text=CLEARED)],
                              origin=item.origin)
        elif item.type == "tool_call" and item.call_id in cleared and (
                inputs is True or (isinstance(inputs, list) and item.name in inputs)):
            freed += len(item.arguments)
            item = ToolCall(kind=item.kind, call_id=item.call_id, name=item.name, namespace=item.namespace,
                            arguments="{}", origin=item.origin)
        out.append(item)
    if edit.get("clear_at_least") is not None:
        least = _count_of(edit["clear_at_least"], "input_tokens", {}, f"{path}.clear_at_least")
        if freed // CHARS_PER_TOKEN < least:
            return items
    report.note(f"context management: the results of {len(cleared)} earlier tool use(s) cleared "
                f"(tokens estimated at {CHARS_PER_TOKEN} characters each; {path})")
    return out

