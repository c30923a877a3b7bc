"""IR history -> alternating user/assistant turns of content blocks, the conversation shape that
Anthropic Messages and Bedrock Converse share for Claude, and Bedrock for every model
(docs/anthropic.md "Conversation rules"; docs/bedrock.md "Request").

One walk serves both: consecutive same-role blocks merge into one turn (Anthropic merges them
itself; Bedrock demands strict alternation), `pairing.pair` already put every result right after
its calls, so all results of a step land in one user turn, and reasoning is replayed only where
the dialect can take it back. Only the blocks differ, and each dialect writes its own (`Blocks`).
"""

from __future__ import annotations

from typing import Any, Protocol

from translators.core.report import Report
from translators.ir.request import Part, Reasoning, Request, ToolCall, ToolResult, WebSearchCall

Turn = dict[str, Any]
"""`{"role": "user" | "assistant", "content": [block, ...]}` in both dialects."""


class Blocks(Protocol):
    """One dialect's content blocks."""

    def parts(self, parts: list[Part], role: str) -> list[dict[str, Any]]:
        """A message's parts (or none, for parts the dialect cannot carry in that role)."""
        ...

    def reasoning(self, item: Reasoning) -> dict[str, Any] | None:
        """The signed reasoning block to replay, or None when this dialect cannot take it back."""
        ...

    def tool_call(self, item: ToolCall) -> dict[str, Any]: ...

    def tool_result(self, item: ToolResult) -> dict[str, Any]: ...

    def web_search(self, item: WebSearchCall) -> list[dict[str, Any]]:
        """A search the vendor ran itself, as its own blocks (only the vendor that ran it gets it)."""
        ...

    def is_reasoning(self, block: dict[str, Any]) -> bool: ...

    def is_tool_result(self, block: dict[str, Any]) -> bool: ...


def alternate(request: Request, blocks: Blocks, thinking: bool, report: Report) -> list[Turn]:
    turns: list[Turn] = []
    role = ""
    """The last turn's role."""
    content: list[dict[str, Any]] = []
    """The last turn's blocks."""
    for item in request.items:
        kind = item.type
        if kind == "tool_call":
            added, speaker = [blocks.tool_call(item)], "assistant"
        elif kind == "tool_result":
            added, speaker = [blocks.tool_result(item)], "user"
        elif kind == "message":
            if item.phase is not None:
                report.drop(f"{item.origin}.phase", "cosmetic")  # report.COSMETIC's input[*].phase
            speaker = "assistant" if item.role == "assistant" else "user"
            added = blocks.parts(item.parts, speaker)
        elif kind == "reasoning":
            block = blocks.reasoning(item) if thinking else None
            if block is None:
                report.drop(item.origin)
                continue
            added, speaker = [block], "assistant"
        elif kind == "web_search":
            added, speaker = blocks.web_search(item), "assistant"
        else:
            continue
        if not added:
            continue
        # consecutive blocks of one role are one turn
        if speaker == role:
            content.extend(added)
        else:
            role, content = speaker, added
            turns.append({"role": role, "content": content})
    return turns


def with_thinking(request: Request, blocks: Blocks, thinking: dict[str, Any] | None,
                  report: Report) -> tuple[list[Turn], dict[str, Any] | None]:
    """The turns, and the thinking configuration that may go with them.

    Claude with thinking rejects a tool loop whose calling assistant turn does not open with its
    signed reasoning ("Expected `thinking` or `redacted_thinking`", docs/anthropic.md "Conversation rules",
    docs/field-notes.md "Thinking replay errors"; the same
    model behind Bedrock), so inside such a loop thinking is turned off for this request; earlier,
    finished turns may lose theirs.
    """
    turns = alternate(request, blocks, thinking is not None, report)
    # adaptive thinking may skip thinking on any turn, so a tool turn without it is valid there
    if thinking is None or thinking.get("type") != "enabled" or not _unsigned_tool_turn(turns, blocks):
        return turns, thinking
    report.note("thinking turned off: the open tool turn carries no signed reasoning to replay")
    report.drop("reasoning.effort")
    return alternate(request, blocks, False, report), None


def _unsigned_tool_turn(turns: list[Turn], blocks: Blocks) -> bool:
    if len(turns) < 2 or turns[-1]["role"] != "user":
        return False
    if not any(blocks.is_tool_result(block) for block in turns[-1]["content"]):
        return False
    return not blocks.is_reasoning(turns[-2]["content"][0])
