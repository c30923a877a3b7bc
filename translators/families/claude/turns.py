"""IR history -> alternating user/assistant turns of content blocks, the conversation shape that
Anthropic Messages and Bedrock Converse share for Claude, and Bedrock for every model
(docs/anthropic.md "Conversation rules"; docs/bedrock.md "Request").

One walk serves both: consecutive same-role blocks merge into one turn (Anthropic merges them
itself; Bedrock demands strict alternation), `pairing.pair` already put every result right after
its calls, so all results of a step land in one user turn, and reasoning is replayed only where
the dialect can take it back. Only the blocks differ, and each dialect writes its own (`Blocks`).

A request translated with the client's `ItemCache` (`Request._reuse`) holds the very IR items its
earlier requests held; a dialect whose blocks say what they depend on (`Reusing.reuse_key`) gets
back, for such an item, a copy of the blocks it wrote then, and its report entries again, instead
of writing them once more (docs/benchmarks.md "Request translation over a session").
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any, Protocol

from translators.core.report import Report
from translators.ir.request import Message, Part, Reasoning, Request, ToolCall, ToolResult, WebSearchCall

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


class Reusing(Blocks, Protocol):
    """Blocks whose writer may take back what it wrote for the very same IR item on an earlier
    request of the client (`Request._reuse`, the client's `ItemCache`): a dataclass with a
    `report`, whose blocks depend on nothing but the item and what `reuse_key` names."""

    report: Report

    def reuse_key(self, item: ToolCall | ToolResult | Message) -> Hashable:
        """What this request's blocks of `item` depend on besides the item (a tool's wire name,
        whether the model reads images)."""
        ...


def alternate(request: Request, blocks: Blocks, thinking: bool, report: Report) -> list[Turn]:
    turns: list[Turn] = []
    role = ""
    """The last turn's role."""
    content: list[dict[str, Any]] = []
    """The last turn's blocks."""
    reuse = request._reuse if getattr(blocks, "reuse_key", None) is not None else None
    for item in request.items:
        kind = item.type
        if kind == "tool_call":
            speaker = "assistant"
            added = _call(blocks, item) if reuse is None else _again(reuse, blocks, item, report, _call)
        elif kind == "tool_result":
            speaker = "user"
            added = _result(blocks, item) if reuse is None else _again(reuse, blocks, item, report, _result)
        elif kind == "message":
            if item.phase is not None:
                report.drop(f"{item.origin}.phase", "cosmetic")  # report.COSMETIC's input[*].phase
            speaker = "assistant" if item.role == "assistant" else "user"
            added = _parts(blocks, item) if reuse is None else _again(reuse, blocks, item, report, _parts)
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


def _call(blocks: Any, item: Any) -> list[dict[str, Any]]:
    return [blocks.tool_call(item)]


def _result(blocks: Any, item: Any) -> list[dict[str, Any]]:
    return [blocks.tool_result(item)]


def _parts(blocks: Any, item: Any) -> list[dict[str, Any]]:
    return blocks.parts(item.parts, "assistant" if item.role == "assistant" else "user")  # type: ignore[no-any-return]


def _again(reuse: Any, blocks: Reusing, item: ToolCall | ToolResult | Message, report: Report,
           write: Callable[[Any, Any], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The blocks of `item`, taken back from the client's cache when this very item was written
    with the same `reuse_key` before (its report entries given again), else written and kept.
    Each block is a copy: the breakpoints placed later (anthropic/caching.py) go on this request's
    blocks only."""
    context = (type(blocks), blocks.reuse_key(item))
    memo = reuse.written
    found = memo.get(id(item))
    if found is None or found[0] is not item or found[1] != context:
        recorder = Report()
        written = write(replace(blocks, report=recorder), item)  # type: ignore[type-var]
        cosmetic = set(recorder.cosmetic)
        dropped = tuple((path, "cosmetic" if path in cosmetic else "lossy") for path in recorder.dropped)
        found = (item, context, tuple(written), dropped, tuple(recorder.notes))
        reuse.keep_written(id(item), found)
    if found[3] or found[4]:
        for path, kind in found[3]:
            report.drop(path, kind)
        for note in found[4]:
            report.note(note)
    return [dict(block) for block in found[2]]


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
