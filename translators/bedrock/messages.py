"""IR items -> Converse `messages` (docs/bedrock.md "Request", "Tool names and ids").

Bedrock wants strict user/assistant alternation starting with a user turn ("A conversation must
alternate between user and assistant roles", docs/bedrock.md "Request"): `turns` merges same-role blocks into
one
message, this module writes Converse's blocks and opens with a user turn where the history does
not. Images travel only as inline bytes in user turns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from translators.bedrock import caching, documents
from translators.bedrock.models import is_claude
from translators.core.report import Report
from translators.families.claude import turns
from translators.features import toolset, vendor_state
from translators.features.naming import fnv1a_32
from translators.ir.request import Image, Part, Reasoning, Request, ToolCall, ToolResult, WebSearchCall

# ImageFormat enum of the service model (docs/bedrock.md "Request").
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif",
                 "image/webp": "webp"}
_TOOL_USE_ID = re.compile(r"[^A-Za-z0-9_.:-]")
TOOL_USE_ID_MAX = 64
NO_OUTPUT = "(no output)"
OPENING_TURN = "(conversation continues)"


def tool_use_id(call_id: str) -> str:
    """`ToolUseId` is `[a-zA-Z0-9_.:-]{1,64}` (docs/bedrock.md "Tool names and ids"). Valid ids pass
    unchanged; others get a hash
    of the original so two ids never fold into one, and the same id maps alike on every turn."""
    if call_id and len(call_id) <= TOOL_USE_ID_MAX and not _TOOL_USE_ID.search(call_id):
        return call_id
    clean = _TOOL_USE_ID.sub("_", call_id)
    return f"{clean[: TOOL_USE_ID_MAX - 9]}_{fnv1a_32(call_id)}"


@dataclass(frozen=True, slots=True)
class _Blocks:
    """Converse content blocks for `turns` (docs/bedrock.md "Request", "Tool names and ids")."""

    tools: toolset.Toolset
    report: Report
    writer: documents.Documents | None
    """Writes the document blocks (one name per document in the whole request); None: the model
    reads no documents, each is reported dropped."""
    error_status: bool = False
    """The model takes `toolResult.status` (`takes_status`); else an error result's text is marked."""

    def parts(self, parts: list[Part], role: str) -> list[dict[str, Any]]:
        return _parts(parts, self.report, media=role == "user", writer=self.writer)

    def reasoning(self, item: Reasoning) -> dict[str, Any] | None:
        """Only Bedrock's own signed reasoning can be replayed: the signature covers the exact text."""
        state = vendor_state.replayable(item.state, "bedrock")
        if state is None:
            return None
        if state.redacted:
            return {"reasoningContent": {"redactedContent": state.redacted}}
        text = {"text": state.text or "", "signature": state.signature}
        return {"reasoningContent": {"reasoningText": text}}

    def tool_call(self, item: ToolCall) -> dict[str, Any]:
        return caching.mark({"toolUse": {"toolUseId": tool_use_id(item.call_id),
                                         "name": self.tools.wire(item.namespace, item.name),
                                         "input": toolset.call_input(item, self.report)}}, item.cache)

    def web_search(self, item: WebSearchCall) -> list[dict[str, Any]]:
        return []  # Converse has no server tools: websearch.prepare keeps no search for Bedrock

    def tool_result(self, item: ToolResult) -> dict[str, Any]:
        parts = item.parts if self.error_status else toolset.result_parts(item, self.report)
        content = _parts(parts, self.report, media=True, writer=self.writer)
        result: dict[str, Any] = {"toolUseId": tool_use_id(item.call_id),
                                  "content": content or [{"text": NO_OUTPUT}]}
        if item.is_error and self.error_status:
            result["status"] = "error"
        return caching.mark({"toolResult": result}, item.cache)

    def is_reasoning(self, block: dict[str, Any]) -> bool:
        return "reasoningContent" in block

    def is_tool_result(self, block: dict[str, Any]) -> bool:
        return "toolResult" in block


def takes_status(model: str) -> bool:
    """`toolResult.status` "is only supported by Amazon Nova and Anthropic Claude 3 and 4 models"
    (botocore's `ToolResultBlock`); another model refuses the request that carries it."""
    name = model.lower()
    return is_claude(model) or "amazon.nova" in name


def build(request: Request, tools: toolset.Toolset, thinking: dict[str, Any] | None, report: Report, *,
          reads_documents: bool = True,
          error_status: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The Converse `messages`, and the thinking configuration that may go with them.
    `reads_documents`: the model takes document blocks (its `pdf_input`); `error_status`: it takes
    `toolResult.status` (`takes_status`)."""
    writer = documents.Documents(report) if reads_documents else None
    blocks = _Blocks(tools, report, writer, error_status)
    messages, thinking = turns.with_thinking(request, blocks, thinking, report)
    if messages and messages[0]["role"] != "user":
        report.note(f"Bedrock conversations must open with a user turn: a {OPENING_TURN!r} user turn "
                    "was added")
        messages.insert(0, {"role": "user", "content": [{"text": OPENING_TURN}]})
    return messages, thinking


def _parts(parts: list[Part], report: Report, *, media: bool,
           writer: documents.Documents | None) -> list[dict[str, Any]]:
    """`media`: images and documents may go here (user turns and tool results only, docs/bedrock.md
    "Request")."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.type == "text":
            if part.text.strip():  # Bedrock rejects blank text blocks
                blocks.append(caching.mark({"text": part.text}, part.cache))
            elif part.cache is not None:
                report.drop(part.cache.origin, kind="cosmetic")  # a blank text takes no point
            continue
        if not media:
            report.drop(part.origin)  # images and documents go in user turns only
            continue
        if part.type == "image":
            block = _image(part, report)
        elif writer is not None:
            block = writer.block(part)
        else:
            block = None
            report.drop(part.origin)  # the model reads no documents (its capabilities)
        if block is not None:
            blocks.append(caching.mark(block, part.cache))
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
