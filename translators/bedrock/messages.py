"""IR items -> Converse `messages` (notes/dialects.md §D.2, §D.5).

Bedrock wants strict user/assistant alternation starting with a user turn ("A conversation must
alternate between user and assistant roles", §D.2), so consecutive same-role blocks are merged
into one message; `pairing.pair` already put every result right after its calls, so all results
of a step land first in one user message. Images travel only as inline bytes in user turns.
"""

from __future__ import annotations

import re
from typing import Any

from translators import toolset, vendor_state
from translators.ir.request import Image, Part, Reasoning, Request, Text
from translators.naming import fnv1a_32
from translators.report import Report

# ImageFormat enum of the service model (§D.2).
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif",
                 "image/webp": "webp"}
_TOOL_USE_ID = re.compile(r"[^A-Za-z0-9_.:-]")
TOOL_USE_ID_MAX = 64
NO_OUTPUT = "(no output)"
OPENING_TURN = "(conversation continues)"


def tool_use_id(call_id: str) -> str:
    """`ToolUseId` is `[a-zA-Z0-9_.:-]{1,64}` (§D.5). Valid ids pass unchanged; others get a hash
    of the original so two ids never fold into one, and the same id maps alike on every turn."""
    if call_id and len(call_id) <= TOOL_USE_ID_MAX and not _TOOL_USE_ID.search(call_id):
        return call_id
    clean = _TOOL_USE_ID.sub("_", call_id)
    return f"{clean[: TOOL_USE_ID_MAX - 9]}_{fnv1a_32(call_id)}"


def build(request: Request, tools: toolset.Toolset, thinking: bool, report: Report) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for item in request.items:
        if item.type == "message":
            if item.phase is not None:
                report.drop(f"{item.origin}.phase")
            assistant = item.role == "assistant"
            add("assistant" if assistant else "user", _parts(item.parts, report, images=not assistant))
        elif item.type == "reasoning":
            block = reasoning_block(item) if thinking else None
            if block is None:
                report.drop(item.origin)
            else:
                add("assistant", [block])
        elif item.type == "tool_call":
            add("assistant", [{"toolUse": {"toolUseId": tool_use_id(item.call_id),
                                           "name": tools.wire(item.namespace, item.name),
                                           "input": toolset.call_input(item, report)}}])
        elif item.type == "tool_result":
            content = _parts(item.parts, report, images=True)
            add("user", [{"toolResult": {"toolUseId": tool_use_id(item.call_id),
                                         "content": content or [{"text": NO_OUTPUT}]}}])
    if messages and messages[0]["role"] != "user":
        report.note(f"Bedrock conversations must open with a user turn: a {OPENING_TURN!r} user turn "
                    "was added")
        messages.insert(0, {"role": "user", "content": [{"text": OPENING_TURN}]})
    return messages


def reasoning_block(item: Reasoning) -> dict[str, Any] | None:
    """Only Bedrock's own signed reasoning can be replayed: the signature covers the exact text."""
    state = vendor_state.replayable(item.state, "bedrock")
    if state is None:
        return None
    if state.redacted:
        return {"reasoningContent": {"redactedContent": state.redacted}}
    return {"reasoningContent": {"reasoningText": {"text": state.text or "", "signature": state.signature}}}


def _parts(parts: list[Part], report: Report, *, images: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            if part.text.strip():  # Bedrock rejects blank text blocks
                blocks.append({"text": part.text})
        elif isinstance(part, Image):
            block = _image(part, report) if images else None
            if block is not None:
                blocks.append(block)
            elif not images:
                report.drop(part.origin)  # images are accepted in user turns only (§D.2)
    return blocks


def _image(part: Image, report: Report) -> dict[str, Any] | None:
    inline = part.inline
    image_format = IMAGE_FORMATS.get(inline[0].lower()) if inline else None
    if inline is None or image_format is None:
        report.drop(part.origin)
        why = f"of type {inline[0]}" if inline else "not inline base64 bytes (http(s) URLs cannot be sent)"
        report.note(f"{part.origin}: Bedrock takes png/jpeg/gif/webp bytes only; the image was {why}")
        return None
    if part.detail not in (None, "auto"):
        report.drop(f"{part.origin}.detail")
    return {"image": {"format": image_format, "source": {"bytes": inline[1]}}}


def unsigned_tool_turn(messages: list[dict[str, Any]]) -> bool:
    """Claude with thinking rejects a tool loop whose calling assistant turn does not open with
    its signed reasoning (Anthropic rule, §A.3; the same model behind Bedrock). Earlier, finished
    turns may lose theirs."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    if not any("toolResult" in block for block in messages[-1]["content"]):
        return False
    return "reasoningContent" not in messages[-2]["content"][0]
